import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A full disk and failing writes: the write that cannot be stored fails with Apple's status
/// (`errSecDiskFull` −34 for ENOSPC, `errSecIO` −36 for other write errors), and everything stored before
/// stays readable, intact and unchanged — on a real full file system (a size-limited tmpfs, when the tests
/// may mount one: CI runs as root) and under a file size limit (RLIMIT_FSIZE, any user).
@Suite(.dedicatedThreads) struct DiskFullTests {
    static let canMount: Bool = {
        let probe = TemporaryDirectory()
        guard mount("tmpfs", probe.path, "tmpfs", 0, "size=64k") == 0 else { return false }
        return umount2(probe.path, Int32(MNT_DETACH)) == 0
    }()

    /// A tmpfs of `size` mounted on a fresh directory, unmounted on release.
    final class SmallFileSystem {
        let directory = TemporaryDirectory()
        init(size: String) throws {
            guard mount("tmpfs", directory.path, "tmpfs", 0, "size=\(size),mode=0700") == 0 else {
                throw CocoaError(.fileWriteNoPermission)
            }
        }
        func resize(_ size: String) -> Bool {
            mount("tmpfs", directory.path, "tmpfs", UInt(MS_REMOUNT), "size=\(size),mode=0700") == 0
        }
        deinit { umount2(directory.path, Int32(MNT_DETACH)) }
    }

    func secret(_ index: Int) -> Data {
        Data("secret-\(index)-".utf8) + Data(repeating: UInt8(index % 251), count: 4096)
    }

    @Test(.enabled(if: canMount, "mounting a tmpfs needs CAP_SYS_ADMIN (CI runs as root)"))
    func aFullFileSystemFailsTheWriteWithErrSecDiskFullAndKeepsEverything() throws {
        let disk = try SmallFileSystem(size: "384k")
        let path = disk.directory.file("full.keychain")
        var keychain = try KeychainDatabase.create(
            at: path, passphrase: Passphrase(Fixture.passphrase), keyDerivation: .minimum)
        var stored = 0
        var failure: KeychainError?
        while failure == nil, stored < 1_000 {
            do throws(KeychainError) {
                try keychain.add(
                    NewItem(
                        .genericPassword, attributes: [.service: .string("full"), .account: .string("a\(stored)")],
                        data: secret(stored)), caller: Fixture.app)
                stored += 1
            } catch {
                failure = error
            }
        }
        #expect(stored > 5, "the disk filled before anything was stored")
        #expect(failure?.status == .diskFull)

        // Writes keep failing cleanly; reads keep working on the same handle.
        do throws(KeychainError) {
            try keychain.add(
                Fixture.password(service: "full", account: "again", secret: String(repeating: "x", count: 65_536)),
                caller: Fixture.app)
            Issue.record("a second add succeeded on a full disk")
        } catch {
            #expect(error.status == .diskFull)
        }
        // A passphrase change either fits or fails cleanly; either way exactly one passphrase opens it after.
        var inForce = Fixture.passphrase
        do throws(KeychainError) {
            try keychain.changePassphrase(
                from: Passphrase(Fixture.passphrase), to: Passphrase("a new passphrase"),
                keyDerivation: .minimum)
            inForce = "a new passphrase"
        } catch {
            #expect(error.status == .diskFull)
        }
        #expect(
            try keychain.copyMatching(Fixture.query(service: "full", account: "a0"), caller: Fixture.app).first?.data
                == secret(0))

        // Reopened from the file: the passphrase is unchanged if the change failed, every item intact.
        keychain = KeychainDatabase.inMemory()
        keychain = try KeychainDatabase.open(at: path)
        let other = inForce == Fixture.passphrase ? "a new passphrase" : Fixture.passphrase
        #expect(status { try keychain.unlock(with: Passphrase(other)) } == .authFailed)
        try keychain.unlock(with: Passphrase(inForce))
        #expect(try keychain.verifyIntegrity().isHealthy)
        let all = try keychain.copyMatching(
            Fixture.query(service: "full", limit: .all, returning: [.attributes, .data]),
            caller: Fixture.app)
        #expect(all.count == stored)
        for item in all {
            let account = try #require(item[.account]?.stringValue)
            let index = try #require(Int(account.dropFirst()))
            #expect(item.data == secret(index))
        }

        // With room again, writes succeed.
        #expect(disk.resize("4m"))
        try keychain.add(Fixture.password(service: "full", account: "after"), caller: Fixture.app)
        #expect(
            try keychain.copyMatching(Fixture.query(service: "full", limit: .all, returning: []), caller: Fixture.app)
                .count
                == stored + 1)
    }

    /// Limits above the smallest workable one, in KiB: eight in the default run, every KiB up to 160 with
    /// `LATCHKEY_SOAK=1`, so the failure lands in the WAL, the database and the checkpoint in turn.
    static let extraKiB: [Int] =
        ProcessInfo.processInfo.environment["LATCHKEY_SOAK"] == "1"
        ? Array(0..<160) : [0, 4, 8, 12, 20, 32, 52, 84]

    @Test(arguments: extraKiB)
    func writesPastAFileSizeLimitFailCleanly(_ extraKiB: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("limit.keychain")
        do {
            let keychain = try Fixture.newKeychain(in: directory, name: "limit.keychain")
            try keychain.add(
                Fixture.password(service: "crash", account: "before", secret: "stored before"), caller: Fixture.app)
        }
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        // The limit applies to every file the writer grows: the database, its WAL and its shared memory.
        let limit = max(size, 65_536) + extraKiB * 1_024
        let output = try HelperProcess.run(["filler", path, Fixture.passphrase, "\(limit)", "400"])
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        let acknowledged = lines.filter { $0.hasPrefix("ack ") }.map { String($0.dropFirst(4)) }
        let failure = lines.first { $0.hasPrefix("fail ") }
        #expect(failure == "fail -34" || failure == "fail -36", "\(lines.suffix(3))")
        #expect(lines.contains("read 0") || acknowledged.isEmpty)
        #expect(lines.last == "write -34" || lines.last == "write -36")

        let keychain = try KeychainDatabase.open(at: path)
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        #expect(try keychain.verifyIntegrity().isHealthy)
        let helper = CallerIdentity(applicationIdentifier: "com.example.helper")
        let found = try keychain.copyMatching(
            ItemQuery(
                .genericPassword, matching: [.service: .string("crash")], limit: .all, returning: [.attributes, .data]),
            caller: helper)
        let accounts = Set(found.compactMap { $0[.account]?.stringValue })
        // Every acknowledged write is there; at most the failed one is missing; nothing else appeared.
        #expect(Set(acknowledged).isSubset(of: accounts))
        #expect(accounts.subtracting(acknowledged).isEmpty)
        for item in found {
            let account = try #require(item[.account]?.stringValue)
            #expect(item.data == Data((account + String(repeating: "·", count: 4096)).utf8))
        }
        #expect(
            try keychain.copyMatching(Fixture.query(service: "crash", account: "before"), caller: Fixture.app).first?
                .data
                == Data("stored before".utf8))
    }
}
