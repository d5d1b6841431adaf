import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// `kSecMatchHostOrSubdomainOfHost` (iOS 18, macOS 15): internet passwords whose server is the host or a
/// subdomain of it; other classes are `errSecUnimplemented`, as Apple's server answers; update and delete
/// refuse it.
@Suite(.dedicatedThreads) struct HostMatchTests {
    let directory = TemporaryDirectory()

    func backend() throws -> DatabaseBackend {
        let backend = DatabaseBackend(database: try Fixture.newKeychain(in: directory), caller: Fixture.app)
        for server in [
            "example.com", "www.example.com", "a.b.Example.COM", "badexample.com", "example.com.evil.org",
            "example.org",
        ] {
            _ = try backend.add(["class": "inet", "srvr": server, "acct": "alice", "v_Data": Data(server.utf8)])
        }
        return backend
    }

    func servers(_ backend: DatabaseBackend, _ host: Any, extra: [String: Any] = [:]) throws -> [String] {
        let found = try backend.copyMatching(
            [
                "class": "inet", "m_HostOrSubdomainOfHost": host, "m_Limit": "m_LimitAll",
                "r_Attributes": true,
            ].merging(extra) { _, new in new })
        return ((found as? [[String: Any]]) ?? []).compactMap { $0["srvr"] as? String }.sorted()
    }

    func status(_ body: () throws -> Void) -> KeychainStatus? {
        do {
            try body()
            return nil
        } catch let error as KeychainError {
            return error.status
        } catch {
            return nil
        }
    }

    @Test func theHostAndItsSubdomainsMatchWithoutRegardToCase() throws {
        let backend = try backend()
        #expect(try servers(backend, "example.com") == ["a.b.Example.COM", "example.com", "www.example.com"])
        #expect(try servers(backend, "EXAMPLE.com") == ["a.b.Example.COM", "example.com", "www.example.com"])
        #expect(try servers(backend, "b.example.com") == ["a.b.Example.COM"])
        #expect(try servers(backend, "www.example.com", extra: ["acct": "alice"]) == ["www.example.com"])
        #expect(status { _ = try servers(backend, "example.net") } == .itemNotFound)
        #expect(status { _ = try servers(backend, "le.com") } == .itemNotFound)  // A suffix, not a domain of theirs.
        #expect(try servers(backend, "com.evil.org") == ["example.com.evil.org"])
        // With the other filters: one item's data.
        let data =
            try backend.copyMatching(["class": "inet", "m_HostOrSubdomainOfHost": "evil.org", "r_Data": true]) as? Data
        #expect(data == Data("example.com.evil.org".utf8))
    }

    @Test func badValuesOtherClassesUpdatesAndDeletesAreRefused() throws {
        let backend = try backend()
        #expect(status { _ = try servers(backend, 42) } == .param)
        #expect(status { _ = try servers(backend, "") } == .param)
        #expect(
            status { _ = try backend.copyMatching(["class": "genp", "m_HostOrSubdomainOfHost": "example.com"]) }
                == .unimplemented)
        #expect(
            status { _ = try backend.copyMatching(["class": "idnt", "m_HostOrSubdomainOfHost": "example.com"]) }
                == .unimplemented)
        #expect(status { try backend.delete(["class": "inet", "m_HostOrSubdomainOfHost": "example.com"]) } == .param)
        #expect(
            status {
                try backend.update(["class": "inet", "m_HostOrSubdomainOfHost": "example.com"], with: ["acct": "bob"])
            } == .param)
        // The typed API refuses it for update and delete too: nothing changed, nothing lost.
        var query = ItemQuery(.internetPassword, limit: .all)
        query.hostOrSubdomainOf = "example.com"
        #expect(status { _ = try backend.database.delete(query, caller: Fixture.app) } == .param)
        #expect(
            status { _ = try backend.database.update(query, with: ItemChanges(data: Data()), caller: Fixture.app) }
                == .param)
        #expect(try servers(backend, "example.com").count == 3)
    }
}
