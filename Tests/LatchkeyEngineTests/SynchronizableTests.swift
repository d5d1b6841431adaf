import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// SEMANTICS.md §2, "Synchronizable filter".
@Suite(.dedicatedThreads) struct SynchronizableTests {
    let directory = TemporaryDirectory()

    func filled() throws -> DatabaseBackend {
        let backend = DatabaseBackend(database: try Fixture.newKeychain(in: directory), caller: Fixture.app)
        _ = try backend.add(["class": "genp", "svce": "s", "acct": "local", "v_Data": Data("l".utf8)])
        _ = try backend.add(["class": "genp", "svce": "s", "acct": "cloud", "sync": true, "v_Data": Data("c".utf8)])
        return backend
    }

    func accounts(_ backend: DatabaseBackend, _ query: [String: Any]) throws -> Set<String> {
        let found = try backend.copyMatching(
            query.merging(["r_Attributes": true, "m_Limit": "m_LimitAll"]) { a, _ in a })
        return Set((found as? [[String: Any]] ?? []).compactMap { $0["acct"] as? String })
    }

    @Test func withoutTheAttributeOnlyNonSynchronizableItemsMatch() throws {
        let backend = try filled()
        #expect(try accounts(backend, ["class": "genp"]) == ["local"])
        #expect(try accounts(backend, ["class": "genp", "sync": false]) == ["local"])
        #expect(try accounts(backend, ["class": "genp", "sync": true]) == ["cloud"])
        #expect(try accounts(backend, ["class": "genp", "sync": "syna"]) == ["local", "cloud"])
    }

    @Test func theFilterAppliesToUpdateAndDeleteToo() throws {
        let backend = try filled()
        try backend.update(["class": "genp"], with: ["icmt": "touched"])
        let cloud = try backend.copyMatching(["class": "genp", "sync": true, "r_Attributes": true]) as? [String: Any]
        #expect(cloud?["icmt"] == nil)
        try backend.delete(["class": "genp", "sync": "syna"])
        #expect(status { _ = try backend.copyMatching(["class": "genp", "sync": "syna"]) } == .itemNotFound)
    }

    @Test func synchronizableAnyOnAddIsDropped() throws {
        let backend = try filled()
        _ = try backend.add(["class": "genp", "svce": "t", "sync": "syna", "v_Data": Data()])
        #expect(try accounts(backend, ["class": "genp", "svce": "t"]) == [""])
    }

    /// SEMANTICS.md §4 (corrected): Apple stores a synchronizable item of a ThisDeviceOnly class — the add is
    /// not refused (KeychainAccess's own suite adds one with `try!`) — and the item never leaves the device.
    @Test(arguments: ["aku", "cku", "dku", "akpu"])
    func thisDeviceOnlyItemsMayCarryTheSyncFlag(_ accessibility: String) throws {
        let backend = try filled()
        _ = try backend.add([
            "class": "genp", "svce": "x", "sync": true, "pdmn": accessibility, "v_Data": Data("x".utf8),
        ])
        let stored =
            try backend.copyMatching(["class": "genp", "svce": "x", "sync": true, "r_Attributes": true])
            as? [String: Any]
        #expect(stored?["pdmn"] as? String == accessibility)
        #expect(stored?["sync"] as? Int == 1)
        // Moving an item into such a class, or flagging one of such a class, is accepted the same way.
        try backend.update(["class": "genp", "svce": "x", "sync": true], with: ["pdmn": "ak"])
        try backend.update(["class": "genp", "svce": "x", "sync": true], with: ["pdmn": accessibility])
        _ = try backend.add(["class": "genp", "svce": "y", "pdmn": accessibility])
        try backend.update(["class": "genp", "svce": "y"], with: ["sync": true])
        #expect(try accounts(backend, ["class": "genp", "svce": "y", "sync": true]) == [""])
    }
}
