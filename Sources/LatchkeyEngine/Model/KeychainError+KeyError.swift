package import LatchkeyPKI

extension KeychainError {
    /// A key operation's failure with the same Apple status and reason.
    package init(_ failure: KeyError) {
        self.init(KeychainStatus(rawValue: failure.kind.rawValue), failure.reason)
    }
}
