public import Foundation
/// The keychain's operations for one caller, typed: the one seam the friendly API, the SecItem functions
/// and the command line use. `LocalKeychainService` serves it in this process over a `KeychainDatabase`;
/// the agent serves it to other processes (the `Latchkey` library's `KeychainConnection` picks one). The
/// Apple-style dictionaries of `SecItem…` are decoded at the edge, before a request reaches a service.
///
/// ```swift
/// let service = LocalKeychainService(database: keychain, caller: CallerIdentity(applicationIdentifier: "com.example.app"))
/// try service.add(NewItem(.genericPassword, attributes: [.service: .string("mail"), .account: .string("alice")],
///                         data: Data("hunter2".utf8)), returning: [])
/// ```
public protocol KeychainService: Sendable {
    /// Adds an item (`SecItemAdd`); returns what `returning` asks for.
    func add(_ item: NewItem, returning: ReturnOptions) throws(KeychainError) -> ItemResult?
    /// Finds items (`SecItemCopyMatching`): `errSecItemNotFound` when nothing matches.
    func copyMatching(_ query: ItemQuery) throws(KeychainError) -> [ItemResult]
    /// Updates every match (`SecItemUpdate`); returns how many changed.
    func update(_ query: ItemQuery, with changes: ItemChanges) throws(KeychainError) -> Int
    /// Deletes every match (`SecItemDelete`); returns how many went.
    func delete(_ query: ItemQuery) throws(KeychainError) -> Int
    /// Adds the item or, when its primary key is taken, updates that item, in one transaction; true when added.
    func addOrUpdate(_ item: NewItem) throws(KeychainError) -> Bool
    /// Finds identities (`kSecClassIdentity`): each certificate `certificates` matches (it must ask for
    /// attributes), in its order, with the first private key whose application label is the certificate's
    /// public key hash and which `keys` matches (its filters, and what it returns; its limit is ignored) —
    /// at most `limit` of them. Certificates without such a key are left out; none found is an empty array.
    func copyIdentities(certificates: ItemQuery, keys: ItemQuery, limit: Int?) throws(KeychainError) -> [IdentityMatch]
    /// Makes a private key the keychain holds and never hands out (`HeldKeyRequest`; through the agent, it
    /// is made and kept inside `latchkeyd`); returns what `returning` asks for, its data being the public key.
    func createHeldKey(_ request: HeldKeyRequest, returning: ReturnOptions) throws(KeychainError) -> ItemResult?
    /// Signs, decrypts or derives with the held key a persistent reference names (`KeyUse`).
    func useHeldKey(_ reference: Data, for use: KeyUse) throws(KeychainError) -> Data
    /// Forgets an ephemeral held key (its handle, from `createHeldKey` without `isPermanent`) now, as Apple
    /// frees a non-permanent key when its `SecKey` is released: `errSecItemNotFound` when the handle names no
    /// key of the caller's (any more), `errSecParam` for a reference that is not an ephemeral key's (delete a
    /// stored key with `delete`).
    func releaseHeldKey(_ reference: Data) throws(KeychainError)

    /// The lock state and who the service takes the caller for.
    func status() throws(KeychainError) -> KeychainServiceStatus
    /// Unlocks with the passphrase (`errSecAuthFailed` when it is wrong).
    func unlock(with passphrase: Passphrase) throws(KeychainError)
    /// Locks: items readable only while unlocked are unavailable until the next unlock.
    func lock() throws(KeychainError)

    /// The lock settings stored in the keychain.
    func settings() throws(KeychainError) -> KeychainSettings
    /// Stores new lock settings; needs the passphrase.
    func updateSettings(_ settings: KeychainSettings, passphrase: Passphrase) throws(KeychainError)
    /// The registered applications (readable after the first unlock).
    func registrations() throws(KeychainError) -> [ApplicationRegistration]
    /// Registers the executable at `path` as it is now; needs the passphrase. Returns the registration.
    func register(executableAt path: String, applicationIdentifier: String, accessGroups: [String], passphrase: Passphrase)
        throws(KeychainError) -> ApplicationRegistration
    /// Removes the registration of the executable at `path`; needs the passphrase. Whether there was one.
    func unregister(executablePath path: String, passphrase: Passphrase) throws(KeychainError) -> Bool
}

/// Who a service takes its caller for.
public enum CallerStanding: Hashable, Sendable, CustomStringConvertible {
    /// In this process: the identity the service was made with.
    case identified(CallerIdentity)
    /// Through the agent: a registered program, with its registration's identity.
    case registered(CallerIdentity)
    /// Through the agent: a program it does not know. It serves such a program nothing but status, unlock
    /// and lock; the program opens the keychain itself, with the passphrase.
    case unregistered
    /// Through the agent: refused, and why (a binary changed since it was registered, an unreadable one).
    case refused(String)
    /// Through the agent before its first unlock: the registrations are sealed under the passphrase.
    case unknownUntilFirstUnlock

    /// The identity requests run with, when there is one.
    public var identity: CallerIdentity? {
        switch self {
        case .identified(let identity), .registered(let identity): identity
        case .unregistered, .refused, .unknownUntilFirstUnlock: nil
        }
    }

    /// `registered`, `unregistered`, `refused`, `unknown until the first unlock`, `in process`.
    public var description: String {
        switch self {
        case .identified: "in process"
        case .registered: "registered"
        case .unregistered: "unregistered"
        case .refused: "refused"
        case .unknownUntilFirstUnlock: "unknown until the first unlock"
        }
    }
}

extension CallerStanding {
    /// Whether the agent serves item requests of a program it describes so: a registered one, and any before
    /// its first unlock (whose answer, "not unlocked since it started", is then the honest one).
    package var agentServes: Bool {
        switch self {
        case .registered, .unknownUntilFirstUnlock: true
        case .identified, .unregistered, .refused: false
        }
    }
}

/// What a service says about the keychain and the caller.
public struct KeychainServiceStatus: Hashable, Sendable {
    /// The keychain's lock state.
    public let lockState: LockState
    /// The keychain file (nil for an in-memory keychain).
    public let keychainPath: String?
    /// The agent's process id, when the agent serves the keychain; nil in process.
    public let agentProcessIdentifier: Int32?
    /// Who the caller is taken for.
    public let caller: CallerStanding

    /// Creates a status.
    public init(lockState: LockState, keychainPath: String?, agentProcessIdentifier: Int32?, caller: CallerStanding) {
        self.lockState = lockState
        self.keychainPath = keychainPath
        self.agentProcessIdentifier = agentProcessIdentifier
        self.caller = caller
    }
}
