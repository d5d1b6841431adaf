public import Foundation
/// `KeychainService` in this process: a `KeychainDatabase` you opened, used as `caller`.
public struct LocalKeychainService: KeychainService {
    /// The keychain.
    public let database: KeychainDatabase
    /// Who the operations run for.
    public let caller: CallerIdentity
    /// Who asks the user to confirm before an item whose access control asks them is read or changed (nil:
    /// nobody, so such requests fail with `errSecInteractionNotAllowed`).
    public let presence: (any UserPresenceVerifier)?
    /// For a service run for another process (the agent's, for a client): whether that process has ended. An
    /// ephemeral held key made through this service goes when it has. Nil: the caller is this process.
    package var holderEnded: (@Sendable () -> Bool)?

    /// A service over `database` for `caller`, asking the user through `presence`.
    public init(database: KeychainDatabase, caller: CallerIdentity, presence: (any UserPresenceVerifier)? = nil) {
        self.database = database
        self.caller = caller
        self.presence = presence
    }

    public func add(_ item: NewItem, returning: ReturnOptions) throws(KeychainError) -> ItemResult? {
        try database.add(item, caller: caller, returning: returning)
    }

    public func copyMatching(_ query: ItemQuery) throws(KeychainError) -> [ItemResult] {
        try database.copyMatching(query, caller: caller, presence: presence)
    }

    public func update(_ query: ItemQuery, with changes: ItemChanges) throws(KeychainError) -> Int {
        try database.update(query, with: changes, caller: caller, presence: presence)
    }

    public func delete(_ query: ItemQuery) throws(KeychainError) -> Int { try database.delete(query, caller: caller) }

    public func addOrUpdate(_ item: NewItem) throws(KeychainError) -> Bool { try database.addOrUpdate(item, caller: caller, presence: presence) }

    public func createHeldKey(_ request: HeldKeyRequest, returning: ReturnOptions) throws(KeychainError) -> ItemResult? {
        try database.createHeldKey(request, caller: caller, returning: returning, holderEnded: holderEnded)
    }

    public func useHeldKey(_ reference: Data, for use: KeyUse) throws(KeychainError) -> Data {
        try database.useHeldKey(reference, for: use, caller: caller, presence: presence)
    }

    public func releaseHeldKey(_ reference: Data) throws(KeychainError) { try database.releaseHeldKey(reference, caller: caller) }

    public func status() throws(KeychainError) -> KeychainServiceStatus {
        KeychainServiceStatus(lockState: database.lockState, keychainPath: database.path, agentProcessIdentifier: nil,
                              caller: .identified(caller))
    }

    public func unlock(with passphrase: Passphrase) throws(KeychainError) { try database.unlock(with: passphrase) }

    public func lock() throws(KeychainError) { database.lock() }

    public func settings() throws(KeychainError) -> KeychainSettings { try database.settings }

    public func updateSettings(_ settings: KeychainSettings, passphrase: Passphrase) throws(KeychainError) {
        try settings.validate()
        try database.verifyPassphrase(passphrase)
        try database.updateSettings(settings)
    }

    public func registrations() throws(KeychainError) -> [ApplicationRegistration] { try database.registeredApplications() }

    public func register(executableAt path: String, applicationIdentifier: String, accessGroups: [String], passphrase: Passphrase)
        throws(KeychainError) -> ApplicationRegistration
    {
        let registration = try ApplicationRegistration(executableAt: path, applicationIdentifier: applicationIdentifier,
                                                       accessGroups: accessGroups)
        try database.register(registration, passphrase: passphrase)
        return registration
    }

    public func unregister(executablePath path: String, passphrase: Passphrase) throws(KeychainError) -> Bool {
        try database.unregister(executablePath: path, passphrase: passphrase)
    }
}
