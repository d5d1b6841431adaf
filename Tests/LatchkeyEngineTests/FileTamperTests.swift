import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// One bit flipped in a byte of a small keychain file (and of its device key), at every position in turn:
/// the file is refused, or the passphrase is, or each item reads back exactly as stored or fails with a
/// status — never with another item's or a damaged plaintext — and an unreadable item is listed by the
/// integrity check.
///
/// The default run flips the SQLite header, every byte of the device key and 400 random positions (a
/// printed, replayable seed picks them); `LATCHKEY_SOAK=1` flips every byte of both files.
@Suite(.dedicatedThreads) struct FileTamperTests {
    struct Stored {
        let name: String
        let query: ItemQuery
        let data: Data
        let caller: CallerIdentity
    }

    static let stored: [Stored] = [
        Stored(
            name: "ak password", query: Fixture.query(service: "mail", account: "alice"),
            data: Data("ak-secret-alice".utf8), caller: Fixture.app),
        Stored(
            name: "ck internet password",
            query: ItemQuery(
                .internetPassword, matching: [.server: .string("example.com")],
                returning: .data),
            data: Data("ck-secret-server".utf8), caller: Fixture.app),
        Stored(
            name: "dk password", query: Fixture.query(service: "mail", account: "carol"),
            data: Data("dk-secret-carol".utf8), caller: Fixture.app),
        Stored(
            name: "other group's password", query: Fixture.query(service: "mail", account: "alice"),
            data: Data("other-group-secret".utf8), caller: Fixture.other),
    ]

    /// Statuses a damaged file may answer with; anything else is reported as unexpected.
    static let expectedStatuses: Set<KeychainStatus> = [
        .invalidKeychain, .authFailed, .decode, .itemNotFound,
        .interactionNotAllowed,
    ]

    struct Tally: CustomStringConvertible {
        var flips = 0, refusedAtOpen = 0, refusedAtUnlock = 0, unreadableItems = 0, intactReads = 0, wrongPlaintexts = 0
        var description: String {
            "\(flips) flips: \(refusedAtOpen) refused at open, \(refusedAtUnlock) refused at unlock, \(unreadableItems) item reads failed with a status, \(intactReads) item reads intact, \(wrongPlaintexts) wrong plaintexts"
        }
    }

    func makePristine(in directory: TemporaryDirectory) throws -> (database: Data, deviceKey: Data) {
        let keychain = try Fixture.newKeychain(in: directory, name: "pristine.keychain")
        _ = try keychain.add(
            Fixture.password(service: "mail", account: "alice", secret: "ak-secret-alice"), caller: Fixture.app)
        _ = try keychain.add(
            NewItem(
                .internetPassword,
                attributes: [
                    .server: .string("example.com"), .account: .string("bob"),
                    .accessible: .string("ck"),
                ],
                data: Data("ck-secret-server".utf8)), caller: Fixture.app)
        _ = try keychain.add(
            Fixture.password(
                service: "mail", account: "carol", secret: "dk-secret-carol",
                extra: [.accessible: .string("dk")]), caller: Fixture.app)
        _ = try keychain.add(
            Fixture.password(service: "mail", account: "alice", secret: "other-group-secret"), caller: Fixture.other)
        _ = consume keychain  // The last handle closes: the log is checkpointed into the file and removed.
        let path = directory.file("pristine.keychain")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        return (
            try Data(contentsOf: URL(fileURLWithPath: path)),
            try Data(contentsOf: URL(fileURLWithPath: path + ".device-key"))
        )
    }

