import FoundationEssentials

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

    /// Executes the request on `database` as `caller`.
    public func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        switch request {
        case .add(let item, let returning):
            return .item(try database.add(item, caller: caller, returning: returning))
        case .copyMatching(let query):
            return .items(try database.copyMatching(query, caller: caller, presence: presence))
        case .locate(let query):
            return .located(
                try database.locate(query, caller: caller).map {
                    LocatedItem(reference: $0.reference, isAvailable: $0.available)
                })
        case .update(let query, let changes):
            return .count(try database.update(query, with: changes, caller: caller, presence: presence))
        case .delete(let query):
            return .count(try database.delete(query, caller: caller))
        case .addOrUpdate(let item):
            return .flag(try database.addOrUpdate(item, caller: caller, presence: presence))
        case .copyIdentities(let certificates, let keys, let limit):
            return .identities(try joinedIdentities(certificates: certificates, keys: keys, limit: limit))
        case .createHeldKey(let held, let returning):
            return .item(
                try database.createHeldKey(held, caller: caller, returning: returning, holderEnded: holderEnded))
        case .importHeldKey(let key, let attributes, let returning):
            return .item(try database.addHeldKey(key, attributes: attributes, caller: caller, returning: returning))
        case .useHeldKey(let reference, let use):
            return .bytes(try database.useHeldKey(reference, for: use, caller: caller, presence: presence))
        case .releaseHeldKey(let reference):
            try database.releaseHeldKey(reference, caller: caller)
            return .none
        case .status:
            return .status(
                KeychainServiceStatus(
                    lockState: database.lockState, keychainPath: database.path, agentProcessIdentifier: nil,
                    caller: .identified(caller)))
        case .unlock(let passphrase):
            try database.unlock(with: passphrase)
            return .none
        case .lock:
            database.lock()
            return .none
        case .settings:
            return .settings(try database.settings)
        case .updateSettings(let settings, let passphrase):
            try settings.validate()
            try database.verifyPassphrase(passphrase)
            try database.updateSettings(settings)
            return .none
        case .listRegistrations:
            return .registrations(try database.registeredApplications())
        case .register(let path, let identifier, let groups, let passphrase):
            let registration = try ApplicationRegistration(
                executableAt: path, applicationIdentifier: identifier, accessGroups: groups)
            try database.register(registration, passphrase: passphrase)
            return .registration(registration)
        case .unregister(let path, let passphrase):
            return .flag(try database.unregister(executablePath: path, passphrase: passphrase))
        case .accessLists(let reference):
            return .accessLists(try database.accessLists(of: reference))
        case .grantAccess(let program, let reference, let passphrase):
            try program.validate()
            try database.verifyPassphrase(passphrase)
            return .flag(try database.grantAccess(to: program, onItem: reference, origin: .command))
        case .revokeAccess(let program, let reference, let passphrase):
            try database.verifyPassphrase(passphrase)
            return .flag(try database.revokeAccess(of: program, onItem: reference))
        }
    }
}
