import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// No secret and no attribute value ever reaches the disk in plaintext: database, WAL, shared memory,
/// device key, or any temporary file beside them.
@Suite(.dedicatedThreads) struct PlaintextLeakTests {
    let directory = TemporaryDirectory()

    /// Every byte pattern a leak could take: UTF-8, UTF-16 (both orders), and for data, the raw bytes.
    func patterns(_ canary: String) -> [Data] {
        [Data(canary.utf8), canary.data(using: .utf16LittleEndian)!, canary.data(using: .utf16BigEndian)!]
    }

    func leaks(_ canaries: [String]) throws -> [String] {
        var found: [String] = []
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        for file in files {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.file(file)))
            for canary in canaries where patterns(canary).contains(where: { bytes.range(of: $0) != nil }) {
                found.append("\(canary) in \(file)")
            }
        }
        return found
    }

    @Test func canariesNeverAppearInAnyFile() throws {
        let keychain = try Fixture.newKeychain(in: directory, name: "leak.keychain")
        var canaries: [String] = []
        func canary(_ role: String, _ index: Int) -> String {
            let value = "CANARY-\(role)-\(index)-7f3a9c"
            canaries.append(value)
            return value
        }
        // A WAL that is never checkpointed while we look: hold a second handle open on the file.
        let second = try KeychainDatabase.open(at: directory.file("leak.keychain"))
        try second.unlock(with: Passphrase(Fixture.passphrase))
        for index in 0..<40 {
            try keychain.add(
                NewItem(
                    .genericPassword,
                    attributes: [
                        .service: .string(canary("svce", index)), .account: .string(canary("acct", index)),
                        .label: .string(canary("labl", index)), .comment: .string(canary("icmt", index)),
                        .itemDescription: .string(canary("desc", index)),
                        .generic: .data(Data(canary("gena", index).utf8)),
                        .accessGroup: .string(index % 2 == 0 ? "com.example.app" : "com.example.shared"),
                    ], data: Data(canary("secret", index).utf8)), caller: Fixture.app)
            try keychain.add(
                NewItem(
                    .internetPassword,
                    attributes: [
                        .server: .string(canary("srvr", index)), .path: .string(canary("path", index)),
                        .securityDomain: .string(canary("sdmn", index)), .account: .string(canary("inet-acct", index)),
                    ], data: Data(canary("inet-secret", index).utf8)), caller: Fixture.app)
        }
        for index in stride(from: 0, to: 40, by: 3) {
            try keychain.update(
                ItemQuery(.genericPassword, matching: [.account: .string("CANARY-acct-\(index)-7f3a9c")]),
                with: ItemChanges(
                    attributes: [.label: .string(canary("relabel", index))],
                    data: Data(canary("rotated", index).utf8)), caller: Fixture.app)
        }
        for index in stride(from: 1, to: 40, by: 4) {
            try keychain.delete(
                ItemQuery(.internetPassword, matching: [.server: .string("CANARY-srvr-\(index)-7f3a9c")]),
                caller: Fixture.app)
        }
        // The canaries are really in the keychain (the search below would otherwise prove nothing).
        #expect(
            try keychain.copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.label: .string("CANARY-relabel-3-7f3a9c")],
                    returning: .data), caller: Fixture.app
            ).first?.data
                == Data("CANARY-rotated-3-7f3a9c".utf8))
        #expect(FileManager.default.fileExists(atPath: directory.file("leak.keychain-wal")))
        #expect(try leaks(canaries + ["com.example.app", "com.example.shared"]) == [])
        _ = consume second
        _ = consume keychain
        #expect(try leaks(canaries + ["com.example.app", "com.example.shared"]) == [])
    }

    @Test func theCanarySearchFindsAPlaintextFile() throws {
        // The detector itself works: a file holding a canary in UTF-16 is reported.
        try "xxCANARY-probe-1yy".data(using: .utf16LittleEndian)!.write(
            to: URL(fileURLWithPath: directory.file("probe")))
        #expect(try leaks(["CANARY-probe-1"]) == ["CANARY-probe-1 in probe"])
    }
}
