import Foundation
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

@Suite("What syncs: synchronizable items, never ThisDeviceOnly ones; locked devices", .serialized)
struct SyncScopeTests {
    @Test(arguments: SyncConnection.allCases) func thisDeviceOnlyAndNonSynchronizableItemsNeverLeaveTheDevice(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let a = try SyncDevice("a")
        let b = try SyncDevice("b")
        try a.add("plain", "local", sync: false)
        try a.keychain.add(
            NewItem(
                .genericPassword,
                attributes: [
                    .service: .string("mail"), .account: .string("pinned"), .synchronizable: .bool(true),
                    .accessible: .string(Accessibility.whenUnlockedThisDeviceOnly.rawValue),
                ], data: Data("device-only".utf8)), caller: SyncDevice.app)
        try a.add("travels", "yes")
        let code = try a.setup(cluster)
        #expect(try a.sync().pushed == 1)
        try b.join(cluster, recoveryCode: code)
        try b.sync()
        #expect(try b.contents() == ["mail/travels": "yes"])
        // Deleting the device-only item leaves nothing to push either.
        try a.delete("pinned")
        #expect(try a.keychain.sync.counts().pending == 0)
    }

    @Test(arguments: SyncConnection.allCases)
    func aLockedDeviceReceivesChangesAndWritesThemAfterUnlockAndPushesNothingItCannotRead(_ connection: SyncConnection)
        throws
    {
        let cluster = try SyncTestServer(connection)
        let a = try SyncDevice("a")
        let b = try SyncDevice("b")
        let code = try a.setup(cluster)
        try b.join(cluster, recoveryCode: code)
        try b.sync()
        try b.add("mine", "unpushed")
        b.keychain.lock()
        try a.add("alice", "while-b-locked")
        try a.sync()
        let locked = try b.sync()
        #expect(locked.pulled == 1)
        #expect(locked.pushed == 0)
        #expect(locked.waiting == 2)  // its own change, and the row it cannot write yet
        #expect(try b.keychain.sync.counts().inbox == 1)
        try b.keychain.unlock(with: Passphrase("pass-b"))
        let unlocked = try b.sync()
        #expect(unlocked.applied == 1)
        #expect(unlocked.pushed == 1)
        #expect(try b.contents() == ["mail/alice": "while-b-locked", "mail/mine": "unpushed"])
        try a.sync()
        #expect(try a.contents() == ["mail/alice": "while-b-locked", "mail/mine": "unpushed"])
    }

    /// What waited in the inbox while the device was locked is written before the fresh pages that follow
    /// it, and a newer version of the same item among them wins: nothing is refused, the inbox empties.
    @Test(arguments: SyncConnection.allCases)
    func theInboxLeftWhileLockedIsWrittenBeforeNewerPagesOfTheSameItem(_ connection: SyncConnection) throws {
        let cluster = try SyncTestServer(connection)
        let a = try SyncDevice("a")
        let b = try SyncDevice("b")
        let code = try a.setup(cluster)
        try b.join(cluster, recoveryCode: code)
        try b.sync()
        b.keychain.lock()
        try a.add("alice", "first")
        try a.sync()
        #expect(try b.sync().waiting == 1)
        #expect(try b.keychain.sync.counts().inbox == 1)
        try a.update("alice", "second")
        try a.add("bob", "new")
        try a.sync()
        try b.keychain.unlock(with: Passphrase("pass-b"))
        let unlocked = try b.sync()
        #expect(unlocked.rejected == 0)
        #expect(try b.keychain.sync.rejections().isEmpty)
        #expect(try b.keychain.sync.counts().inbox == 0)
        #expect(try b.contents() == ["mail/alice": "second", "mail/bob": "new"])
        #expect(try b.keychain.verifyIntegrity().damaged.isEmpty)
    }

    @Test(arguments: SyncConnection.allCases) func joiningNeedsApprovalOrTheRightRecoveryCode(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let a = try SyncDevice("a")
        let b = try SyncDevice("b")
        let c = try SyncDevice("c")
        let code = try a.setup(cluster)
        try a.add("alice", "secret")
        try a.sync()

        // A wrong code of the right shape, and text that is no code at all.
        let wrong = String(code.reversed())
        #expect(
            status { try c.join(cluster, recoveryCode: wrong.replacingOccurrences(of: "I", with: "J")) } == .authFailed)
        #expect(status { try c.join(cluster, recoveryCode: "not a code") } == .param)
        #expect(try SyncConfiguration.load(from: c.keychain) == nil)

        // Pending: nothing to read until a device of the vault approves the code it shows.
        let pending = try SyncClient.join(
            b.keychain, server: cluster.conninfo, vault: nil, deviceName: "b", recoveryCode: nil)
        #expect(try pending.client.completeJoin() == false)
        #expect(status { try pending.client.sync() } == .interactionNotAllowed)
        #expect(status { _ = try a.client.approve(code: "000-000") } == .itemNotFound)
        #expect(try a.client.pendingDevices().map(\.code) == [pending.joinCode])
        #expect(try a.client.approve(code: pending.joinCode) == "b")
        #expect(try pending.client.completeJoin())
        #expect(pending.client.fingerprint == a.client.fingerprint)
        try pending.client.sync()
        b.client = pending.client
        #expect(try b.contents() == ["mail/alice": "secret"])
        // A second device with the same name is refused.
        #expect(status { try c.join(cluster, approvedBy: a) } == nil)
        let d = try SyncDevice("a")
        #expect(status { try d.join(cluster, recoveryCode: code) } == .duplicateItem)
    }
}
