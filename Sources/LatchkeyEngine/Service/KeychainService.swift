public import FoundationEssentials

/// The keychain's operations for one caller: the one seam the friendly API, the SecItem functions and the
/// command line use. It has one requirement, `perform(_:)`, which runs a `KeychainRequest`;
/// `LocalKeychainService` executes requests in this process over a `KeychainDatabase`, the agent's client
/// carries them to `latchkeyd` (which executes them with a `LocalKeychainService` of its own), and the
/// `Latchkey` library's automatic service only chooses where each goes. The typed methods (`add`,
/// `copyMatching`, …) are conveniences that build a request and unpack its reply. The Apple-style
/// dictionaries of `SecItem…` are decoded at the edge, before a request reaches a service.
///
/// ```swift
/// let service = LocalKeychainService(database: keychain, caller: CallerIdentity(applicationIdentifier: "com.example.app"))
/// try service.add(NewItem(.genericPassword, attributes: [.service: .string("mail"), .account: .string("alice")],
///                         data: Data("hunter2".utf8)), returning: [])
/// ```
public protocol KeychainService: Sendable {
    /// Runs one request for this service's caller: its reply on success (the case the request names), else
    /// the failure with Apple's status.
    func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply
}

extension KeychainService {
    /// Adds an item (`SecItemAdd`); returns what `returning` asks for.
    public func add(_ item: NewItem, returning: ReturnOptions) throws(KeychainError) -> ItemResult? {
        guard case .item(let result) = try perform(.add(item, returning: returning)) else {
            throw KeychainReply.mismatch
        }
        return result
    }

    /// Finds items (`SecItemCopyMatching`): `errSecItemNotFound` when nothing matches.
    public func copyMatching(_ query: ItemQuery) throws(KeychainError) -> [ItemResult] {
        guard case .items(let items) = try perform(.copyMatching(query)) else { throw KeychainReply.mismatch }
        return items
    }

    /// Lists the items `query` names without opening any (`KeychainRequest.locate`): each with whether it is
    /// readable now.
    public func locate(_ query: ItemQuery) throws(KeychainError) -> [LocatedItem] {
        guard case .located(let found) = try perform(.locate(query)) else { throw KeychainReply.mismatch }
        return found
    }

    /// Updates every match (`SecItemUpdate`); returns how many changed.
    public func update(_ query: ItemQuery, with changes: ItemChanges) throws(KeychainError) -> Int {
        guard case .count(let count) = try perform(.update(query, changes)) else { throw KeychainReply.mismatch }
        return count
    }

    /// Deletes every match (`SecItemDelete`); returns how many went.
    public func delete(_ query: ItemQuery) throws(KeychainError) -> Int {
        guard case .count(let count) = try perform(.delete(query)) else { throw KeychainReply.mismatch }
        return count
    }

    /// Adds the item or, when its primary key is taken, updates that item, in one transaction; true when added.
    public func addOrUpdate(_ item: NewItem) throws(KeychainError) -> Bool {
        guard case .flag(let added) = try perform(.addOrUpdate(item)) else { throw KeychainReply.mismatch }
        return added
    }

    /// Finds identities (`kSecClassIdentity`): each certificate `certificates` matches (it must ask for
    /// attributes), in its order, with the first private key whose application label is the certificate's
    /// public key hash and which `keys` matches (its filters, and what it returns; its limit is ignored) —
    /// at most `limit` of them. Certificates without such a key are left out; none found is an empty array.
    public func copyIdentities(certificates: ItemQuery, keys: ItemQuery, limit: Int?) throws(KeychainError)
        -> [IdentityMatch]
    {
        guard
            case .identities(let matches) = try perform(
                .copyIdentities(certificates: certificates, keys: keys, limit: limit))
        else {
            throw KeychainReply.mismatch
        }
        return matches
    }

    /// Makes a private key the keychain holds and never hands out (`HeldKeyRequest`; through the agent, it
    /// is made and kept inside `latchkeyd`); returns what `returning` asks for, its data being the public key.
    public func createHeldKey(_ request: HeldKeyRequest, returning: ReturnOptions) throws(KeychainError) -> ItemResult?
    {
        guard case .item(let result) = try perform(.createHeldKey(request, returning: returning)) else {
            throw KeychainReply.mismatch
        }
        return result
    }

    /// Signs, decrypts or derives with the held key a persistent reference names (`KeyUse`).
    public func useHeldKey(_ reference: Data, for use: KeyUse) throws(KeychainError) -> Data {
        guard case .bytes(let bytes) = try perform(.useHeldKey(reference: reference, use: use)) else {
            throw KeychainReply.mismatch
        }
        return bytes
    }

