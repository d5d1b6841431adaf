import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyStorage

extension KeychainDatabase {
    /// The registered applications. They are sealed under a key derived from the after-first-unlock class key,
    /// so only someone who knew the passphrase can have written them; reading needs a first unlock.
    package func registeredApplications() throws(KeychainError) -> [ApplicationRegistration] {
        try registeredApplications(key: try registryKey())
    }

    private func registeredApplications(key: SecureBytes) throws(KeychainError) -> [ApplicationRegistration] {
        let meta = try readKeyMeta()
        let sealed = try mappingStorageErrors {
            try pool.read { db in try MetaTable.value(.registrations, in: db) }
        }
        guard let sealed else { return [] }
        let plaintext: Data
        do {
            plaintext = try AEAD.open(sealed, key: key, associatedData: Self.registryAssociatedData(meta.keychainID))
        } catch {
            throw KeychainError.decode("the application registrations are damaged")
        }
        guard let registrations = Self.decodeRegistrations(plaintext) else {
            throw KeychainError.decode("the application registrations are malformed")
        }
        return registrations
    }

    /// Registers an application (replacing any registration of the same executable path). Needs the
    /// keychain passphrase, checked here even when the keychain is unlocked — and enough on its own: the
    /// registrations' key comes from it, so a locked keychain can be registered with too (it stays locked).
    package func register(_ registration: ApplicationRegistration, passphrase: Passphrase) throws(KeychainError) {
        try ApplicationRegistration.validate(
            applicationIdentifier: registration.applicationIdentifier, accessGroups: registration.accessGroups)
        let key = try registryKey(passphrase: passphrase)
        var all = try registeredApplications(key: key).filter { $0.executablePath != registration.executablePath }
        all.append(registration)
        try storeRegistrations(all, key: key)
    }

    /// Removes the registration of the executable at `path`; returns whether there was one. Needs the
    /// passphrase, as `register` does.
    @discardableResult
    package func unregister(executablePath path: String, passphrase: Passphrase) throws(KeychainError) -> Bool {
        let key = try registryKey(passphrase: passphrase)
        let all = try registeredApplications(key: key)
        let kept = all.filter { $0.executablePath != path }
        try storeRegistrations(kept, key: key)
        return kept.count != all.count
    }

    private func registryKey() throws(KeychainError) -> SecureBytes {
        guard let classKey = vault.snapshot().classKey(for: .afterFirstUnlock) else {
            throw KeychainError.locked("the application registrations can be read only after the first unlock")
        }
        return Self.registryKey(classKey)
    }

    /// The registrations' key from the passphrase (which is checked; `errSecAuthFailed` when wrong).
    private func registryKey(passphrase: Passphrase) throws(KeychainError) -> SecureBytes {
        let material = try Self.openKeybag(try readKeyMeta(), passphrase: passphrase)
        guard let classKey = material.classKeys[.afterFirstUnlock] else {
            throw KeychainError.decode("the keybag lacks a class key")
        }
        return Self.registryKey(classKey)
    }

    private static func registryKey(_ classKey: SecureBytes) -> SecureBytes {
        KeyedDigest.subkey(of: classKey, label: "latchkey/v1/registry")
    }

    private func storeRegistrations(_ registrations: [ApplicationRegistration], key: SecureBytes) throws(KeychainError)
    {
        let meta = try readKeyMeta()
        let sealed = AEAD.seal(
            Self.encodeRegistrations(registrations), key: key,
            associatedData: Self.registryAssociatedData(meta.keychainID))
        try mappingStorageErrors {
            try pool.write { db in
                try MetaTable.set(.registrations, sealed, in: db)
            }
        }
    }

    static func registryAssociatedData(_ keychainID: Data) -> Data { Data("lk1/registry".utf8) + keychainID }

    static func encodeRegistrations(_ registrations: [ApplicationRegistration]) -> Data {
        var writer = ByteWriter(capacity: 128 * registrations.count + 4)
        writer.append(UInt32(registrations.count))
        for registration in registrations {
            writer.appendField(registration.executablePath)
            writer.appendField(registration.executableDigest)
            writer.appendField(registration.applicationIdentifier)
            writer.append(UInt32(registration.accessGroups.count))
            for group in registration.accessGroups { writer.appendField(group) }
        }
        return writer.data
    }

    static func decodeRegistrations(_ data: Data) -> [ApplicationRegistration]? {
        data.withUnsafeBytes { buffer -> [ApplicationRegistration]? in
            var reader = ByteReader(buffer)
            do {
                let count = Int(try reader.readUInt32())
                guard count <= buffer.count / 16 else { return nil }
                var registrations: [ApplicationRegistration] = []
                for _ in 0..<count {
                    let path = try reader.readText()
                    let digest = try reader.readField()
                    let identifier = try reader.readText()
                    let groupCount = Int(try reader.readUInt32())
                    guard groupCount <= buffer.count / 4 else { return nil }
                    var groups: [String] = []
                    for _ in 0..<groupCount { groups.append(try reader.readText()) }
                    registrations.append(
                        ApplicationRegistration(
                            executablePath: path, executableDigest: digest, applicationIdentifier: identifier,
                            accessGroups: groups))
                }
                return reader.isAtEnd ? registrations : nil
            } catch {
                return nil  // Reported by the caller as errSecDecode.
            }
        }
    }
}
