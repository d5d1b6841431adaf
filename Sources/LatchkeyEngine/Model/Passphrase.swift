internal import LatchkeyCrypto

/// A keychain passphrase, held in locked, zeroized memory and never printed.
///
/// ```swift
/// let passphrase = Passphrase("correct horse battery staple")
/// ```
public struct Passphrase: Sendable, CustomStringConvertible {
    let bytes: SecureBytes

    /// The passphrase's UTF-8 bytes. (Swift may keep its own copy of `string`; prefer `init(bytes:)` with a
    /// buffer you wipe when the passphrase comes from a file or a prompt.)
    public init(_ string: String) {
        bytes = SecureBytes(copying: Array(string.utf8))
    }

    /// The passphrase as raw bytes.
    public init(bytes: [UInt8]) {
        self.bytes = SecureBytes(copying: bytes)
    }

    init(secureBytes: SecureBytes) { bytes = secureBytes }

    /// The passphrase copied from a buffer the caller wipes (a received message).
    package init(copying buffer: UnsafeRawBufferPointer) {
        bytes = SecureBytes(copying: buffer)
    }

    /// The length in bytes.
    public var byteCount: Int { bytes.count }

    /// Gives read access to the bytes for the duration of `body` (to send them to the agent); the pointer
    /// must not escape.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { buffer in try body(buffer) }
    }

    /// Always redacted.
    public var description: String { "Passphrase(redacted)" }
}

extension Passphrase: Equatable {
    /// Compares the bytes in constant time.
    public static func == (lhs: Passphrase, rhs: Passphrase) -> Bool { lhs.bytes.constantTimeEquals(rhs.bytes) }
}
