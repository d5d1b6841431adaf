import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The attacks of the adversarial review on the keychain's files (issue 15: F5, F6, and the leftovers of
/// an interrupted creation), each reproduced — as another user where the attack needs one.
@Suite(.dedicatedThreads) struct FileHardeningTests {
    let directory = TemporaryDirectory()
    static let isRoot = getuid() == 0
    static let nobody: (uid: uid_t, gid: gid_t)? = getpwnam("nobody").map { ($0.pointee.pw_uid, $0.pointee.pw_gid) }

    func detail(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as KeychainError {
            return "\(error.status.name) \(error.detail ?? "")"
        } catch {
            return "\(error)"
        }
    }

    // MARK: F5: world-writable sticky directories, and companion files

    @Test func aStickyWorldWritableDirectoryIsRefusedForCreateAndOpen() throws {
        let shared = directory.file("shared")
        _ = try Fixture.newKeychain(in: directory, name: "shared/k.keychain")
        try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: shared)
        let refusal =
            "errSecWrPerm keychain directory \(shared) is group- or world-writable (mode 01777), sticky or not; "
            + "keep keychains in a private directory (chmod 700)"
        #expect(detail { _ = try KeychainDatabase.open(at: shared + "/k.keychain") } == refusal)
        #expect(
            detail {
                _ = try KeychainDatabase.create(
                    at: shared + "/new.keychain", passphrase: Passphrase("p"), keyDerivation: .minimum)
            } == refusal)
        #expect(!FileManager.default.fileExists(atPath: shared + "/new.keychain"))
    }

    @Test func aDirectoryAboveThatOthersCanWriteIsRefusedUnlessSticky() throws {
        let open = directory.file("open")
        _ = try Fixture.newKeychain(in: directory, name: "open/private/k.keychain")
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: open)
        #expect(
            detail { _ = try KeychainDatabase.open(at: open + "/private/k.keychain") }
                == "errSecWrPerm \(open), above keychain directory \(open)/private, is writable by others (mode 0777), who could replace it"
        )
        // Sticky, as /tmp is: nobody else can rename what is in it.
        try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: open)
        _ = try KeychainDatabase.open(at: open + "/private/k.keychain")
    }

    @Test(.enabled(if: isRoot && nobody != nil, "switching to another user needs root"))
    func companionFilesPreparedByAnotherUserAreRefused() throws {
        // The attack: in a sticky directory everyone can write, the attacker made the log and shared memory first.
        let sticky = directory.file("sticky")
        try FileManager.default.createDirectory(atPath: sticky, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: sticky)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        for suffix in ["-wal", "-shm"] {
            let made = try HelperProcess.run(
                "/usr/bin/setpriv",
                [
                    "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/bin/sh", "-c",
                    "umask 0; : > \(sticky)/k.keychain\(suffix)",
                ], environment: ["PATH": "/usr/bin:/bin"])
            #expect(made.status == 0, "\(made.stderr)")
        }
        #expect(
            status {
                _ = try KeychainDatabase.create(
                    at: sticky + "/k.keychain", passphrase: Passphrase("p"), keyDerivation: .minimum)
            } == .writePermission)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: sticky).sorted() == [
                "k.keychain-shm", "k.keychain-wal",
            ])

        // In a private directory too, a companion of another user or one others may read is refused.
        let path = directory.file("private/k.keychain")
        _ = try Fixture.newKeychain(in: directory, name: "private/k.keychain")
        #expect(
            FileManager.default.createFile(
                atPath: path + "-wal", contents: Data(), attributes: [.posixPermissions: 0o666]))
        #expect(
            detail { _ = try KeychainDatabase.open(at: path) }
                == "errSecWrPerm the keychain's companion file \(path)-wal is group- or world-writable (mode 0666); run chmod 600 on it"
        )
        let nobody = try #require(Self.nobody)
        #expect(chmod(path + "-wal", 0o600) == 0 && chown(path + "-wal", nobody.uid, nobody.gid) == 0)
        #expect(
            detail { _ = try KeychainDatabase.open(at: path) }
                == "errSecWrPerm the keychain's companion file \(path)-wal belongs to another user (uid \(nobody.uid))")
        try FileManager.default.removeItem(atPath: path + "-wal")
        _ = try KeychainDatabase.open(at: path)
    }

    @Test func companionsAreMadePrivateBeforeSQLiteOpensThem() throws {
        let path = directory.file("k.keychain")
        _ = try Fixture.newKeychain(in: directory, name: "k.keychain")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "closed: SQLite removed its log")
        let keychain = try KeychainDatabase.open(at: path)
        for suffix in ["-wal", "-shm"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: path + suffix)
            #expect(attributes[.posixPermissions] as? Int == 0o600, "\(suffix)")
        }
        _ = consume keychain
    }

    // MARK: F6: files others can read

    @Test func aKeychainOrDeviceKeyOthersCanReadIsRefused() throws {
        let path = directory.file("k.keychain")
        _ = try Fixture.newKeychain(in: directory, name: "k.keychain")
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path + ".device-key")
        #expect(
            detail { _ = try KeychainDatabase.open(at: path) }
                == "errSecWrPerm device key file \(path).device-key is readable by others (mode 0640); run chmod 600 on it"
        )
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path + ".device-key")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect(
            detail { _ = try KeychainDatabase.open(at: path) }
                == "errSecWrPerm keychain file \(path) is readable by others (mode 0644); run chmod 600 on it")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        _ = try KeychainDatabase.open(at: path)
    }

    @Test(.enabled(if: isRoot && nobody != nil, "switching to another user needs root"))
    func anotherUserCannotCopyTheFiles() throws {
        // The attack copied both files and read an "always" item offline; Latchkey's own modes stop the copy.
        let path = directory.file("k.keychain")
        let keychain = try Fixture.newKeychain(in: directory, name: "k.keychain")
        try keychain.add(
            Fixture.password(service: "s", account: "a", extra: [.accessible: .string("dk")]), caller: Fixture.app)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        for file in [path, path + ".device-key"] {
            let copy = try HelperProcess.run(
                "/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/bin/cat", file],
                environment: ["PATH": "/usr/bin:/bin"])
            #expect(copy.status == 1)
            #expect(copy.stdout.isEmpty)
            #expect(copy.stderr == "/bin/cat: \(file): Permission denied\n")
        }
    }

    // MARK: A creation killed half-way

    @Test func whatADeadCreationLeftBehindIsRemovedByTheNextOne() throws {
        // A pid no process has: the creator is gone.
        var dead: Int32 = 4_000_000
        while kill(dead, 0) == 0 || errno == EPERM { dead -= 1 }
        let leftovers = [".k.keychain.creating-\(dead)-0a0b0c0d0e0f", ".k.keychain.creating-\(dead)-0a0b0c0d0e0f-wal"]
        let live = ".k.keychain.creating-\(getpid())-111111111111"
        for name in leftovers + [live] {
            #expect(
                FileManager.default.createFile(
                    atPath: directory.file(name), contents: Data("half".utf8),
                    attributes: [.posixPermissions: 0o600]))
        }
        _ = try Fixture.newKeychain(in: directory, name: "k.keychain")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names == [live, "k.keychain", "k.keychain.device-key"])
    }
}
