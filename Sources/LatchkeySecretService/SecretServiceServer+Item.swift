import FoundationEssentials
import LatchkeyEngine

/// `org.freedesktop.Secret.Item` on each item: its secret, replacing it, deleting the item. The arguments are
/// decoded and the replies encoded by `itemCall` (SecretServiceServer+Marshalling.swift); its label and
/// attributes are properties (SecretServiceServer+Properties.swift).
extension SecretServiceServer {
    /// `GetSecret`: the item's secret and its content type.
    func secret(of reference: Data, in store: any SecretCollection) throws -> (value: Data, contentType: String) {
        try store.secret(reference)
    }

    /// `SetSecret`: replaces the item's secret.
    func setSecret(of reference: Data, in store: any SecretCollection, to secret: (value: Data, contentType: String))
        throws
    {
        try store.setSecret(reference, secret.value, contentType: secret.contentType)
        let path = SecretPaths.item(reference, in: store.path)
        emit("ItemChanged", path, collection: store.path)
        propertiesChanged(path, interface: "org.freedesktop.Secret.Item", invalidated: ["Modified"])
    }

    /// `Delete` of an item. No prompt is ever needed.
    func deleteItem(_ reference: Data, in store: any SecretCollection) throws {
        try store.delete(reference)
        emit("ItemDeleted", SecretPaths.item(reference, in: store.path), collection: store.path)
        propertiesChanged(store.path, interface: "org.freedesktop.Secret.Collection", invalidated: ["Items"])
    }
}
