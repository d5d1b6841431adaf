/// The arguments a Secret Service client writes to store an item (`Collection.CreateItem`, Secret Service
/// API 0.2): the item's properties (`a{sv}`: its label and its attributes) and the secret (`oayays`: the
/// session, its parameters, the value, the content type), then whether to replace an item with the same
/// attributes. `latchkey export --to secret-service` and `latchkey-bench --sync-paths` write them.
extension BusMessage {
    /// Appends CreateItem's arguments for a plain session (no parameters; the value as it is). The attributes
    /// go in the order of their names.
    package func appendCreateItem(
        label: String, attributes: [String: String], session: String, secret: [UInt8], contentType: String,
        replace: Bool
    ) throws(BusError) {
        try open("a", "{sv}")
        try open("e", "sv")
        try append("org.freedesktop.Secret.Item.Label")
        try open("v", "s")
        try append(label)
        try close()
        try close()
        try open("e", "sv")
        try append("org.freedesktop.Secret.Item.Attributes")
        try open("v", "a{ss}")
        try open("a", "{ss}")
        for (key, value) in attributes.sorted(by: { $0.key < $1.key }) {
            try open("e", "ss")
            try append(key)
            try append(value)
            try close()
        }
        try close()
        try close()
        try close()
        try close()
        try open("r", "oayays")
        try append(session, as: "o")
        try append(bytes: [])
        try append(bytes: secret)
        try append(contentType)
        try close()
        try append(replace)
    }
}
