import CSystemd
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

/// The system bus through libsystemd's sd-bus — the only file that calls libsystemd (module
/// `LatchkeyDBus` alone imports it). sd-bus objects are
/// not thread-safe: a `SystemBus` is made, used and dropped on one thread (it is not `Sendable`).
/// `DBUS_SYSTEM_BUS_ADDRESS` points it at another bus (the tests' private one).
package final class SystemBus {
    /// Holds a signal handler for as long as the bus lives; sd-bus keeps only a raw pointer to it.
    private final class Handler {
        let call: (Bool) -> Void
        init(_ call: @escaping (Bool) -> Void) { self.call = call }
    }

    private let bus: OpaquePointer
    private var handlers: [Unmanaged<Handler>] = []

    /// Connects to the system bus.
    package init() throws(BusError) {
        var opened: OpaquePointer?
        let code = sd_bus_open_system(&opened)
        guard code >= 0, let opened else { throw BusError(operation: "connecting to the system bus", code: code, detail: nil) }
        bus = opened
    }

    deinit {
        sd_bus_flush_close_unref(bus)
        for handler in handlers { handler.release() }
    }

    /// Calls `handler` with the first (boolean) argument of every signal `member` of `interface` that
    /// `sender` emits on `path`. The bus checks the sender: a signal from another peer is not delivered.
    package func onBooleanSignal(
        sender: String, path: String, interface: String, member: String, _ handler: @escaping (Bool) -> Void
    ) throws(BusError) {
        let rule = "type='signal',sender='\(sender)',path='\(path)',interface='\(interface)',member='\(member)'"
        let box = Unmanaged.passRetained(Handler(handler))
        let code = sd_bus_add_match(bus, nil, rule, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            var value: Int32 = 0
            // A signal without a boolean argument is ignored (returning 0 lets other matches see it).
            guard sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &value) > 0 else { return 0 }
            Unmanaged<Handler>.fromOpaque(userdata).takeUnretainedValue().call(value != 0)
            return 0
        }, box.toOpaque())
        guard code >= 0 else {
            box.release()
            throw BusError(operation: "watching \(interface).\(member)", code: code, detail: nil)
        }
        handlers.append(box)
    }

    /// Calls a method whose arguments are strings and whose reply is one file descriptor; returns a
    /// duplicate of that descriptor, which the caller owns and closes.
    package func callReturningFileDescriptor(
        destination: String, path: String, interface: String, member: String, arguments: [String]
    ) throws(BusError) -> Int32 {
        let operation = "\(interface).\(member)"
        var call: OpaquePointer?
        var code = sd_bus_message_new_method_call(bus, &call, destination, path, interface, member)
        guard code >= 0, let call else { throw BusError(operation: operation, code: code, detail: nil) }
        defer { sd_bus_message_unref(call) }
        for argument in arguments {
            code = argument.withCString { sd_bus_message_append_basic(call, CChar(UInt8(ascii: "s")), $0) }
            guard code >= 0 else { throw BusError(operation: operation, code: code, detail: nil) }
        }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        code = sd_bus_call(bus, call, 5_000_000, &error, &reply)
        guard code >= 0, let reply else {
            let detail = error.message.map { String(cString: $0) }
            throw BusError(operation: operation, code: code, detail: detail)
        }
        defer { sd_bus_message_unref(reply) }
        var descriptor: Int32 = -1
        code = sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "h")), &descriptor)
        guard code > 0, descriptor >= 0 else {
            throw BusError(operation: operation, code: code < 0 ? code : -Errno.badMessage.code,
                           detail: "the reply holds no file descriptor")
        }
        // The descriptor belongs to the reply, which is freed on return.
        do throws(Errno) {
            return try Descriptors.duplicate(descriptor)
        } catch {
            throw BusError(operation: operation, code: -error.code, detail: nil)
        }
    }

    /// Dispatches messages to the handlers as they arrive, until the connection fails.
    package func run() throws(BusError) -> Never {
        while true {
            let processed = sd_bus_process(bus, nil)
            guard processed >= 0 else { throw BusError(operation: "reading the system bus", code: processed, detail: nil) }
            if processed > 0 { continue }
            let waited = sd_bus_wait(bus, UInt64.max)
            guard waited >= 0 || waited == -Errno.interrupted.code else {
                throw BusError(operation: "waiting on the system bus", code: waited, detail: nil)
            }
        }
    }
}
