package import FoundationEssentials
internal import LatchkeyCrypto
package import LatchkeyEngine
internal import LatchkeyPOSIX

/// Setting a vault up, joining one, approving and removing devices, leaving; the vault keys' chain.
extension SyncClient {
    /// Creates a vault on the server for this keychain: this device's key pair, vault key 1, the recovery
    /// code's key pair (the code is returned, to be shown once, and kept nowhere). Then pushes everything.
    package static func setup(_ keychain: KeychainDatabase, server conninfo: String, deviceName: String)
        throws(KeychainError) -> (client: SyncClient, recoveryCode: String, fingerprint: String)
    {
        guard try SyncConfiguration.load(from: keychain) == nil else {
            throw SyncFailure.alreadySetUp.error(
                .duplicateItem, "this keychain is set up for sync already (latchkey sync leave first)")
        }
        try validate(deviceName: deviceName)
        let vault = SecureRandom.bytes(16)
        let device = SecureRandom.bytes(16)
        let keyPair = BoxKeyPair.random()
        var keyring = VaultKeyring()
        let key = SecureBytes(randomCount: AEAD.keyLength)
        keyring.insert(key, id: 1)
        let code = VaultCrypto.newRecoveryCode()
        let recovery = try VaultCrypto.recoveryKeys(code: code, vault: vault)
        let server = try connect(conninfo)
        try serverCall {
            try server.createVault(vault)
            try server.registerDevice(
                vault: vault, id: device, name: deviceName, publicKey: keyPair.publicKey, state: "active",
                approval: VaultCrypto.approval(
                    vault: vault, device: device, publicKey: keyPair.publicKey, keyID: 1, key: key))
            let recoveryID = SecureRandom.bytes(16)
            try server.registerDevice(
                vault: vault, id: recoveryID, name: "recovery code", publicKey: recovery.keyPair.publicKey,
                state: "recovery", approval: nil)
            try server.putKeys(
                vault: vault,
                [
                    (device, 1, try VaultCrypto.deliver(key, id: 1, vault: vault, to: keyPair.publicKey, authKey: nil)),
                    (
                        recoveryID, 1,
                        try VaultCrypto.deliver(
                            key, id: 1, vault: vault, to: recovery.keyPair.publicKey, authKey: recovery.tagKey)
                    ),
                ])
        }
        let configuration = SyncConfiguration(
            server: conninfo, vault: vault, device: device, deviceName: deviceName,
            keyPair: keyPair, keyring: keyring)
        try keychain.sync.reset()
        try configuration.save(to: keychain)
        try keychain.sync.setValues(["vault": vault, "device": device])
        let client = SyncClient(keychain: keychain, configuration: configuration)
        client.server = server
        return (client, code, VaultCrypto.fingerprint(vault: vault, firstKey: key))
    }

