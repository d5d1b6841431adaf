import FoundationEssentials
internal import LatchkeyCrypto

/// What a passphrase becomes after the keychain's Argon2id: the derivation's output, bound to the KDF record
/// (algorithm, parameters, salt) it was derived under. pam_latchkey has the `latchkey` tool derive it at the
/// login's auth step, while the rest of the login goes on, and hands it to the agent at the session step in
/// place of the password (docs/LOGIN.md, "The derivation starts at the auth step").
///
/// It opens the keychain as the passphrase does, until the passphrase changes (a new salt), and says nothing
/// of the passphrase itself. The output lives in `SecureBytes`; `withEncoded` lends the one copy that leaves it,
/// for the pipe and the agent's message, whose buffers their holders wipe.
package struct DerivedUnlockKey: Sendable {
    /// The encoded KDF record: `algorithm (1) ‖ passes (8) ‖ memory bytes (8) ‖ salt (16)`.
    let record: Data
    /// The Argon2id output.
    let root: SecureBytes

    /// The record's length and the output's: a derived key is always exactly this long.
    package static let byteCount = 33 + 32

    init(record: KDFRecord, root: SecureBytes) {
        self.record = record.encoded()
        self.root = root
    }

    /// Lends `record ‖ output` to `body`, from locked memory wiped when it returns: the pointer must not
    /// escape (the writer that sends it copies it into a message its holder wipes).
    package func withEncoded<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let encoded = SecureBytes(count: Self.byteCount) { buffer in
            record.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[0..<33]).copyMemory(from: $0) }
            root.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[33...]).copyMemory(from: $0) }
        }
        return try encoded.withUnsafeBytes { (bytes) throws(E) in try body(bytes) }
    }

    /// Reads `record ‖ output`; nil for anything that is not exactly that (a record that does not decode, or
    /// a wrong length).
    package init?(encoded bytes: UnsafeRawBufferPointer) {
        guard bytes.count == Self.byteCount, KDFRecord.decode(Data(bytes[0..<33])) != nil else { return nil }
        record = Data(bytes[0..<33])
        root = SecureBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[33...]))
    }
}

extension KeychainDatabase {
    /// Derives the unlock key from the passphrase under the keychain's current KDF record, without unlocking
    /// (Argon2id: as slow as an unlock). A keychain not bound to a TPM also checks it: a wrong passphrase gets
    /// `errSecAuthFailed`. A bound one cannot without asking the TPM (which would count a wrong passphrase
    /// against its lockout): the agent's unlock checks it.
    package func deriveUnlockKey(from passphrase: Passphrase) throws(KeychainError) -> DerivedUnlockKey {
        let meta = try readKeyMeta()
        let root = try meta.kdf.deriveRoot(from: passphrase)
        if meta.tpm == nil {
            guard constantTimeEqual(MasterKey(root: root).keyCheck, meta.keyCheck) else {
                throw KeychainError(.authFailed)
            }
        }
        return DerivedUnlockKey(record: meta.kdf, root: root)
    }

    /// Unlocks with a key `deriveUnlockKey` made: as `unlock(with:)` does, less the derivation. A key derived
    /// under another KDF record (the passphrase or its parameters changed since) gets `errSecAuthFailed`, as
    /// a wrong key does; a damaged keybag `errSecDecode`.
    package func unlock(with key: DerivedUnlockKey) throws(KeychainError) {
        let meta = try readKeyMeta()
        guard constantTimeEqual(key.record, meta.kdf.encoded()) else {
            throw KeychainError(.authFailed, "the key was derived under other key derivation settings")
        }
        vault.installAll(try Self.openKeybag(meta, root: key.root))
    }
}
