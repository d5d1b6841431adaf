package import FoundationEssentials
package import LatchkeyCrypto
package import LatchkeyEngine

/// What a device needs to sync, kept as one item of its own keychain (generic password, service
/// `com.latchkey.sync`, access group `com.latchkey.sync`, `AfterFirstUnlockThisDeviceOnly`): encrypted like
/// every item, never synced or backed up, readable only while the keychain can read such items. It holds
/// the server's connection string (which may carry a password), the vault and device ids, the device's key
/// pair seed and the vault keys.
package struct SyncConfiguration: Sendable {
    package var server: String
    package var vault: Data
    package var device: Data
    package var deviceName: String
    package var keyPair: BoxKeyPair
    package var keyring: VaultKeyring

    package static let group = "com.latchkey.sync"
    static let caller = CallerIdentity(applicationIdentifier: group, accessGroups: [group])
    static let magic = Data("LKSC".utf8) + [1]

    package init(
        server: String, vault: Data, device: Data, deviceName: String, keyPair: BoxKeyPair, keyring: VaultKeyring
    ) {
        self.server = server
        self.vault = vault
        self.device = device
        self.deviceName = deviceName
        self.keyPair = keyPair
        self.keyring = keyring
    }

    /// Whether the device holds a vault key (false while a join waits for approval).
    package var isJoined: Bool { keyring.current != nil }

    /// The configuration stored in `keychain`, or nil when it is not set up for sync. errSecInteractionNotAllowed
    /// while the keychain is locked before its first unlock.
    package static func load(from keychain: KeychainDatabase) throws(KeychainError) -> SyncConfiguration? {
        let found: [ItemResult]
        do throws(KeychainError) {
            found = try keychain.copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.service: .string(group), .account: .string("device")],
                    returning: [.data]),
                caller: caller)
        } catch {
            guard error.status == .itemNotFound else { throw error }
            return nil
        }
        guard var data = found.first?.data else { return nil }
        defer { data.withUnsafeMutableBytes { wipeBytes($0) } }
        return try decode(data)
    }

    /// Stores (or replaces) the configuration.
    package func save(to keychain: KeychainDatabase) throws(KeychainError) {
        var data = encoded()
        defer { data.withUnsafeMutableBytes { wipeBytes($0) } }
        try keychain.addOrUpdate(
            NewItem(
                .genericPassword,
                attributes: [
                    .service: .string(Self.group), .account: .string("device"),
                    .accessible: .string(Accessibility.afterFirstUnlockThisDeviceOnly.rawValue),
                    .label: .string("Latchkey sync: this device's keys"),
                ], data: data),
            caller: Self.caller)
    }

    /// Removes the configuration (leaving the vault).
    package static func remove(from keychain: KeychainDatabase) throws(KeychainError) {
        do throws(KeychainError) {
            _ = try keychain.delete(
                ItemQuery(.genericPassword, matching: [.service: .string(group)], limit: .all), caller: caller)
        } catch {
            guard error.status == .itemNotFound else { throw error }
        }
    }

    private func encoded() -> Data {
        var writer = ByteWriter(capacity: 256)
        writer.appendRaw(Self.magic)
        writer.appendField(server)
        writer.appendField(vault)
        writer.appendField(device)
        writer.appendField(deviceName)
        keyPair.seed.withUnsafeBytes { writer.appendRaw($0) }
        writer.append(UInt32(keyring.keys.count))
        for (id, key) in keyring.keys.sorted(by: { $0.key < $1.key }) {
            writer.append(id)
            key.withUnsafeBytes { writer.appendRaw($0) }
        }
        return writer.data
    }

    private static func decode(_ data: Data) throws(KeychainError) -> SyncConfiguration {
        let parsed: SyncConfiguration? = data.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            do {
                guard Data(try reader.readRawBuffer(magic.count)) == magic else { return nil }
                let server = try reader.readText()
                let vault = try reader.readField()
                let device = try reader.readField()
                let name = try reader.readText()
                let seed = SecureBytes(copying: try reader.readRawBuffer(32))
                var keyring = VaultKeyring()
                for _ in 0..<(try reader.readUInt32()) {
                    let id = Int32(bitPattern: try reader.readUInt32())
                    keyring.insert(SecureBytes(copying: try reader.readRawBuffer(32)), id: id)
                }
                guard reader.isAtEnd, vault.count == 16, device.count == 16 else { return nil }
                return SyncConfiguration(
                    server: server, vault: vault, device: device, deviceName: name,
                    keyPair: BoxKeyPair(seed: seed), keyring: keyring)
            } catch {
                return nil
            }
        }
        guard let parsed else { throw KeychainError.decode("the sync configuration item is malformed") }
        return parsed
    }
}
