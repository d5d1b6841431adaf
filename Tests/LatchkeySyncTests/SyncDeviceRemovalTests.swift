import Foundation
import LatchkeyCrypto
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

@Suite("Removing a device rotates the vault key", .serialized)
struct SyncDeviceRemovalTests {
    @Test(arguments: SyncConnection.allCases) func aRemovedDeviceCannotReadOrWriteAnythingAfterItsRemoval(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let a = try SyncDevice("a")
        let b = try SyncDevice("b")
        let stolen = try SyncDevice("stolen")
        try a.add("before", "old-secret")
        let code = try a.setup(cluster)
        try a.sync()
        try b.join(cluster, approvedBy: a)
        try stolen.join(cluster, recoveryCode: code)
        try b.sync()
        try stolen.sync()

        try a.client.removeDevice(named: "stolen")
        #expect(status { try a.client.removeDevice(named: "stolen") } == .itemNotFound)
        #expect(status { try a.client.removeDevice(named: "a") } == .param)
        try a.add("after", "new-secret")
        try a.sync()
        #expect(try b.sync().applied == 1)
        #expect(try b.contents() == ["mail/before": "old-secret", "mail/after": "new-secret"])
        #expect(b.client.configuration.keyring.currentID == 2)

        // The removed device's pushes are refused by the server, and what came after is under a key it lacks.
        try stolen.add("sneaky", "x")
        #expect(status { try stolen.sync() } == .authFailed)
        #expect(
            try cluster.psql(
                "SELECT count(*) FROM latchkey.vault_keys k JOIN latchkey.devices d ON d.vault = k.vault AND d.id = k.device WHERE d.name = 'stolen'"
            )
            .trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        let rows = try cluster.psql(
            "SELECT encode(item, 'hex') || ' ' || version || ' ' || key_id || ' ' || encode(ciphertext, 'hex') || ' ' || deleted || ' ' || encode(author, 'hex') FROM latchkey.items WHERE key_id = 2"
        )
        let row = try #require(rows.split(separator: "\n").first?.split(separator: " "))
        let envelope = SyncEnvelope(
            sequence: 0, itemID: Data(hex: String(row[0])), version: Int64(row[1])!, deleted: row[4] == "t",
            keyID: Int32(row[2])!,
            ciphertext: Data(hex: String(row[3])), author: Data(hex: String(row[5])))
        let opened = Result { () throws(KeychainError) in
            try VaultCrypto.open(
                envelope, vault: stolen.client.configuration.vault, keyring: stolen.client.configuration.keyring)
        }
        #expect(throws: KeychainError(.decode, "it is sealed under vault key 2, which this device does not hold")) {
            try opened.get()
        }

        // The recovery code still works after the rotation, and opens the new key.
        let c = try SyncDevice("c")
        try c.join(cluster, recoveryCode: code)
        try c.sync()
        #expect(try c.contents() == ["mail/before": "old-secret", "mail/after": "new-secret"])
        #expect(
            try a.client.devices().map { "\($0.name) \($0.state) \($0.verified)" }.sorted()
                == ["a active true", "b active true", "c active true", "stolen removed false"])
    }

    @Test(arguments: SyncConnection.allCases) func aKeyTheServerForgesForADeviceIsRefused(_ connection: SyncConnection)
        throws
    {
        let cluster = try SyncTestServer(connection)
        let a = try SyncDevice("a")
        let b = try SyncDevice("b")
        let code = try a.setup(cluster)
        try b.join(cluster, recoveryCode: code)
        // The server seals a key of its own as "key 2" to b: it cannot tag it with key 1.
        let forged = try VaultCrypto.deliver(
            SecureBytes(randomCount: 32), id: 2, vault: b.client.configuration.vault,
            to: b.client.configuration.keyPair.publicKey,
            authKey: SecureBytes(randomCount: 32))
        try cluster.psql(
            "INSERT INTO latchkey.vault_keys SELECT vault, 2, id, '\\x\(forged.map { String(format: "%02x", $0) }.joined())'::bytea FROM latchkey.devices WHERE name = 'b'"
        )
        #expect(
            throws: KeychainError(
                .authFailed, "vault key 2 does not carry the tag of the key before it: the server may have forged it")
        ) {
            try b.sync()
        }
    }
}

extension Data {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self.init(bytes)
    }
}
