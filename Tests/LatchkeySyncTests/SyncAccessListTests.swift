import Foundation
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

/// Items' access lists and sync (issue 53; docs/DESIGN-NOTES.md, "Access lists"): a list is its device's —
/// identities are that machine's — so a synced item arrives on another device with an empty list there; each
/// device's grants stay on its copy when the item changes anywhere, and go when it is deleted anywhere.
@Suite(.serialized) struct SyncAccessListTests {
    static let tool = TrustedProgram.executable(path: "/usr/bin/tool", digest: Data(repeating: 7, count: 32))
    static let app = TrustedProgram.sandbox(appID: "org.example.App")

    /// The device's reference of its copy of `account`'s item.
    func reference(_ device: SyncDevice, _ account: String) throws -> Data {
        let found = try device.keychain.copyMatching(
            ItemQuery(
                .genericPassword, matching: [.account: .string(account)], synchronizable: .yes,
                returning: .persistentReference),
            caller: SyncDevice.app)
        return try #require(found.first?.persistentReference)
    }

    @Test func eachDeviceKeepsItsOwnList() throws {
        let cluster = try SyncTestServer(.direct)
        let (devices, _) = try SyncDevice.vault(cluster, "laptop", "desktop", items: [("alice", "one")])
        let (laptop, desktop) = (devices[0], devices[1])
        try laptop.keychain.grantAccess(to: Self.tool, onItem: try reference(laptop, "alice"), origin: .command)
        #expect(try laptop.sync().pushed == 0, "a list is not an item's change")
        try desktop.sync()
        #expect(try desktop.keychain.accessList(of: try reference(desktop, "alice")).isEmpty, "not carried")

        try desktop.keychain.grantAccess(to: Self.app, onItem: try reference(desktop, "alice"), origin: .answer)
        try laptop.update("alice", "two")
        #expect(try laptop.sync().pushed == 1)
        #expect(try desktop.sync().applied == 1)
        #expect(try desktop.contents() == ["mail/alice": "two"])
        #expect(try desktop.keychain.accessList(of: try reference(desktop, "alice")).map(\.program) == [Self.app])
        #expect(try laptop.keychain.accessList(of: try reference(laptop, "alice")).map(\.program) == [Self.tool])

        try laptop.delete("alice")
        #expect(try laptop.sync().pushed == 1)
        #expect(try desktop.sync().applied == 1)
        #expect(try desktop.keychain.itemsListing(Self.app).isEmpty, "gone with the item")
        #expect(try laptop.keychain.itemsListing(Self.tool).isEmpty)
    }
}
