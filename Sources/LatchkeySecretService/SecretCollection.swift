import FoundationEssentials
import LatchkeyCrypto
import LatchkeyEngine

/// A collection as the server serves it: the keychain (`login`, alias `default`) or the in-memory `session`
/// collection. Items are named by an opaque reference (for the keychain, the item's persistent reference).
protocol SecretCollection {
    /// The collection's object path.
    var path: String { get }
    /// Its label.
    var label: String { get }
    /// Whether its items are sealed now.
    var isLocked: Bool { get }
    func search(_ attributes: [String: String]) throws(KeychainError) -> (unlocked: [Data], locked: [Data])
    func item(_ reference: Data) throws(KeychainError) -> SecretStore.Item
    /// Whether the item is sealed now, without reading it: `errSecItemNotFound` when it is not one of the
    /// caller's in this collection.
    func isItemLocked(_ reference: Data) throws(KeychainError) -> Bool
    func secret(_ reference: Data) throws(KeychainError) -> (value: Data, contentType: String)
    func create(label: String, attributes: [String: String], secret: Data, contentType: String, replace: Bool)
        throws(KeychainError) -> Data
    func setLabel(_ reference: Data, _ label: String) throws(KeychainError)
    func setSecret(_ reference: Data, _ value: Data, contentType: String) throws(KeychainError)
    func setAttributes(_ reference: Data, _ attributes: [String: String]) throws(KeychainError)
    func delete(_ reference: Data) throws(KeychainError)
}

extension SecretStore: SecretCollection {
    var path: String { SecretPaths.collection(id: collectionID) }

    func setLabel(_ reference: Data, _ label: String) throws(KeychainError) {
        try update(reference, changes: ItemChanges(attributes: [.label: .string(label)]))
    }

    func setSecret(_ reference: Data, _ value: Data, contentType: String) throws(KeychainError) {
        try update(reference, changes: ItemChanges(attributes: [.itemDescription: .string(contentType)], data: value))
    }
}

/// The `session` collection's items: in the agent's memory only, gone when it stops (for secrets a program
/// wants for this login session alone). Used on the bus thread only.
final class SessionItems {
    struct Stored {
        var label: String
        var attributes: [String: String]
        var secret: Data
        var contentType: String
        let created: Date
        var modified: Date
        /// The access group of the program that stored it (under the shared policy, the shared group).
        let group: String
    }

    var items: [Data: Stored] = [:]
    /// The collection's label (renamed with `Set`; in memory like its items).
    var label = "Session"

    /// Wipes an item's secret and puts `value` in its place, or removes the item when `value` is nil.
    func replaceSecret(_ reference: Data, with value: Data?) {
        guard var stored = items.removeValue(forKey: reference) else { return }
        stored.secret.resetBytes(in: 0..<stored.secret.count)  // Held only here now: wiped in place.
        guard let value else { return }
        stored.secret = value
        items[reference] = stored
    }

    deinit {
        for key in Array(items.keys) { replaceSecret(key, with: nil) }
    }
}

/// The `session` collection as one caller sees it: the items of its access groups.
struct SessionCollection: SecretCollection {
    let storage: SessionItems
    let caller: CallerIdentity

    var path: String { SecretPaths.sessionCollection }
    var label: String { storage.label }
    var isLocked: Bool { false }

    func isItemLocked(_ reference: Data) throws(KeychainError) -> Bool {
        _ = try stored(reference)
        return false
    }

    private func visible(_ stored: SessionItems.Stored) -> Bool {
        caller.hasWildcard || caller.accessGroups.contains(stored.group)
    }

    private func stored(_ reference: Data) throws(KeychainError) -> SessionItems.Stored {
        guard let found = storage.items[reference], visible(found) else { throw KeychainError(.itemNotFound) }
        return found
    }

    func search(_ attributes: [String: String]) throws(KeychainError) -> (unlocked: [Data], locked: [Data]) {
        let found = storage.items.filter { _, stored in
            visible(stored) && attributes.allSatisfy { stored.attributes[$0.key] == $0.value }
        }
        return (found.sorted { $0.value.created < $1.value.created }.map(\.key), [])
    }

    func item(_ reference: Data) throws(KeychainError) -> SecretStore.Item {
        let found = try stored(reference)
        return SecretStore.Item(
            reference: reference, label: found.label, attributes: found.attributes, contentType: found.contentType,
            created: found.created, modified: found.modified)
    }

    func secret(_ reference: Data) throws(KeychainError) -> (value: Data, contentType: String) {
        let found = try stored(reference)
        return (found.secret, found.contentType)
    }

    func create(label: String, attributes: [String: String], secret: Data, contentType: String, replace: Bool)
        throws(KeychainError) -> Data
    {
        if replace,
            let existing = try search(attributes).unlocked.first(where: { storage.items[$0]?.attributes == attributes })
        {
            storage.items[existing]?.label = label
            try setSecret(existing, secret, contentType: contentType)
            return existing
        }
        guard let group = caller.defaultGroup else {
            throw KeychainError(
                .missingEntitlement, "caller \(caller.applicationIdentifier) has no default access group")
        }
        let reference = SecureRandom.bytes(16)
        let now = Date()
        storage.items[reference] = SessionItems.Stored(
            label: label, attributes: attributes, secret: secret, contentType: contentType,
            created: now, modified: now, group: group)
        return reference
    }

    func setLabel(_ reference: Data, _ label: String) throws(KeychainError) {
        _ = try stored(reference)
        storage.items[reference]?.label = label
        storage.items[reference]?.modified = Date()
    }

    func setSecret(_ reference: Data, _ value: Data, contentType: String) throws(KeychainError) {
        _ = try stored(reference)
        storage.replaceSecret(reference, with: value)
        storage.items[reference]?.contentType = contentType
        storage.items[reference]?.modified = Date()
    }

    func setAttributes(_ reference: Data, _ attributes: [String: String]) throws(KeychainError) {
        _ = try stored(reference)
        storage.items[reference]?.attributes = attributes
        storage.items[reference]?.modified = Date()
    }

    func delete(_ reference: Data) throws(KeychainError) {
        _ = try stored(reference)
        storage.replaceSecret(reference, with: nil)
    }
}
