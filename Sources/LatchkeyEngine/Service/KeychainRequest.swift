public import FoundationEssentials
public import LatchkeyPKI

/// One keychain operation as a value: what `KeychainService.perform(_:)` runs. The friendly API, the
/// `SecItem…` functions and the command line all end up here — in this process (`LocalKeychainService`) or
/// in the agent, which receives the same value over its socket (the agent protocol encodes it as it is).
public enum KeychainRequest: Sendable {
    /// Adds an item (`SecItemAdd`); replies `.item` with what `returning` asks for.
    case add(NewItem, returning: ReturnOptions)
    /// Finds items (`SecItemCopyMatching`); replies `.items`, or fails with `errSecItemNotFound`.
    case copyMatching(ItemQuery)
    /// Lists the items a query names without opening any — through the index alone, so a locked keychain's
    /// matches are listed as locked rather than hidden (the Secret Service's `SearchItems`); only indexed
    /// attributes can be matched (`errSecParam` otherwise). Replies `.located`, empty when none match. An
    /// entry is unproven until the item is read (`copyMatching`).
    case locate(ItemQuery)
    /// Updates every match (`SecItemUpdate`); replies `.count`.
    case update(ItemQuery, ItemChanges)
    /// Deletes every match (`SecItemDelete`); replies `.count`.
    case delete(ItemQuery)
    /// Adds the item or, when its primary key is taken, updates that item, in one transaction; replies
    /// `.flag` (true when added).
    case addOrUpdate(NewItem)
    /// Finds identities (`kSecClassIdentity`): each certificate `certificates` matches, with the first private
    /// key whose application label is its public key hash and which `keys` matches; replies `.identities`.
    case copyIdentities(certificates: ItemQuery, keys: ItemQuery, limit: Int?)
    /// Makes a private key the keychain holds and never hands out; replies `.item` (its data: the public key).
    case createHeldKey(HeldKeyRequest, returning: ReturnOptions)
    /// Stores a private key made elsewhere (an SSH key `ssh-add` hands over, one read from a key file) as a key
    /// the keychain holds from then on, as `createHeldKey`'s are: used where the keychain runs, never handed
    /// out. `attributes` as `HeldKeyRequest.attributes`; replies `.item` with what `returning` asks for.
    case importHeldKey(AsymmetricKey, attributes: [AttributeKey: AttributeValue], returning: ReturnOptions)
    /// Signs, decrypts or derives with the held key a persistent reference names; replies `.bytes`.
    case useHeldKey(reference: Data, use: KeyUse)
    /// Forgets an ephemeral held key now; replies `.none`.
    case releaseHeldKey(reference: Data)
    /// The lock state and who the service takes the caller for; replies `.status`.
    case status
    /// Unlocks with the passphrase (`errSecAuthFailed` when it is wrong); replies `.none`.
    case unlock(Passphrase)
    /// Locks; replies `.none`.
    case lock
    /// The lock settings stored in the keychain; replies `.settings`.
    case settings
    /// Stores new lock settings (needs the passphrase); replies `.none`.
    case updateSettings(KeychainSettings, passphrase: Passphrase)
    /// The registered applications (readable after the first unlock); replies `.registrations`.
    case listRegistrations
    /// Registers the executable at `executablePath` as it is now (needs the passphrase); replies
    /// `.registration`.
    case register(executablePath: String, applicationIdentifier: String, accessGroups: [String], passphrase: Passphrase)
    /// Removes the registration of the executable at `executablePath` (needs the passphrase); replies `.flag`
    /// (whether there was one).
    case unregister(executablePath: String, passphrase: Passphrase)
    /// Items' access lists (the programs an item names besides its access group's): with a reference, that
    /// item's (`errSecItemNotFound` when it names no live item); without, every item's that names a program.
    /// Readable after the first unlock; replies `.accessLists`.
    case accessLists(reference: Data?)
    /// Adds `program` to the access list of the item `reference` names (needs the passphrase); replies
    /// `.flag` (false when it was listed already).
    case grantAccess(TrustedProgram, reference: Data, passphrase: Passphrase)
    /// Removes `program` from the access list of the item `reference` names (needs the passphrase; an
    /// executable with an empty digest removes every digest of its path); replies `.flag` (whether it was
    /// listed).
    case revokeAccess(TrustedProgram, reference: Data, passphrase: Passphrase)

    /// Whether the request changes the keychain's items (the agent then tells background sync).
    public var changesItems: Bool {
        switch self {
        case .add, .update, .delete, .addOrUpdate, .importHeldKey: true
        default: false
        }
    }
}

/// An item `KeychainRequest.locate` listed: its persistent reference, and whether its class key is available
/// now (false: the Secret Service calls it locked).
public struct LocatedItem: Sendable, Hashable {
    /// The item's persistent reference.
    public let reference: Data
    /// Whether its class key is available now.
    public let isAvailable: Bool

    /// An entry.
    public init(reference: Data, isAvailable: Bool) {
        self.reference = reference
        self.isAvailable = isAvailable
    }
}

/// What a `KeychainRequest` answers on success; each request's documentation names its case.
public enum KeychainReply: Sendable, Equatable {
    /// Nothing (unlock, lock, a release, new settings).
    case none
    /// The lock state and the caller's standing.
    case status(KeychainServiceStatus)
    /// One item (nil when `returning` asked for nothing).
    case item(ItemResult?)
    /// The items found.
    case items([ItemResult])
    /// The items `locate` listed.
    case located([LocatedItem])
    /// How many items changed or went.
    case count(Int)
    /// A yes or no (added rather than updated; a registration removed).
    case flag(Bool)
    /// The registration made.
    case registration(ApplicationRegistration)
    /// The registrations.
    case registrations([ApplicationRegistration])
    /// The lock settings.
    case settings(KeychainSettings)
    /// A key's output (a signature, plaintext, a shared secret).
    case bytes(Data)
    /// The identities found.
    case identities([IdentityMatch])
    /// Items' access lists.
    case accessLists([ItemAccessList])
}
