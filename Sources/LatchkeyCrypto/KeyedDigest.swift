package import FoundationEssentials

/// Keyed BLAKE2b digests: the searchable index of the keychain holds these instead of attribute values.
package enum KeyedDigest {
    /// Key length in bytes (32).
    package static let keyLength = Sodium.genericHashKeyBytes

    /// The keyed digest of `message`, `length` bytes long (16 to 64).
    package static func digest(_ message: UnsafeRawBufferPointer, key: SecureBytes, length: Int = 32) -> Data {
        precondition((16...64).contains(length))
        var out = Data(count: length)
        out.withUnsafeMutableBytes { output in
            key.withUnsafeBytes { Sodium.blake2b(output: output, message: message, key: $0) }
        }
        return out
    }

    /// The keyed digest of `message`, `length` bytes long (16 to 64).
    package static func digest(_ message: some ContiguousBytes, key: SecureBytes, length: Int = 32) -> Data {
        message.withUnsafeBytes { digest($0, key: key, length: length) }
    }

    /// Derives a 32-byte subkey, `BLAKE2b(key: parent, message: label)`, for domain separation.
    package static func subkey(of parent: SecureBytes, label: String) -> SecureBytes {
        let message = Data(label.utf8)
        return SecureBytes(count: keyLength) { out in
            message.withUnsafeBytes { m in parent.withUnsafeBytes { Sodium.blake2b(output: out, message: m, key: $0) } }
        }
    }
}

extension KeyedDigest {
    /// `BLAKE2b(key: key, message: message)` into secure memory (32 bytes), for deriving key material from
    /// key material.
    package static func secureDigest(of message: SecureBytes, key: SecureBytes) -> SecureBytes {
        SecureBytes(count: keyLength) { out in
            message.withUnsafeBytes { m in key.withUnsafeBytes { Sodium.blake2b(output: out, message: m, key: $0) } }
        }
    }
}

/// Compares two byte strings in constant time (for digests and key-check values).
package func constantTimeEqual(_ a: Data, _ b: Data) -> Bool {
    a.withUnsafeBytes { x in b.withUnsafeBytes { y in Sodium.constantTimeEqual(x, y) } }
}