    /// Forgets an ephemeral held key (its handle, from `createHeldKey` without `isPermanent`) now, as Apple
    /// frees a non-permanent key when its `SecKey` is released: `errSecItemNotFound` when the handle names no
    /// key of the caller's (any more), `errSecParam` for a reference that is not an ephemeral key's (delete a
    /// stored key with `delete`).
    public func releaseHeldKey(_ reference: Data) throws(KeychainError) {
        guard case .none = try perform(.releaseHeldKey(reference: reference)) else { throw KeychainReply.mismatch }
    }

    /// The lock state and who the service takes the caller for.
    public func status() throws(KeychainError) -> KeychainServiceStatus {
        guard case .status(let status) = try perform(.status) else { throw KeychainReply.mismatch }
        return status
    }

    /// Unlocks with the passphrase (`errSecAuthFailed` when it is wrong).
    public func unlock(with passphrase: Passphrase) throws(KeychainError) {
        guard case .none = try perform(.unlock(passphrase)) else { throw KeychainReply.mismatch }
    }

    /// Locks: items readable only while unlocked are unavailable until the next unlock.
    public func lock() throws(KeychainError) {
        guard case .none = try perform(.lock) else { throw KeychainReply.mismatch }
    }

    /// The lock settings stored in the keychain.
    public func settings() throws(KeychainError) -> KeychainSettings {
        guard case .settings(let settings) = try perform(.settings) else { throw KeychainReply.mismatch }
        return settings
    }

    /// Stores new lock settings; needs the passphrase.
    public func updateSettings(_ settings: KeychainSettings, passphrase: Passphrase) throws(KeychainError) {
        guard case .none = try perform(.updateSettings(settings, passphrase: passphrase)) else {
            throw KeychainReply.mismatch
        }
    }

    /// The registered applications (readable after the first unlock).
    public func registrations() throws(KeychainError) -> [ApplicationRegistration] {
        guard case .registrations(let registrations) = try perform(.listRegistrations) else {
            throw KeychainReply.mismatch
        }
        return registrations
    }

    /// Registers the executable at `path` as it is now; needs the passphrase. Returns the registration.
    public func register(
        executableAt path: String, applicationIdentifier: String, accessGroups: [String], passphrase: Passphrase
    )
        throws(KeychainError) -> ApplicationRegistration
    {
        let request = KeychainRequest.register(
            executablePath: path, applicationIdentifier: applicationIdentifier,
            accessGroups: accessGroups, passphrase: passphrase)
        guard case .registration(let registration) = try perform(request) else { throw KeychainReply.mismatch }
        return registration
    }

    /// Removes the registration of the executable at `path`; needs the passphrase. Whether there was one.
    public func unregister(executablePath path: String, passphrase: Passphrase) throws(KeychainError) -> Bool {
        guard case .flag(let removed) = try perform(.unregister(executablePath: path, passphrase: passphrase)) else {
            throw KeychainReply.mismatch
        }
        return removed
    }

    /// Items' access lists: the item `reference` names, or every item whose list names a program.
    public func accessLists(of reference: Data? = nil) throws(KeychainError) -> [ItemAccessList] {
        guard case .accessLists(let lists) = try perform(.accessLists(reference: reference)) else {
            throw KeychainReply.mismatch
        }
        return lists
    }

    /// Lets `program` read the item `reference` names; needs the passphrase. False when it could already.
    public func grantAccess(to program: TrustedProgram, onItem reference: Data, passphrase: Passphrase)
        throws(KeychainError) -> Bool
    {
        let request = KeychainRequest.grantAccess(program, reference: reference, passphrase: passphrase)
        guard case .flag(let added) = try perform(request) else { throw KeychainReply.mismatch }
        return added
    }

    /// Takes `program` off the list of the item `reference` names; needs the passphrase. Whether it was on it.
    public func revokeAccess(of program: TrustedProgram, onItem reference: Data, passphrase: Passphrase)
        throws(KeychainError) -> Bool
    {
        let request = KeychainRequest.revokeAccess(program, reference: reference, passphrase: passphrase)
        guard case .flag(let removed) = try perform(request) else { throw KeychainReply.mismatch }
        return removed
    }
}

extension KeychainReply {
    /// A reply of another case than its request names: a service that breaks the seam's contract.
    package static let mismatch = KeychainError(
        .internal, "the keychain service answered with a reply of the wrong shape")
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
