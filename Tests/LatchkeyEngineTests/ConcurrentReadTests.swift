import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey
@testable import LatchkeyEngine

#if canImport(Glibc)
    import Glibc
#endif

/// Readers on their own connections: a long write — in this process or another — never stalls a lookup.
@Suite(.dedicatedThreads) struct ConcurrentReadTests {
    let directory = TemporaryDirectory()

    @Test func lookupsProceedWhileThisProcessHoldsALongWrite() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "s", account: "a", secret: "before"), caller: Fixture.app)
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let writer = Thread {
            // An import-like write that stays open until the test has read.
            _ = try? keychain.pool.write { db in  // The outcome is checked through the data below.
                inside.signal()
                release.wait()
                try db.run("UPDATE items SET version = version WHERE row_id = 1")
            }
            finished.signal()
        }
        writer.start()
        inside.wait()
        for _ in 0..<20 {
            #expect(
                try keychain.copyMatching(Fixture.query(service: "s", account: "a"), caller: Fixture.app).first?.data
                    == Data("before".utf8))
        }
        release.signal()
        #expect(finished.wait(timeout: .now() + 30) == .success)
    }

    @Test func lookupsProceedWhileAnotherProcessHoldsALongWrite() throws {
        let path = directory.file("shared.keychain")
        let keychain = try Fixture.newKeychain(in: directory, name: "shared.keychain")
        try keychain.add(Fixture.password(service: "s", account: "a", secret: "v"), caller: Fixture.app)
        let log = directory.file("holder.log")
        let holder = try SpawnedProcess(
            HelperProcess.executable, ["hold-write", path, Fixture.passphrase, "30"],
            environment: ["PATH": "/usr/bin:/bin"], log: log)
        defer { holder.stop(signal: SIGKILL) }
        try waitUntil("the other process to hold its write") {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "") == "holding\n"
        }
        let start = ContinuousClock.now
        for _ in 0..<20 {
            #expect(
                try keychain.copyMatching(Fixture.query(service: "s", account: "a"), caller: Fixture.app).first?.data
                    == Data("v".utf8))
        }
        #expect(holder.isRunning, "the write was still open while we read")
        #expect(ContinuousClock.now - start < .seconds(20), "the reads did not wait for the write")
    }
}
