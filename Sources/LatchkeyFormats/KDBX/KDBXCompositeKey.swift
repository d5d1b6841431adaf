import FoundationEssentials
package import LatchkeyCrypto
package import LatchkeyEngine
import LatchkeyPKI

/// A KeePass database's composite key: SHA-256 of the SHA-256 of the password and of the key file's key,
/// each when given (KeePassXC's `CompositeKey`). A key file is an XML key file (version 1.0, its key in
/// base64; 2.0, in hexadecimal with a checksum), 32 bytes, 64 hexadecimal digits, or any other file, whose
/// SHA-256 is the key.
package enum KDBXCompositeKey {
    package static func make(password: Passphrase?, keyFile: [UInt8]?) throws(KeychainError) -> SecureBytes {
        var parts: [SecureBytes] = []
        if let password { parts.append(password.withUnsafeBytes { FormatPrimitives.sha256([$0]) }) }
        if let keyFile { parts.append(try key(ofKeyFile: keyFile)) }
        guard !parts.isEmpty else { throw KeychainError.param("a KeePass database needs a password or a key file") }
        var joined = [UInt8]()
        defer { joined.withUnsafeMutableBytes { wipeBytes($0) } }
        for part in parts { part.withUnsafeBytes { joined.append(contentsOf: $0) } }
        return joined.withUnsafeBytes { FormatPrimitives.sha256([$0]) }
    }

    /// The 32-byte key a key file stands for.
    static func key(ofKeyFile file: [UInt8]) throws(KeychainError) -> SecureBytes {
        let text = String(decoding: file, as: UTF8.self)
        if text.contains("<KeyFile>") || text.contains("<KeyFile ") {
            return try xmlKey(file)
        }
        if file.count == 32 { return SecureBytes(copying: file) }
        if file.count == 64, let bytes = hex(text) { return SecureBytes(copying: bytes) }
        return file.withUnsafeBytes { FormatPrimitives.sha256([$0]) }
    }

    static func hex(_ text: some StringProtocol) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        return bytes
    }

    static func xmlKey(_ file: [UInt8]) throws(KeychainError) -> SecureBytes {
        let root = try KeePassXML.parse(file, what: "the key file") { (_: inout [UInt8]) throws(KeychainError) in }
        guard root.name == "KeyFile", let key = root.child("Key"), let data = key.child("Data") else {
            throw KeychainError.decode("the key file is XML without a KeyFile/Key/Data element")
        }
        let version = root.child("Meta")?.child("Version")?.text ?? ""
        let digits = data.text.filter { !$0.isWhitespace }
        if version.hasPrefix("1.0") {
            guard let bytes = Data(base64Encoded: digits), !bytes.isEmpty else {
                throw KeychainError.decode("the key file's key is not base64")
            }
            return SecureBytes(
                copying: Array(bytes.prefix(32)) + [UInt8](repeating: 0, count: max(0, 32 - bytes.count)))
        }
        guard version == "2.0" else {
            throw KeychainError.decode("the key file has version \(version), not 1.0 or 2.0")
        }
        guard let bytes = hex(digits), !bytes.isEmpty else {
            throw KeychainError.decode("the key file's key is not hexadecimal")
        }
        if let checksum = data.attributes["Hash"].flatMap(hex) {
            let digest = bytes.withUnsafeBytes { FormatPrimitives.sha256([$0]) }.withUnsafeBytes { Array($0.prefix(4)) }
            guard digest == checksum else { throw KeychainError.decode("the key file's key fails its checksum") }
        }
        return SecureBytes(copying: Array(bytes.prefix(32)) + [UInt8](repeating: 0, count: max(0, 32 - bytes.count)))
    }
}
