import FoundationEssentials
import LatchkeyEngine

/// `org.freedesktop.DBus.Properties` on the service, collections and items: their properties as the caller
/// sees them, and the collection's label and the item's label and attributes set. The arguments are decoded
/// and the replies encoded by `propertiesCall` (SecretServiceServer+Marshalling.swift).
extension SecretServiceServer {
    /// A property's value, as D-Bus carries it.
    enum PropertyValue {
        case paths([String])
        case string(String)
        case boolean(Bool)
        case time(UInt64)
        case attributes([String: String])
    }

    /// A property: its name and how to read its value (read only when asked for).
    struct Property {
        let name: String
        let value: () throws -> PropertyValue
    }

    /// The value a `Set` gives: a string, an attribute map, or another type (its signature).
    enum PropertyInput {
        case string(String)
        case attributes([String: String])
        case other(String)
    }

    /// The collections a property call needs: the one of a collection or item, else every one.
    func propertyCollections(_ target: Target, for sender: String) throws -> [String: any SecretCollection] {
        switch target {
        case .collection(let path), .item(let path, _):
            return [path: try collection(at: path, caller: try caller(of: sender))]
        default: return collections(caller: try caller(of: sender))
        }
    }

    /// `Get`: property `name` of `interface`, or `UnknownProperty`.
    func property(
        _ target: Target, interface: String, name: String,
        collections: [String: any SecretCollection]
    ) throws -> PropertyValue {
        let values = try properties(target, interface: interface, collections: collections)
        guard let property = values.first(where: { $0.name == name }) else {
            throw SecretServiceError(
                name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no property \(interface).\(name)")
        }
        return try property.value()
    }

    /// `Set`: a collection's label, or an item's label or attributes (`input` nil: the value is not a
    /// variant); anything else is read-only.
    func setProperty(
        _ target: Target, interface: String, name: String, to input: PropertyInput?,
        collections: [String: any SecretCollection]
    ) throws {
        if case .collection(let path) = target, interface == "org.freedesktop.Secret.Collection", name == "Label",
            let collection = collections[path]
        {
            guard case .string(let label)? = input else {
                throw SecretServiceError.invalidArguments("Label is a string")
            }
            switch collection {
            case let store as SecretStore where store.collectionID == "login":
                try registry.renameLogin(label: label)
                cachedLoginLabel = label
            case let store as SecretStore: try registry.rename(store.collectionID, label: label)
            default: sessionItems.label = label  // The in-memory `session` collection.
            }
            serviceSignal("CollectionChanged", path)
            propertiesChanged(path, interface: interface, invalidated: ["Label"])
            return
        }
        guard case .item(let collection, let reference) = target, interface == "org.freedesktop.Secret.Item",
            let store = collections[collection]
        else {
            throw SecretServiceError(
                name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(interface).\(name) cannot be set")
        }
        guard let input else { throw SecretServiceError.invalidArguments("Set needs a variant") }
        switch (name, input) {
        case ("Label", .string(let label)): try store.setLabel(reference, label)
        case ("Attributes", .attributes(let attributes)): try store.setAttributes(reference, attributes)
        default:
            throw SecretServiceError(
                name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(interface).\(name) cannot be set")
        }
        emit("ItemChanged", SecretPaths.item(reference, in: store.path), collection: store.path)
        propertiesChanged(
            SecretPaths.item(reference, in: store.path), interface: "org.freedesktop.Secret.Item",
            invalidated: [name, "Modified"])
    }

    /// The properties of `interface` on `target` (none for another interface), for `Get` and `GetAll`.
    func properties(_ target: Target, interface: String, collections: [String: any SecretCollection]) throws
        -> [Property]
    {
        switch (target, interface) {
        case (.service, "org.freedesktop.Secret.Service"):
            let order = Self.order(collections)
            return [Property(name: "Collections") { .paths(order) }]
        case (.collection(let path), "org.freedesktop.Secret.Collection"):
            guard let store = collections[path] else { return [] }
            let locked = store.isLocked
            let label = store.label
            return [
                // Listed only when asked for (a Get of Locked must not walk every item).
                Property(name: "Items") {
                    let found = try store.search([:])
                    return .paths((found.unlocked + found.locked).map { SecretPaths.item($0, in: path) })
                },
                Property(name: "Label") { .string(label) },
                Property(name: "Locked") { .boolean(locked) },
                Property(name: "Created") { .time(0) },
                Property(name: "Modified") { .time(0) },
            ]
        case (.item(let collection, let reference), "org.freedesktop.Secret.Item"):
            guard let store = collections[collection] else { return [] }
            if try store.isItemLocked(reference) {
                // Sealed while locked: the item says so, and shows its other properties after an unlock.
                return [
                    Property(name: "Locked") { .boolean(true) },
                    Property(name: "Attributes") { .attributes([:]) },
                    Property(name: "Label") { .string("") },
                    Property(name: "Created") { .time(0) },
                    Property(name: "Modified") { .time(0) },
                ]
            }
            // Read once, and only for the properties that need it (a Get of Locked, which clients make before
            // every secret, reads the index alone).
            final class Loaded {
                var item: SecretStore.Item?
            }
            let loaded = Loaded()
            func item() throws -> SecretStore.Item {
                if let item = loaded.item { return item }
                let item = try store.item(reference)
                loaded.item = item
                return item
            }
            return [
                Property(name: "Locked") { .boolean(false) },
                Property(name: "Attributes") { .attributes(try item().attributes) },
                Property(name: "Label") { .string(try item().label) },
                Property(name: "Created") { .time(UInt64(max(0, try item().created.timeIntervalSince1970))) },
                Property(name: "Modified") { .time(UInt64(max(0, try item().modified.timeIntervalSince1970))) },
            ]
        default:
            return []
        }
    }
}
