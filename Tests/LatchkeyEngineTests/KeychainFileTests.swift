import Foundation
import Latchkey
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

/// The keychain file: creation, permissions whatever the umask, and refusal of unsafe, foreign, damaged
/// or newer files — each without changing a byte.
@Suite(.dedicatedThreads) struct KeychainFileTests {
    let directory = TemporaryDirectory()

    @Test(arguments: ["000", "022", "077"])
    func modesAre0700And0600WhateverTheUmask(_ umask: String) throws {
        let path = directory.path + "/nested/dir/login.keychain"
        let output = try HelperProcess.run(["create-with-umask", path, Fixture.passphrase, umask])
        #expect(output.status == 0, "\(output.stderr)")
        // The companions, seen while the helper had the keychain open: made 0600 before SQLite opened it.
        #expect(output.stdout == "-wal 600\n-shm 600\ncreated\n")
        #expect(try permissions(directory.path + "/nested") == 0o700)
        #expect(try permissions(directory.path + "/nested/dir") == 0o700)
        #expect(try permissions(path) == 0o600)
        #expect(try permissions(path + ".device-key") == 0o600)
    }

    @Test func creatingOverAnExistingFileIsDuplicateKeychain() throws {
        let path = directory.file("login.keychain")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: path))
        #expect(
            status { _ = try KeychainDatabase.create(at: path, passphrase: Passphrase("p"), keyDerivation: .minimum) }
                == .duplicateKeychain)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("precious".utf8))
    }

    @Test func emptyPassphrasesAndWeakParametersAreRefused() throws {
        #expect(
            status {
                _ = try KeychainDatabase.create(
                    at: directory.file("a"), passphrase: Passphrase(""),
                    keyDerivation: .minimum)
            } == .param)
        #expect(
            status {
                _ = try KeychainDatabase.create(
                    at: directory.file("b"), passphrase: Passphrase("p"),
                    keyDerivation: KeyDerivation(passes: 1, memoryBytes: 8 << 20))
            }
                == .param)
        #expect(!FileManager.default.fileExists(atPath: directory.file("a")))
    }

    @Test func openingAMissingFileIsNoSuchKeychain() {
        #expect(status { _ = try KeychainDatabase.open(at: directory.file("missing.keychain")) } == .noSuchKeychain)
    }

    @Test func groupOrWorldWritableFilesAndDirectoriesAreRefused() throws {
        let path = directory.file("login.keychain")
        _ = try Fixture.newKeychain(in: directory, name: "login.keychain")
        for mode in [0o666, 0o620, 0o602] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            let failure = #expect(throws: KeychainError.self) { _ = try KeychainDatabase.open(at: path) }
            #expect(failure?.status == .writePermission)
            #expect(failure?.detail?.contains("group- or world-writable (mode 0\(String(mode, radix: 8)))") == true)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        #expect(status { _ = try KeychainDatabase.open(at: path) } == .writePermission)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: path + ".device-key")
        #expect(status { _ = try KeychainDatabase.open(at: path) } == .writePermission)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path + ".device-key")
        _ = try KeychainDatabase.open(at: path)
    }

    @Test func aSymbolicLinkIsRefused() throws {
        _ = try Fixture.newKeychain(in: directory, name: "real.keychain")
        try FileManager.default.createSymbolicLink(
            atPath: directory.file("link.keychain"),
            withDestinationPath: directory.file("real.keychain"))
        #expect(status { _ = try KeychainDatabase.open(at: directory.file("link.keychain")) } == .writePermission)
    }

    static let foreignContents: [(String, Data)] = [
        ("an empty file", Data()),
        ("a text file", Data("user=alice\npassword=hunter2\n".utf8)),
        ("a short SQLite header", Data("SQLite format 3\u{0}".utf8)),
        ("random bytes", Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) })),
    ]

    @Test(arguments: foreignContents.indices)
    func foreignFilesAreInvalidKeychainsAndUntouched(_ index: Int) throws {
        let (_, contents) = Self.foreignContents[index]
        let path = directory.file("foreign.keychain")
        try contents.write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(status { _ = try KeychainDatabase.open(at: path) } == .invalidKeychain)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == contents)
    }

    @Test func anotherApplicationsSQLiteDatabaseIsInvalidAndUntouched() throws {
        let path = directory.file("other.db")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(), attributes: [.posixPermissions: 0o600]))
        try RawFile.execute(path, "CREATE TABLE notes (text TEXT)")
        let before = try FileSnapshot(directory: directory.path)
        let failure = #expect(throws: KeychainError.self) { _ = try KeychainDatabase.open(at: path) }
        #expect(failure?.status == .invalidKeychain)
        #expect(failure?.detail == "\(path) is an SQLite database but not a Latchkey keychain")
        #expect(try FileSnapshot(directory: directory.path) == before)
    }

    @Test(arguments: [0.5, 0.9])
    func aTruncatedKeychainIsInvalidAndUntouched(_ fraction: Double) throws {
        let path = directory.file("t.keychain")
        let keychain = try Fixture.newKeychain(in: directory, name: "t.keychain")
        for index in 0..<200 {
            try keychain.add(Fixture.password(service: "s", account: "\(index)"), caller: Fixture.app)
        }
        _ = consume keychain
        let full = try Data(contentsOf: URL(fileURLWithPath: path))
        let truncated = full.prefix(Int(Double(full.count) * fraction))
        try truncated.write(to: URL(fileURLWithPath: path))
        let failure = #expect(throws: KeychainError.self) { _ = try KeychainDatabase.open(at: path) }
        #expect(failure?.status == .invalidKeychain)
        #expect(failure?.detail?.contains("is truncated") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == truncated)
    }

    @Test func aNewerFormatIsRefusedAndUntouched() throws {
        let path = directory.file("new.keychain")
        _ = try Fixture.newKeychain(in: directory, name: "new.keychain")
        try RawFile.execute(path, "PRAGMA user_version = \(KeychainDatabase.formatVersion + 1)")
        let before = try FileSnapshot(directory: directory.path)
        let failure = #expect(throws: KeychainError.self) { _ = try KeychainDatabase.open(at: path) }
        #expect(failure?.status == .invalidKeychain)
        #expect(
            failure?.detail
                == "\(path) has format version \(KeychainDatabase.formatVersion + 1); this Latchkey reads up to \(KeychainDatabase.formatVersion). Nothing was changed"
        )
        #expect(try FileSnapshot(directory: directory.path) == before)
    }

    @Test func keyDerivationParametersBelowTheFloorAreRefused() throws {
        let path = directory.file("weak.keychain")
        _ = try Fixture.newKeychain(in: directory, name: "weak.keychain")
        var record = try #require(try RawFile.blob(path, "SELECT value FROM meta WHERE name = 'kdf'"))
        record[1] = 1  // passes = 1
        try RawFile.execute(path, "UPDATE meta SET value = ? WHERE name = 'kdf'", [.blob(record)])
        let failure = #expect(throws: KeychainError.self) { _ = try KeychainDatabase.open(at: path) }
        #expect(failure?.status == .invalidKeychain)
        #expect(failure?.detail?.contains("outside the accepted range") == true)
    }

    @Test func aWrongPassphraseLeavesEveryFileByteForByteUnchanged() throws {
        let path = directory.file("login.keychain")
        let keychain = try Fixture.newKeychain(in: directory, name: "login.keychain")
        try keychain.add(Fixture.password(service: "s", account: "a"), caller: Fixture.app)
        _ = consume keychain
        let before = try FileSnapshot(directory: directory.path, only: ["login.keychain", "login.keychain.device-key"])
        let reopened = try KeychainDatabase.open(at: path)
        #expect(status { try reopened.unlock(with: Passphrase("Correct horse battery staple")) } == .authFailed)
        #expect(
            try FileSnapshot(directory: directory.path, only: ["login.keychain", "login.keychain.device-key"]) == before
        )
        _ = consume reopened
        #expect(
            try FileSnapshot(directory: directory.path, only: ["login.keychain", "login.keychain.device-key"]) == before
        )
    }

    @Test func deleteRemovesTheFileAndItsCompanions() throws {
        let path = directory.file("gone.keychain")
        let keychain = try Fixture.newKeychain(in: directory, name: "gone.keychain")
        try keychain.add(Fixture.password(service: "s", account: "a"), caller: Fixture.app)
        _ = consume keychain
        try KeychainDatabase.delete(at: path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(status { try KeychainDatabase.delete(at: path) } == .noSuchKeychain)
    }
}
