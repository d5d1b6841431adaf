import FoundationEssentials
import LatchkeyCrypto
import LatchkeyEngine
import LatchkeyPOSIX

/// The Secret Service's items as Latchkey items — the mapping, in one place:
///
/// | Secret Service | Latchkey generic password |
/// |---|---|
/// | the `login` collection (alias `default`) | the keychain; access group `org.freedesktop.secrets`, service `org.freedesktop.secrets` |
/// | a collection made by `CreateCollection` | service `org.freedesktop.secrets/<id>` (see `CollectionRegistry`) |
/// | an item | an item with a random account (32 hex digits) |
/// | its object path | `…/collection/login/` + its persistent reference in hex |
/// | `Label` | `labl` |
/// | `Attributes` | one `ss.<name>` attribute per pair: text, sealed and indexed like every attribute |
/// | the secret, its content type | the item's data; `desc` |
/// | `Created`, `Modified` | `cdat`, `mdat` (seconds since 1970) |
/// | `Locked` | the item's class key is unavailable (`kSecAttrAccessibleWhenUnlocked` items, a locked keychain) |
///
/// Under the shared policy every program of the user acts as one caller of group `org.freedesktop.secrets`;
/// under isolation each acts as itself (`SecretServicePolicy`), and its items go to its first access group.
struct SecretStore {
    /// The keychain, as `caller` (`SecretServiceProvider.Configuration.service`).
    let service: any KeychainService
    /// Who the operations run for.
    let caller: CallerIdentity
    /// The collection's id: `login` (the keychain's own), or one made by `CreateCollection`.
    var collectionID = "login"
    /// Its label.
    var label = "Login"
    /// Whether the items it stores are synchronizable (`SecretServiceProvider.Configuration.synchronizable`);
    /// its searches see synchronizable items either way.
    var synchronizable = false
    /// Under isolation, what the caller may read of other programs' items and what it may be asked about
    /// (issue 53); nil: its own groups' items alone.
    var reach: OtherItems?
    static let group = "org.freedesktop.secrets"
    static let service = "org.freedesktop.secrets"

    /// The service (`svce`) of the collection's items: `org.freedesktop.secrets` for `login`,
    /// `org.freedesktop.secrets/<id>` for the others.
    static func service(of collectionID: String) -> String {
        collectionID == "login" ? service : service + "/" + collectionID
    }

    var itemService: String { Self.service(of: collectionID) }
    /// The caller every program is under the shared policy.
    static let shared = CallerIdentity(applicationIdentifier: group, accessGroups: [group])

    /// An item as the Secret Service shows it.
    struct Item {
        let reference: Data
        let label: String
        let attributes: [String: String]
        let contentType: String
        let created: Date
        let modified: Date
    }

    private func matching(_ attributes: [String: String]) -> [AttributeKey: AttributeValue] {
        var matching: [AttributeKey: AttributeValue] = [.service: .string(itemService)]
        for (name, value) in attributes { matching[AttributeKey.secretService(name)] = .string(value) }
        return matching
    }

    /// The items whose attributes include every pair of `attributes` (all of them for none), split into those
    /// readable now and those locked.
    ///
    /// Under isolation (`reach`), other programs' items that match are there too: those the caller may read
    /// (on their access lists, or allowed once) as its own are, and — when the search names an attribute and
    /// the user can be asked — the others as locked, offered for an `Unlock` that asks the user.
    func search(_ attributes: [String: String]) throws(KeychainError) -> (unlocked: [Data], locked: [Data]) {
        let query = ItemQuery(.genericPassword, matching: matching(attributes), synchronizable: .any, limit: .all)
        let found = try service.locate(query)
        var unlocked = found.filter(\.isAvailable).map(\.reference)
        var locked = found.filter { !$0.isAvailable }.map(\.reference)
        guard let reach else { return (unlocked, locked) }
        let own = Set(found.map(\.reference))
        var offered: [Data] = []
        for other in try reach.everyGroup.locate(query) where !own.contains(other.reference) {
            if reach.mayRead(other.reference) {
                if other.isAvailable { unlocked.append(other.reference) } else { locked.append(other.reference) }
            } else if !attributes.isEmpty && reach.mayAsk {
                offered.append(other.reference)
            }
        }
        reach.offer(offered)
        locked += offered
        return (unlocked, locked)
    }

    /// Whether the item is sealed now, from the index alone (its class key gone): no decryption, for the
    /// `Locked` property clients read before every secret. Another program's item offered to the caller and
    /// not yet allowed is locked.
    func isItemLocked(_ reference: Data) throws(KeychainError) -> Bool {
        let query = located(reference)
        if let found = try service.locate(query).first { return !found.isAvailable }
        guard let reach else { throw KeychainError(.itemNotFound) }
        if reach.mayRead(reference), let found = try reach.everyGroup.locate(query).first { return !found.isAvailable }
        if reach.isOffered(reference) { return true }
        throw KeychainError(.itemNotFound)
    }

    /// This collection's item `reference` names, found without reading it (`locate`).
    private func located(_ reference: Data) -> ItemQuery {
        ItemQuery(
            .genericPassword, matching: [.service: .string(itemService)], synchronizable: .any,
            persistentReference: reference, limit: .all)
    }

    /// Where the caller reads item `reference`: its own service, or — another program's item it may read —
    /// the every-group service (`other`). Nil for an item it may not read.
    private func reader(of reference: Data) throws(KeychainError) -> (service: any KeychainService, other: Bool)? {
        guard let reach, try service.locate(located(reference)).isEmpty else { return (service, false) }
        guard reach.mayRead(reference) else { return nil }
        return (reach.reading(reference), true)
    }