    @Test func flippedBitsAreRefusedOrReportedNeverWrongPlaintext() throws {
        let directory = TemporaryDirectory()
        let pristine = try makePristine(in: directory)
        let soak = ProcessInfo.processInfo.environment["LATCHKEY_SOAK"] == "1"
        let total = pristine.database.count + pristine.deviceKey.count
        var positions = Array(0..<total)
        if !soak {
            var generator = TestSeed.generator("FileTamperTests")
            positions.shuffle(using: &generator)
            // Always the 100-byte SQLite header, the device key, and a random spread of the rest.
            let must = Array(0..<100) + Array(pristine.database.count..<total)
            positions = Array(Set(must + positions.prefix(400))).sorted()
        }
        var tally = Tally()
        let path = directory.file("trial.keychain")
        for position in positions {
            var database = pristine.database
            var deviceKey = pristine.deviceKey
            let bit = UInt8(1) << UInt8(position % 8)
            if position < database.count {
                database[position] ^= bit
            } else {
                deviceKey[position - database.count] ^= bit
            }
            for companion in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + companion) }
            try database.write(to: URL(fileURLWithPath: path))
            try deviceKey.write(to: URL(fileURLWithPath: path + ".device-key"))
            for file in [path, path + ".device-key"] {
                // As Latchkey made them.
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
            }
            try trial(path: path, where: "byte \(position) bit \(position % 8)", tally: &tally)
        }
        print("FileTamperTests: \(positions.count) of \(total) positions; \(tally)")
        try ReliabilityRecord.write(
            "5-tamper-flips", name: "File tampering: one bit flipped", unit: "flips",
            [
                .init("refused at open", tally.refusedAtOpen), .init("refused at unlock", tally.refusedAtUnlock),
                .init("opened", tally.flips - tally.refusedAtOpen - tally.refusedAtUnlock),
            ])
        try ReliabilityRecord.write(
            "6-tamper-reads", name: "Item reads after a flip", unit: "reads",
            [
                .init("intact", tally.intactReads), .init("failed with a status", tally.unreadableItems),
                .init("wrong plaintext", tally.wrongPlaintexts, failure: true),
            ])
        #expect(tally.wrongPlaintexts == 0)
        // The header's magic is always flipped (refused at open) and most of the rest reads intact: the trial
        // reached both outcomes, so it is not vacuous.
        #expect(tally.refusedAtOpen > 0)
        #expect(tally.intactReads > 0)
    }

    func trial(path: String, where place: String, tally: inout Tally) throws {
        tally.flips += 1
        func unexpected(_ error: KeychainError, _ step: String) {
            if !Self.expectedStatuses.contains(error.status) {
                Issue.record("\(place): \(step) answered an unexpected status: \(error)")
            }
        }
        let keychain: KeychainDatabase
        do throws(KeychainError) {
            keychain = try KeychainDatabase.open(at: path)
        } catch {
            unexpected(error, "open")
            tally.refusedAtOpen += 1
            return
        }
        // Before the first unlock only the device key serves: the dk item, exactly, or a status.
        check(keychain, Self.stored[2], place: place + " (before unlock)", tally: &tally, unexpected: unexpected)
        do throws(KeychainError) {
            try keychain.unlock(with: Passphrase(Fixture.passphrase))
        } catch {
            unexpected(error, "unlock")
            tally.refusedAtUnlock += 1
            return
        }
        var unreadable = 0
        for item in Self.stored where !check(keychain, item, place: place, tally: &tally, unexpected: unexpected) {
            unreadable += 1
        }
        // A listing returns only intact items, each with its own secret.
        do throws(KeychainError) {
            for item in try keychain.copyMatching(
                ItemQuery(.genericPassword, limit: .all, returning: [.attributes, .data]),
                caller: Fixture.app)
            {
                let expected = item[.account]?.stringValue == "alice" ? "ak-secret-alice" : "dk-secret-carol"
                if item.data != Data(expected.utf8) {
                    tally.wrongPlaintexts += 1
                    Issue.record("\(place): a listing returned a wrong plaintext")
                }
            }
        } catch {
            unexpected(error, "listing")
        }
        // Damage is reported per item.
        if unreadable > 0 {
            do throws(KeychainError) {
                let report = try keychain.verifyIntegrity()
                if report.isHealthy {
                    Issue.record("\(place): \(unreadable) unreadable item(s), but the integrity check is clean")
                }
            } catch {
                unexpected(error, "integrity check")
            }
        }
    }

    /// Reads one item: true when it came back exactly as stored, false for a status; a wrong value fails.
    @discardableResult
    func check(
        _ keychain: KeychainDatabase, _ item: Stored, place: String, tally: inout Tally,
        unexpected: (KeychainError, String) -> Void
    ) -> Bool {
        do throws(KeychainError) {
            let found = try keychain.copyMatching(item.query, caller: item.caller)
            guard found.count == 1, found[0].data == item.data else {
                tally.wrongPlaintexts += 1
                Issue.record("\(place): \(item.name) read back a wrong plaintext")
                return false
            }
            tally.intactReads += 1
            return true
        } catch {
            unexpected(error, item.name)
            tally.unreadableItems += 1
            return false
        }
    }
}
