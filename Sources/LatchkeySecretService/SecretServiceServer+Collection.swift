import FoundationEssentials
import LatchkeyEngine

/// `org.freedesktop.Secret.Collection` on each collection (`login` and its `default` alias, `session`, those
/// made with `CreateCollection`): searching it, making items, deleting it. The arguments are decoded and the
/// replies encoded by `collectionCall` (SecretServiceServer+Marshalling.swift).
extension SecretServiceServer {
    /// `SearchItems` of a collection: its items whose attributes include `attributes`, unlocked ones first.
    func searchItems(_ attributes: [String: String], in store: any SecretCollection) throws -> [String] {
        let found = try store.search(attributes)
        return (found.unlocked + found.locked).map { SecretPaths.item($0, in: store.path) }
    }

    /// `CreateItem`: the item made in `store` (or the one replaced, with `replace`); its path. No prompt is
    /// ever needed.
    func createItem(
        in store: any SecretCollection, label: String?, attributes: [String: String]?,
        secret: (value: Data, contentType: String), replace: Bool
    ) throws -> String {
        let reference = try store.create(
            label: label ?? "", attributes: attributes ?? [:],
            secret: secret.value, contentType: secret.contentType, replace: replace)
        let path = SecretPaths.item(reference, in: store.path)
        emit("ItemCreated", path, collection: store.path)
        propertiesChanged(store.path, interface: "org.freedesktop.Secret.Collection", invalidated: ["Items"])
        return path
    }

    /// `Delete` of a collection: one made with `CreateCollection` goes (under isolation, only for a program
    /// that may); `login` and `session` stay.
    func deleteCollection(_ store: any SecretCollection, for sender: String) throws {
        guard let store = store as? SecretStore, store.collectionID != "login" else {
            throw SecretServiceError.notSupported(
                store.path == SecretPaths.collection
                    ? "the login collection is the keychain itself; delete items, or the keychain with latchkey delete-keychain"
                    : "the session collection lasts as long as the agent; delete its items")
        }
        if configuration.policy == .isolated {
            try registry.delete(store.collectionID, as: try caller(of: sender))
        } else {
            try registry.delete(store.collectionID)
        }
        serviceSignal("CollectionDeleted", store.path)
        propertiesChanged(
            SecretPaths.service, interface: "org.freedesktop.Secret.Service", invalidated: ["Collections"])
    }
}