    /// Whether the keychain is locked (its `…WhenUnlocked` class keys are gone).
    var isLocked: Bool {
        // A status that cannot be read (this in-process service's never fails) counts as locked.
        (try? service.status().lockState) != .unlocked
    }

    /// The item a reference names, if it is one of this collection's.
    private func query(_ reference: Data, returning: ReturnOptions) -> ItemQuery {
        ItemQuery(
            .genericPassword, matching: [.service: .string(itemService)], synchronizable: .any,
            persistentReference: reference, returning: returning,
            authenticationUI: .fail)
    }

    /// One item's attributes: `errSecItemNotFound` when it is gone, `errSecInteractionNotAllowed` when locked.
    func item(_ reference: Data) throws(KeychainError) -> Item {
        guard let reader = try reader(of: reference),
            let found = try reader.service.copyMatching(query(reference, returning: .attributes)).first
        else {
            throw KeychainError(.itemNotFound)
        }
        return Self.item(found)
    }

    static func item(_ found: ItemResult) -> Item {
        var attributes: [String: String] = [:]
        // An attribute removed by `setAttributes` is left empty (the engine's updates merge): empty is absent.
        for (key, value) in found.attributes where AttributeKey.isSecretServiceAttribute(key) {
            guard let text = value.stringValue, !text.isEmpty else { continue }
            attributes[String(key.rawValue.dropFirst(AttributeKey.secretServicePrefix.count))] = text
        }
        func date(_ key: AttributeKey) -> Date {
            if case .date(let date)? = found.attributes[key] { return date }
            return Date(timeIntervalSince1970: 0)
        }
        return Item(
            reference: found.persistentReference, label: found.attributes[.label]?.stringValue ?? "",
            attributes: attributes, contentType: found.attributes[.itemDescription]?.stringValue ?? "text/plain",
            created: date(.creationDate), modified: date(.modificationDate))
    }

    /// One item's secret and content type. Another program's item allowed once is read once: the allowance
    /// goes with this read.
    func secret(_ reference: Data) throws(KeychainError) -> (value: Data, contentType: String) {
        guard let reader = try reader(of: reference) else {
            if reach?.isOffered(reference) == true {
                throw KeychainError(.interactionNotAllowed, "the item is another program's: Unlock it to ask the user")
            }
            throw KeychainError(.itemNotFound)
        }
        guard let found = try reader.service.copyMatching(query(reference, returning: [.attributes, .data])).first
        else {
            throw KeychainError(.itemNotFound)
        }
        if reader.other { reach?.read(reference) }
        return (found.data ?? Data(), found.attributes[.itemDescription]?.stringValue ?? "text/plain")
    }

    /// Stores a new item, or — with `replace` — overwrites the first unlocked item whose attributes are exactly
    /// `attributes`; returns its reference.
    func create(label: String, attributes: [String: String], secret: Data, contentType: String, replace: Bool)
        throws(KeychainError) -> Data
    {
        if replace {
            var own = self
            own.reach = nil  // Only the caller's own items are replaced: another program's it may read, never.
            for reference in try own.search(attributes).unlocked where try own.item(reference).attributes == attributes
            {
                try update(
                    reference,
                    changes: ItemChanges(
                        attributes: [.label: .string(label), .itemDescription: .string(contentType)],
                        data: secret))
                return reference
            }
        }
        var fields = matching(attributes)
        fields[.account] = .string(Hex.encode(SecureRandom.bytes(16)))
        fields[.label] = .string(label)
        fields[.itemDescription] = .string(contentType)
        if synchronizable { fields[.synchronizable] = .bool(true) }
        guard
            let added = try service.add(
                NewItem(.genericPassword, attributes: fields, data: secret), returning: .persistentReference)
        else { throw KeychainError(.internal, "the new item did not come back") }
        return added.persistentReference
    }

    /// Changes one item.
    func update(_ reference: Data, changes: ItemChanges) throws(KeychainError) {
        try refuseOthers(reference)
        _ = try service.update(query(reference, returning: []), with: changes)
    }

    /// Another program's item the caller may read (or be asked about) is refused by name for a change or a
    /// deletion, rather than reported missing: access lists let a program read an item, nothing more.
    private func refuseOthers(_ reference: Data) throws(KeychainError) {
        guard let reach, reach.isOffered(reference) || reach.mayRead(reference) else { return }
        guard try service.locate(located(reference)).isEmpty else { return }
        throw KeychainError(
            .missingEntitlement, "the item is another program's: its access list lets a program read it, not change it")
    }

    /// Replaces one item's attribute map (every `ss.` attribute it had goes, the new ones come).
    func setAttributes(_ reference: Data, _ attributes: [String: String]) throws(KeychainError) {
        let current = try item(reference)
        var changes: [AttributeKey: AttributeValue] = [:]
        for name in current.attributes.keys where attributes[name] == nil {
            changes[AttributeKey.secretService(name)] = .string("")
        }
        for (name, value) in attributes { changes[AttributeKey.secretService(name)] = .string(value) }
        try update(reference, changes: ItemChanges(attributes: changes))
    }

    /// Deletes one item.
    func delete(_ reference: Data) throws(KeychainError) {
        try refuseOthers(reference)
        _ = try service.delete(query(reference, returning: []))
    }
}
