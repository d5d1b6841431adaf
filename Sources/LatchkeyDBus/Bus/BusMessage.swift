import CSystemd
package import LatchkeyPOSIX

/// A D-Bus message (a call, reply or signal): read its arguments in order, or append a reply's. Owns one
/// reference to the sd-bus message.
package final class BusMessage {
    let message: OpaquePointer

    init(retaining message: OpaquePointer) {
        self.message = message
        _ = latchkey_sd_bus_message_ref(message)
    }

    init(adopting message: OpaquePointer) { self.message = message }

    deinit { _ = latchkey_sd_bus_message_unref(message) }

    func text(_ value: UnsafePointer<CChar>?) -> String { value.map { String(cString: $0) } ?? "" }

    /// The object path, interface, member, sender and signature of a call.
    package var path: String { text(latchkey_sd_bus_message_get_path(message)) }
    package var interface: String { text(latchkey_sd_bus_message_get_interface(message)) }
    package var member: String { text(latchkey_sd_bus_message_get_member(message)) }
    package var sender: String { text(latchkey_sd_bus_message_get_sender(message)) }
    package var signature: String { text(latchkey_sd_bus_message_get_signature(message, 1)) }

    static func code(_ character: Character) -> CChar { CChar(UInt8(ascii: character.unicodeScalars.first!)) }

    func failed(_ what: String, _ code: Int32) -> BusError {
        BusError(
            operation: "reading \(what) of \(member.isEmpty ? "a reply" : member)",
            code: code < 0 ? code : -Errno.badMessage.rawValue,
            detail: code < 0 ? nil : "the message has no \(what) here")
    }

    // MARK: Reading

    /// Reads a string ("s") or an object path ("o").
    package func readString(_ type: Character = "s") throws(BusError) -> String {
        var value: UnsafePointer<CChar>?
        let code = latchkey_sd_bus_message_read_basic(message, Self.code(type), &value)
        guard code > 0, let value else { throw failed(type == "o" ? "an object path" : "a string", code) }
        return String(cString: value)
    }

    /// Reads an unsigned 32-bit integer ("u").
    package func readUInt32() throws(BusError) -> UInt32 {
        var value: UInt32 = 0
        let code = latchkey_sd_bus_message_read_basic(message, Self.code("u"), &value)
        guard code > 0 else { throw failed("an unsigned integer", code) }
        return value
    }

    /// Reads a boolean.
    package func readBool() throws(BusError) -> Bool {
        var value: Int32 = 0
        let code = latchkey_sd_bus_message_read_basic(message, Self.code("b"), &value)
        guard code > 0 else { throw failed("a boolean", code) }
        return value != 0
    }

    /// Reads a byte array ("ay").
    package func readBytes() throws(BusError) -> [UInt8] {
        var pointer: UnsafeRawPointer?
        var size = 0
        let code = latchkey_sd_bus_message_read_array(message, Self.code("y"), &pointer, &size)
        guard code >= 0 else { throw failed("a byte array", code) }
        guard let pointer, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: size))
    }

    /// Reads a file descriptor ("h"): a close-on-exec duplicate, which the caller owns and closes (the
    /// message's own copy goes with the message).
    package func readFileDescriptor() throws(BusError) -> FileDescriptor {
        var descriptor: Int32 = -1
        let code = latchkey_sd_bus_message_read_basic(message, Self.code("h"), &descriptor)
        guard code > 0, descriptor >= 0 else {
            throw failed("a file descriptor", code < 0 ? code : -Errno.badMessage.rawValue)
        }
        do throws(Errno) {
            return try FileDescriptor(rawValue: descriptor).duplicate()
        } catch {
            throw failed("a copy of the file descriptor", -error.rawValue)
        }
    }

    /// Enters an array, struct, variant or dict entry ("a", "r", "v", "e") of `contents`; false at the end
    /// of the enclosing array.
    package func enter(_ type: Character, _ contents: String) throws(BusError) -> Bool {
        let code = latchkey_sd_bus_message_enter_container(message, Self.code(type), contents)
        guard code >= 0 else { throw failed("a \(type)(\(contents))", code) }
        return code > 0
    }

    /// Leaves the container entered last.
    package func exit() throws(BusError) {
        let code = latchkey_sd_bus_message_exit_container(message)
        guard code >= 0 else { throw failed("the end of a container", code) }
    }

    /// The type and contents of the next value, or nil at the end of the container.
    package func peek() throws(BusError) -> (type: Character, contents: String)? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let code = latchkey_sd_bus_message_peek_type(message, &type, &contents)
        guard code >= 0 else { throw failed("a value", code) }
        guard code > 0 else { return nil }
        return (Character(UnicodeScalar(UInt8(bitPattern: type))), text(contents))
    }

    /// Skips the next value, whatever it is.
    package func skip() throws(BusError) {
        let code = latchkey_sd_bus_message_skip(message, nil)
        guard code >= 0 else { throw failed("a value to skip", code) }
    }

    /// Reads a string dictionary (`a{ss}`).
    package func readStringDictionary() throws(BusError) -> [String: String] {
        var dictionary: [String: String] = [:]
        _ = try enter("a", "{ss}")
        while try enter("e", "ss") {
            let key = try readString()
            dictionary[key] = try readString()
            try exit()
        }
        try exit()
        return dictionary
    }

    /// Reads an array of object paths (`ao`).
    package func readObjectPaths() throws(BusError) -> [String] {
        var paths: [String] = []
        _ = try enter("a", "o")
        while try peek() != nil { paths.append(try readString("o")) }
        try exit()
        return paths
    }
}
