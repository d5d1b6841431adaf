import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Durability against a power cut, which a SIGKILL does not test (the page cache survives it, so the crash
/// trials would pass even with `synchronous=OFF`). A helper writes under a VFS that keeps each file as it
/// was at its last sync (Tests/CPowerLoss); the test then puts those copies in place of the files — what a
/// machine that lost power would find — and every acknowledged write must be there. The control, with
/// syncs ignored, must lose writes, or the trial would prove nothing.
@Suite(.serialized, .dedicatedThreads) struct PowerLossTests {
    static var trials: Int { ProcessInfo.processInfo.environment["LATCHKEY_SOAK"] == "1" ? 50 : 3 }

    /// Runs the power writer on a fresh keychain, cuts the power after its last acknowledged write, and
    /// returns the acknowledged version of each key and what the reopened keychain holds.
    func trial(honorSyncs: Bool, seed: UInt64, writes: Int) throws -> (
        acknowledged: [String: Int], found: [String: Int]
    ) {
        let directory = TemporaryDirectory()
        let path = directory.file("power.keychain")
        _ = try Fixture.newKeychain(in: directory, name: "power.keychain")
        let output = try HelperProcess.run([
            "power-writer", path, Fixture.passphrase, "\(seed)", "12", honorSyncs ? "1" : "0",
            "\(writes)",
        ])
        #expect(output.status == 0, "\(output.stderr)")
        var acknowledged: [String: Int] = [:]
        for line in output.stdout.split(separator: "\n") where line.hasPrefix("ack ") {
            let parts = line.split(separator: " ")
            acknowledged[String(parts[1])] = Int(parts[2])
        }
        #expect(acknowledged.values.reduce(0, +) == writes, "every write was acknowledged")

        // The power cut: each file as it was at its last sync; a file never synced is gone.
        for file in [path, path + "-wal", path + "-shm"] {
            let synced = file + ".synced"
            if FileManager.default.fileExists(atPath: synced) {
                #expect(rename(synced, file) == 0, "rename \(synced): \(errno)")
            } else if FileManager.default.fileExists(atPath: file) {
                try FileManager.default.removeItem(atPath: file)
            }
        }
        let keychain = try KeychainDatabase.open(at: path)
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        #expect(try keychain.verifyIntegrity().isHealthy)
        var found: [String: Int] = [:]
        let caller = CallerIdentity(applicationIdentifier: "com.example.helper")
        do throws(KeychainError) {
            for item in try keychain.copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.service: .string("crash")], limit: .all,
                    returning: [.attributes, .data]),
                caller: caller)
            {
                let text = String(decoding: item.data ?? Data(), as: UTF8.self)
                found[item[.account]?.stringValue ?? "?"] = Int(text.split(separator: "-").last ?? "")
            }
        } catch {
            #expect(error.status == .itemNotFound, "\(error)")
        }
        return (acknowledged, found)
    }

    @Test func everyAcknowledgedWriteSurvivesAPowerCut() throws {
        var generator = TestSeed.generator("PowerLossTests")
        var writes = 0
        var lost = 0
        for round in 0..<Self.trials {
            let (acknowledged, found) = try trial(honorSyncs: true, seed: generator.next(), writes: 40)
            #expect(
                found == acknowledged,
                "trial \(round): acknowledged \(acknowledged), found after the power cut \(found)")
            writes += acknowledged.values.reduce(0, +)
            lost += acknowledged.reduce(0) { $0 + max(0, $1.value - (found[$1.key] ?? 0)) }  // Versions gone.
        }
        print("PowerLossTests: \(Self.trials) power cuts after \(writes) acknowledged writes; \(lost) lost")
        try ReliabilityRecord.write(
            "3-power-loss", name: "Power loss: unsynced writes dropped",
            unit: "acknowledged writes over \(Self.trials) cuts",
            [.init("survived", writes - lost), .init("lost", lost, failure: true)])
    }

    @Test func theTrialCatchesAWriterThatDoesNotSync() throws {
        let (acknowledged, found) = try trial(
            honorSyncs: false, seed: TestSeed.make("PowerLossTests.control"), writes: 40)
        let lost = acknowledged.filter { found[$0.key] != $0.value }.count
        #expect(lost > 0, "without syncs a power cut must lose acknowledged writes, or this trial shows nothing")
        print(
            "PowerLossTests: with syncs ignored, \(lost) of \(acknowledged.count) keys lost their acknowledged version")
        try ReliabilityRecord.write(
            "4-power-loss-control", name: "Power loss control: syncs ignored", unit: "keys checked",
            [
                .init("kept", acknowledged.count - lost),
                .init("lost (the trial catches a keychain that does not sync)", lost, failure: true),
            ])
    }

    @Test func theEngineRunsWithFullSyncAWriteAheadLogAndSecureDelete() throws {
        let directory = TemporaryDirectory()
        _ = try Fixture.newKeychain(in: directory, name: "k.keychain")
        let report = KeychainDatabase.inspect(at: directory.file("k.keychain"))
        #expect(
            report.durability == KeychainFileReport.Durability(journalMode: "wal", synchronous: 2, secureDelete: true))
        #expect(report.durability?.isDurable == true)
    }
}
