public import Foundation
internal import LatchkeyCrypto
internal import LatchkeyStorage

/// A program registered with the keychain: the Linux counterpart of an app's signed entitlements. The
/// agent grants a connecting process the registration whose executable path and digest match the binary it
/// runs; a changed binary loses its registration until it is registered again.
public struct ApplicationRegistration: Hashable, Sendable, CustomStringConvertible {
    /// The executable's absolute path.
    public var executablePath: String
    /// BLAKE2b-256 of the executable's contents when it was registered.
    public var executableDigest: Data
    /// The application identifier.
    public var applicationIdentifier: String
    /// Its access groups (the first is the default for adds; "*" grants every group).
    public var accessGroups: [String]

    /// Creates a registration.
    public init(executablePath: String, executableDigest: Data, applicationIdentifier: String, accessGroups: [String]) {
        self.executablePath = executablePath
        self.executableDigest = executableDigest
        self.applicationIdentifier = applicationIdentifier
        self.accessGroups = accessGroups
    }

    /// Registers the executable at `path` as it is now (its digest is computed from the file). Symbolic
    /// links are resolved: the kernel reports the real path of the program a process runs.
    public init(executableAt given: String, applicationIdentifier: String, accessGroups: [String]) throws(KeychainError) {
        try Self.validate(applicationIdentifier: applicationIdentifier, accessGroups: accessGroups)
        guard given.hasPrefix("/") else { throw KeychainError.param("the executable path must be absolute, not \(given)") }
        let path = URL(fileURLWithPath: given).resolvingSymlinksInPath().path
        guard let digest = FileDigest.of(path: path) else {
            throw KeychainError.param("cannot read the executable \(path)")
        }
        self.init(executablePath: path, executableDigest: digest, applicationIdentifier: applicationIdentifier,
                  accessGroups: accessGroups)
    }

    /// Checks what a registration grants: an application identifier that is a valid name and not the
    /// wildcard, and at least one access group, each a valid name or the wildcard itself (`--wildcard`).
    static func validate(applicationIdentifier: String, accessGroups: [String]) throws(KeychainError) {
        try CallerIdentity.validate(name: applicationIdentifier, as: "the application identifier")
        guard !accessGroups.isEmpty else { throw KeychainError.param("a registration needs at least one access group") }
        for group in accessGroups where group != CallerIdentity.wildcardGroup {
            try CallerIdentity.validate(name: group, as: "the access group")
        }
    }

    /// The identity operations run with.
    public var caller: CallerIdentity {
        CallerIdentity(applicationIdentifier: applicationIdentifier, accessGroups: accessGroups)
    }

    public var description: String {
        "\(applicationIdentifier) \(accessGroups) \(executablePath) (\(executableDigest.prefix(8).map { String(format: "%02x", $0) }.joined()))"
    }
}

extension KeychainDatabase {
    /// The registered applications. They are sealed under a key derived from the after-first-unlock class key,
    /// so only someone who knew the passphrase can have written them; reading needs a first unlock.
    public func registeredApplications() throws(KeychainError) -> [ApplicationRegistration] {
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
    public func register(_ registration: ApplicationRegistration, passphrase: Passphrase) throws(KeychainError) {
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
    public func unregister(executablePath path: String, passphrase: Passphrase) throws(KeychainError) -> Bool {
        let key = try registryKey(passphrase: passphrase)
        let all = try registeredApplications(key: key)
        let kept = all.filter { $0.executablePath != path }
        try storeRegistrations(kept, key: key)
        return kept.count != all.count
    }

    /// Checks the passphrase (Argon2id, deliberately slow) without changing the lock state:
    /// `errSecAuthFailed` when it is wrong.
    public func verifyPassphrase(_ passphrase: Passphrase) throws(KeychainError) {
        _ = try Self.openKeybag(try readKeyMeta(), passphrase: passphrase)
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
        guard let classKey = material.classKeys[.afterFirstUnlock] else { throw KeychainError.decode("the keybag lacks a class key") }
        return Self.registryKey(classKey)
    }

    private static func registryKey(_ classKey: SecureBytes) -> SecureBytes {
        KeyedDigest.subkey(of: classKey, label: "latchkey/v1/registry")
    }

    private func storeRegistrations(_ registrations: [ApplicationRegistration], key: SecureBytes) throws(KeychainError) {
        let meta = try readKeyMeta()
        let sealed = AEAD.seal(Self.encodeRegistrations(registrations), key: key,
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
                    registrations.append(ApplicationRegistration(
                        executablePath: path, executableDigest: digest, applicationIdentifier: identifier, accessGroups: groups))
                }
                return reader.isAtEnd ? registrations : nil
            } catch {
                return nil  // Reported by the caller as errSecDecode.
            }
        }
    }
}