    /// Registers this keychain as a new device of a vault. With a recovery code, it gets the vault keys at
    /// once (errSecAuthFailed for a wrong code); without, it waits as `pending` for `approve` on a device of
    /// the vault: the returned code is what that device asks for. `vault` may be left out when the server
    /// holds one vault.
    package static func join(
        _ keychain: KeychainDatabase, server conninfo: String, vault requested: Data?, deviceName: String,
        recoveryCode: String?
    ) throws(KeychainError) -> (client: SyncClient, joinCode: String) {
        if let existing = try SyncConfiguration.load(from: keychain) {
            guard !existing.isJoined else {
                throw SyncFailure.alreadySetUp.error(
                    .duplicateItem, "this keychain is set up for sync already (latchkey sync leave first)")
            }
            try remove(existing, from: keychain)
        }
        try validate(deviceName: deviceName)
        let server = try connect(conninfo)
        let vault: Data
        if let requested {
            vault = requested
        } else {
            let vaults = try serverCall { try server.vaults() }
            guard vaults.count == 1, let only = vaults.first else {
                throw SyncFailure.noVault.error(
                    .param,
                    vaults.isEmpty
                        ? "the server holds no vault (latchkey sync setup makes one)"
                        : "the server holds \(vaults.count) vaults: name one with --vault")
            }
            vault = only
        }
        let devices = try serverCall { try server.devices(vault: vault) }
        guard !devices.isEmpty else {
            throw SyncFailure.noVault.error(.itemNotFound, "the server has no vault \(Hex.encode(vault))")
        }
        guard !devices.contains(where: { $0.name == deviceName && $0.state != "removed" }) else {
            throw SyncFailure.deviceNameTaken.error(
                .duplicateItem, "the vault has a device named \(deviceName) already")
        }
        let device = SecureRandom.bytes(16)
        let keyPair = BoxKeyPair.random()
        var configuration = SyncConfiguration(
            server: conninfo, vault: vault, device: device, deviceName: deviceName,
            keyPair: keyPair, keyring: VaultKeyring())
        if let recoveryCode {
            let recovery = try VaultCrypto.recoveryKeys(code: recoveryCode, vault: vault)
            guard
                let row = devices.first(where: { $0.state == "recovery" && $0.publicKey == recovery.keyPair.publicKey })
            else {
                throw SyncFailure.wrongRecoveryCode.error(.authFailed, "the recovery code is not this vault's")
            }
            let delivered = try serverCall { try server.keys(vault: vault, device: row.id) }
            configuration.keyring = try openChain(
                delivered, vault: vault, keyPair: recovery.keyPair, firstAuth: recovery.tagKey)
            guard let current = configuration.keyring.current else {
                throw SyncFailure.wrongRecoveryCode.error(.authFailed, "the vault has no key for the recovery code")
            }
            let currentID = configuration.keyring.currentID
            try serverCall {
                try server.registerDevice(
                    vault: vault, id: device, name: deviceName, publicKey: keyPair.publicKey, state: "active",
                    approval: VaultCrypto.approval(
                        vault: vault, device: device, publicKey: keyPair.publicKey, keyID: currentID, key: current))
                try server.putKeys(
                    vault: vault,
                    try deliveries(of: configuration.keyring, vault: vault, to: device, publicKey: keyPair.publicKey))
            }
        } else {
            try serverCall {
                try server.registerDevice(
                    vault: vault, id: device, name: deviceName, publicKey: keyPair.publicKey, state: "pending",
                    approval: nil)
            }
        }
        try keychain.sync.reset()
        try configuration.save(to: keychain)
        try keychain.sync.setValues(["vault": vault, "device": device])
        let client = SyncClient(keychain: keychain, configuration: configuration)
        client.server = server
        return (client, VaultCrypto.joinCode(vault: vault, publicKey: keyPair.publicKey))
    }

    /// For a pending join: fetches the vault keys once an existing device approved this one. Returns
    /// whether it is joined now.
    package func completeJoin() throws(KeychainError) -> Bool {
        guard !configuration.isJoined else { return true }
        let server = try connection()
        let delivered = try serverCall { try server.keys(vault: configuration.vault, device: configuration.device) }
        guard !delivered.isEmpty else { return false }
        configuration.keyring = try Self.openChain(
            delivered, vault: configuration.vault, keyPair: configuration.keyPair, firstAuth: nil)
        try configuration.save(to: keychain)
        return true
    }

    /// The code this device shows while it waits for approval.
    package var joinCode: String {
        VaultCrypto.joinCode(vault: configuration.vault, publicKey: configuration.keyPair.publicKey)
    }

    /// When this device last completed a round (nil: never).
    package var lastSync: String? {
        get throws(KeychainError) { try keychain.sync.value("last-sync").map { String(decoding: $0, as: UTF8.self) } }
    }

    /// The vault's fingerprint (nil before the join completes).
    package var fingerprint: String? {
        configuration.keyring[1].map { VaultCrypto.fingerprint(vault: configuration.vault, firstKey: $0) }
    }

