/// A failed keychain operation: Apple's status, and a detail that names what was wrong (the attribute
/// key, the file, the limit) — never a secret or an attribute value.
///
/// ```swift
/// do {
///     try database.add(item, caller: caller)
/// } catch KeychainError.duplicateItem {
///     ...   // errors match by status, as GRDB's DatabaseError matches by result code
/// }
/// ```
public struct KeychainError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Apple's status code.
    public let status: KeychainStatus
    /// What exactly was wrong, when there is more to say than Apple's message.
    public let detail: String?
    /// A finer cause within the status, named by the module that threw it (`sync.deviceRemoved`), for a
    /// front end that tells causes apart — the command line's exit statuses for sync. Not part of
    /// equality: two errors are equal when their status and detail are.
    package let reason: String?

    /// Creates an error with a status and an optional detail.
    public init(_ status: KeychainStatus, _ detail: String? = nil) {
        self.init(status, detail, reason: nil)
    }

    /// Creates an error with a status, a detail and a finer cause.
    package init(_ status: KeychainStatus, _ detail: String?, reason: String?) {
        self.status = status
        self.detail = detail
        self.reason = reason
    }

    /// Equal when the status and the detail are (the reason is not compared).
    public static func == (lhs: KeychainError, rhs: KeychainError) -> Bool {
        lhs.status == rhs.status && lhs.detail == rhs.detail
    }

    /// Hashes the status and the detail, as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(detail)
    }

    /// Apple's message, followed by the detail: `One or more parameters ... were not valid. (acct: ...)`.
    public var message: String {
        guard let detail, !detail.isEmpty else { return status.message }
        return "\(status.message) (\(detail))"
    }

    /// The message with the status value, for logs.
    public var description: String { "\(message) [\(status.name) \(status.rawValue)]" }
}

extension KeychainError {
    package static func param(_ detail: String) -> KeychainError { KeychainError(.param, detail) }
    package static func decode(_ detail: String) -> KeychainError { KeychainError(.decode, detail) }
    package static func locked(_ detail: String) -> KeychainError { KeychainError(.interactionNotAllowed, detail) }
}
