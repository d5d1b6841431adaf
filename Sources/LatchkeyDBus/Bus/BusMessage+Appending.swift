import CSystemd

/// Writing a message's arguments, in order.
extension BusMessage {
    /// Appends a string ("s"), an object path ("o") or a signature ("g").
    package func append(_ value: String, as type: Character = "s") throws(BusError) {
        let code = value.withCString { latchkey_sd_bus_message_append_basic(message, Self.code(type), $0) }
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }

    /// Appends a boolean.
    package func append(_ value: Bool) throws(BusError) {
        var flag: Int32 = value ? 1 : 0
        let code = latchkey_sd_bus_message_append_basic(message, Self.code("b"), &flag)
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }

    /// Appends an unsigned 64-bit integer ("t").
    package func append(_ value: UInt64) throws(BusError) {
        var number = value
        let code = latchkey_sd_bus_message_append_basic(message, Self.code("t"), &number)
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }

    /// Appends an unsigned 32-bit integer ("u").
    package func append(_ value: UInt32) throws(BusError) {
        var number = value
        let code = latchkey_sd_bus_message_append_basic(message, Self.code("u"), &number)
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }

    /// Appends a byte array ("ay").
    package func append(bytes: [UInt8]) throws(BusError) {
        let code = bytes.withUnsafeBytes {
            latchkey_sd_bus_message_append_array(message, Self.code("y"), $0.baseAddress, $0.count)
        }
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }

    /// Opens an array, struct, variant or dict entry of `contents`.
    package func open(_ type: Character, _ contents: String) throws(BusError) {
        let code = latchkey_sd_bus_message_open_container(message, Self.code(type), contents)
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }

    /// Closes the container opened last.
    package func close() throws(BusError) {
        let code = latchkey_sd_bus_message_close_container(message)
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }
}
