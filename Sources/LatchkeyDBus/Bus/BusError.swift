import LatchkeyPOSIX

/// A failed call on the system bus: the negative errno sd-bus returned and, for a method call, the D-Bus
/// error it carried.
package struct BusError: Error, CustomStringConvertible {
    /// What was being done ("connecting to the system bus", "org.freedesktop.login1.Manager.Inhibit").
    package let operation: String
    /// sd-bus's negative errno.
    package let code: Int32
    /// The D-Bus error's message, when the peer sent one.
    package let detail: String?

    package var description: String {
        "\(operation): \(detail ?? Errno(-code).description)"
    }
}
