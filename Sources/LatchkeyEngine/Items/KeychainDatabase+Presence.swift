import FoundationEssentials

extension KeychainDatabase {
    /// Asks the user, through `presence`, to confirm the keychain passphrase for an operation on items whose
    /// access control asks them; `errSecInteractionNotAllowed` when no one can be asked. Never called inside
    /// a transaction: the user may take their time.
    func confirmPresence(
        caller: CallerIdentity, query: ValidatedQuery, presence: (any UserPresenceVerifier)?
    ) throws(KeychainError) {
        guard let presence else {
            throw KeychainError.locked("a matching item needs the user's confirmation, and there is no one to ask here")
        }
        let request = PresenceRequest(
            applicationIdentifier: caller.applicationIdentifier, operationPrompt: query.operationPrompt)
        try presence.confirm(request) { (passphrase) throws(KeychainError) in try self.verifyPassphrase(passphrase) }
    }
}
