/// Keychain settings stored in the file (not secret), enforced by the agent.
public struct KeychainSettings: Hashable, Sendable {
    /// Lock after this many seconds without use; nil for never.
    public var autoLockAfterSeconds: Int?
    /// Lock when the system sleeps.
    public var lockOnSleep: Bool

    /// The auto-lock timeouts accepted: one second to 2,147,483,647 seconds (68 years; `security` takes a
    /// 32-bit number too).
    public static let autoLockRange: ClosedRange<Int> = 1...Int(Int32.max)

    /// Creates settings.
    public init(autoLockAfterSeconds: Int? = nil, lockOnSleep: Bool = false) {
        self.autoLockAfterSeconds = autoLockAfterSeconds
        self.lockOnSleep = lockOnSleep
    }

    /// `errSecParam` for a timeout outside `autoLockRange`. The engine checks this on every store, so the
    /// command line, the Swift API and the agent all give the same answer.
    public func validate() throws(KeychainError) {
        if let seconds = autoLockAfterSeconds, !Self.autoLockRange.contains(seconds) {
            throw KeychainError.param(
                "the auto-lock timeout must be between \(Self.autoLockRange.lowerBound) and \(Self.autoLockRange.upperBound) seconds, not \(seconds)"
            )
        }
    }
}