    /// Devices waiting for approval, with the code each shows.
    package func pendingDevices() throws(KeychainError) -> [(name: String, code: String)] {
        let server = try connection()
        return try serverCall { try server.devices(vault: configuration.vault) }
            .filter { $0.state == "pending" }
            .map { ($0.name, VaultCrypto.joinCode(vault: configuration.vault, publicKey: $0.publicKey)) }
    }

    /// Approves the pending device that shows `code`: hands it every vault key, sealed to its public key.
    /// errSecItemNotFound when no pending device shows that code.
    package func approve(code: String) throws(KeychainError) -> String {
        try requireJoined()
        let server = try connection()
        let vault = configuration.vault
        let wanted = code.filter(\.isNumber)
        guard
            let device = try serverCall({ try server.devices(vault: vault) }).first(where: {
                $0.state == "pending"
                    && VaultCrypto.joinCode(vault: vault, publicKey: $0.publicKey).filter(\.isNumber) == wanted
            })
        else {
            throw SyncFailure.noSuchJoinCode.error(.itemNotFound, "no device waiting to join shows the code \(code)")
        }
        let currentID = configuration.keyring.currentID
        guard let current = configuration.keyring.current else {
            throw KeychainError(.internal, "a joined device has no vault key")
        }
        try serverCall {
            try server.connection.execute("BEGIN")
            try server.putKeys(
                vault: vault,
                try Self.deliveries(of: configuration.keyring, vault: vault, to: device.id, publicKey: device.publicKey)
            )
            try server.setDevice(
                vault: vault, id: device.id, state: "active",
                approval: VaultCrypto.approval(
                    vault: vault, device: device.id, publicKey: device.publicKey, keyID: currentID, key: current))
            try server.connection.execute("COMMIT")
        }
        return device.name
    }

    /// Removes a device from the vault and rotates the vault key: key n+1 goes to every remaining approved
    /// device and to the recovery code, never to the removed one, and every later row is sealed under it —
    /// the removed device cannot read anything written after its removal.
    package func removeDevice(named name: String) throws(KeychainError) {
        try requireJoined()
        let server = try connection()
        let vault = configuration.vault
        let devices = try serverCall { try server.devices(vault: vault) }
        guard let target = devices.first(where: { $0.name == name && ($0.state == "active" || $0.state == "pending") })
        else {
            throw SyncFailure.noSuchDevice.error(.itemNotFound, "the vault has no device named \(name)")
        }
        guard target.id != configuration.device else {
            throw KeychainError.param(
                "this device cannot remove itself; remove it from another device, or leave with latchkey sync leave")
        }
        try refreshKeys()
        let previousID = configuration.keyring.currentID
        guard let previous = configuration.keyring.current else {
            throw KeychainError(.internal, "a joined device has no vault key")
        }
        let newID = previousID + 1
        let newKey = SecureBytes(randomCount: AEAD.keyLength)
        var deliveries: [(device: Data, keyID: Int32, sealed: Data)] = []
        var approvals: [(Data, Data)] = []
        for device in devices where device.id != target.id {
            switch device.state {
            case "active":
                // Only devices this vault approved get the new key (the server cannot slip one in).
                guard VaultCrypto.isApproved(device, vault: vault, keyring: configuration.keyring) else { continue }
                deliveries.append(
                    (
                        device.id, newID,
                        try VaultCrypto.deliver(
                            newKey, id: newID, vault: vault, to: device.publicKey, authKey: previous)
                    ))
                approvals.append(
                    (
                        device.id,
                        VaultCrypto.approval(
                            vault: vault, device: device.id, publicKey: device.publicKey, keyID: newID, key: newKey)
                    ))
            case "recovery":
                deliveries.append(
                    (
                        device.id, newID,
                        try VaultCrypto.deliver(
                            newKey, id: newID, vault: vault, to: device.publicKey, authKey: previous)
                    ))
            default:
                continue
            }
        }
        try serverCall {
            try server.connection.execute("BEGIN")
            try server.setDevice(vault: vault, id: target.id, state: "removed", approval: nil)
            try server.connection.query(
                "DELETE FROM latchkey.vault_keys WHERE vault = $1 AND device = $2", [.bytes(vault), .bytes(target.id)])
            try server.putKeys(vault: vault, deliveries)
            for (id, approval) in approvals {
                try server.connection.query(
                    "UPDATE latchkey.devices SET approval = $3 WHERE vault = $1 AND id = $2",
                    [.bytes(vault), .bytes(id), .bytes(approval)])
            }
            try server.connection.execute("COMMIT")
        }
        configuration.keyring.insert(newKey, id: newID)
        try configuration.save(to: keychain)
    }

