import Foundation
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

/// One device of a test vault: its own keychain (unlocked) and sync client.
final class SyncDevice {
    static let app = CallerIdentity(applicationIdentifier: "com.example.app")
    let directory = TemporaryDirectory()
    let keychain: KeychainDatabase
    var client: SyncClient!
    let name: String

    init(_ name: String) throws {
        self.name = name
        keychain = try KeychainDatabase.create(
            at: directory.file("\(name).keychain"), passphrase: Passphrase("pass-\(name)"),
            keyDerivation: .minimum)
    }

    /// Sets up a vault on `cluster`; returns the recovery code.
    @discardableResult
    func setup(_ cluster: SyncTestServer) throws -> String { try setup(conninfo: cluster.conninfo) }

    /// Sets up a vault on the server `conninfo` names; returns the recovery code.
    @discardableResult
    func setup(conninfo: String) throws -> String {
        let made = try SyncClient.setup(keychain, server: conninfo, deviceName: name)
        client = made.client
        return made.recoveryCode
    }

    /// Joins with the recovery code.
    func join(_ cluster: SyncTestServer, recoveryCode: String) throws {
        try join(conninfo: cluster.conninfo, recoveryCode: recoveryCode)
    }

    /// Joins the server `conninfo` names with the recovery code.
    func join(conninfo: String, recoveryCode: String) throws {
        client = try SyncClient.join(
            keychain, server: conninfo, vault: nil, deviceName: name, recoveryCode: recoveryCode
        ).client
    }

    /// Joins through approval by `approver`.
    func join(_ cluster: SyncTestServer, approvedBy approver: SyncDevice) throws {
        let made = try SyncClient.join(
            keychain, server: cluster.conninfo, vault: nil, deviceName: name, recoveryCode: nil)
        client = made.client
        #expect(try approver.client.approve(code: made.joinCode) == name)
        #expect(try client.completeJoin())
        #expect(client.fingerprint == approver.client.fingerprint)
    }

    /// Devices named `names` in one vault on `cluster`, all in step: the first holds `items` (account →
    /// secret) and sets the vault up, the others join with the recovery code; everyone has synced.
    static func vault(_ cluster: SyncTestServer, _ names: String..., items: [(String, String)] = []) throws
        -> (devices: [SyncDevice], recoveryCode: String)
    {
        let devices = try names.map { try SyncDevice($0) }
        for (account, secret) in items { try devices[0].add(account, secret) }
        let code = try devices[0].setup(cluster)
        try devices[0].sync()
        for device in devices.dropFirst() {
            try device.join(cluster, recoveryCode: code)
            try device.sync()
        }
        return (devices, code)
    }

    @discardableResult
    func sync() throws(KeychainError) -> SyncReport { try client.sync() }

    func add(_ account: String, _ secret: String, service: String = "mail", sync: Bool = true) throws {
        try keychain.add(
            NewItem(
                .genericPassword,
                attributes: [
                    .service: .string(service), .account: .string(account), .synchronizable: .bool(sync),
                ], data: Data(secret.utf8)), caller: Self.app)
    }

    func update(_ account: String, _ secret: String, service: String = "mail") throws {
        _ = try keychain.update(
            ItemQuery(
                .genericPassword, matching: [.service: .string(service), .account: .string(account)],
                synchronizable: .yes, limit: .all),
            with: ItemChanges(data: Data(secret.utf8)), caller: Self.app)
    }

    func delete(_ account: String, service: String = "mail") throws {
        _ = try keychain.delete(
            ItemQuery(
                .genericPassword, matching: [.service: .string(service), .account: .string(account)],
                synchronizable: .yes, limit: .all),
            caller: Self.app)
    }

    /// Every synchronizable item of the app: "service/account" → secret.
    func contents() throws -> [String: String] {
        let found: [ItemResult]
        do throws(KeychainError) {
            found = try keychain.copyMatching(
                ItemQuery(.genericPassword, synchronizable: .yes, limit: .all, returning: [.attributes, .data]),
                caller: Self.app)
        } catch {
            guard error.status == .itemNotFound else { throw error }
            return [:]
        }
        var contents: [String: String] = [:]
        for item in found {
            contents["\(item[.service]?.stringValue ?? "")/\(item[.account]?.stringValue ?? "")"] = String(
                decoding: item.data ?? Data(), as: UTF8.self)
        }
        return contents
    }
}