    /// Leaves the vault on this device: forgets the configuration and every sync record; items stay.
    package func leave() throws(KeychainError) {
        try Self.remove(configuration, from: keychain)
    }

    private static func remove(_ configuration: SyncConfiguration, from keychain: KeychainDatabase)
        throws(KeychainError)
    {
        try SyncConfiguration.remove(from: keychain)
        try keychain.sync.reset()
    }

    // MARK: Keys and devices

    /// Fetches vault keys newer than this device holds (a rotation) and checks each is tagged by the one before.
    func refreshKeys() throws(KeychainError) {
        let server = try connection()
        let held = configuration.keyring.currentID
        let delivered = try serverCall {
            try server.keys(vault: configuration.vault, device: configuration.device, after: held)
        }
        guard !delivered.isEmpty else { return }
        var keyring = configuration.keyring
        for (id, sealed) in delivered {
            guard let previous = keyring[id - 1] else {
                throw SyncFailure.forgedKey.error(.authFailed, "vault key \(id) arrived without key \(id - 1)")
            }
            keyring.insert(
                try VaultCrypto.receive(
                    sealed, id: id, vault: configuration.vault, keyPair: configuration.keyPair, authKey: previous),
                id: id)
        }
        configuration.keyring = keyring
        try configuration.save(to: keychain)
    }

    private static func openChain(
        _ delivered: [(keyID: Int32, sealed: Data)], vault: Data, keyPair: BoxKeyPair, firstAuth: SecureBytes?
    )
        throws(KeychainError) -> VaultKeyring
    {
        var keyring = VaultKeyring()
        for (id, sealed) in delivered.sorted(by: { $0.keyID < $1.keyID }) {
            let auth = id == 1 ? firstAuth : keyring[id - 1]
            guard id == 1 || auth != nil else {
                throw SyncFailure.forgedKey.error(.authFailed, "vault key \(id) arrived without key \(id - 1)")
            }
            keyring.insert(
                try VaultCrypto.receive(sealed, id: id, vault: vault, keyPair: keyPair, authKey: auth), id: id)
        }
        return keyring
    }

    private static func deliveries(of keyring: VaultKeyring, vault: Data, to device: Data, publicKey: Data)
        throws(KeychainError)
        -> [(device: Data, keyID: Int32, sealed: Data)]
    {
        var deliveries: [(device: Data, keyID: Int32, sealed: Data)] = []
        for (id, key) in keyring.keys.sorted(by: { $0.key < $1.key }) {
            deliveries.append(
                (
                    device, id,
                    try VaultCrypto.deliver(key, id: id, vault: vault, to: publicKey, authKey: keyring[id - 1])
                ))
        }
        return deliveries
    }

    private func requireJoined() throws(KeychainError) {
        guard try completeJoin() else {
            throw SyncFailure.awaitingApproval.error(.interactionNotAllowed, "this device waits for approval")
        }
    }

    private static func validate(deviceName: String) throws(KeychainError) {
        guard (1...200).contains(deviceName.count),
            !deviceName.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw KeychainError.param("a device name has 1 to 200 characters and no control character")
        }
    }
}
