import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// `latchkey backup now|list|restore`: snapshots taken, listed, and restored whole or one item at a time;
/// a bad time, an unknown item, a damaged snapshot and a directory that cannot be written refused with
/// their statuses.
@Suite(.dedicatedThreads) struct SnapshotCommandTests {
    let sandbox = CLISandbox()
    var backups: String { sandbox.directory.file("backups") }

    /// `latchkey backup ACTION --directory backups ARGUMENTS`.
    @discardableResult
    func backup(_ action: String, _ arguments: String...) throws -> HelperProcess.Output {
        try sandbox.run(["backup", action, "--directory", backups] + arguments)
    }

    func secret(_ service: String) throws -> String {
        try sandbox.run("find-generic-password", "-s", service, "-w").stdout
    }

    /// `2027-01-15T08:00:00Z  change 2  items 2  /…/login.20270115T080000.000Z.lksnapshot` with the time and
    /// name masked.
    func masked(_ text: String) -> String {
        text.replacingOccurrences(of: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#, with: "<TIME>", options: .regularExpression)
            .replacingOccurrences(
                of: #"login\.\d{8}T\d{6}\.\d{3}Z"#, with: "login.<STAMP>", options: .regularExpression
            )
            .replacingOccurrences(of: backups, with: "<DIR>")
    }

    @Test func oneItemGoesBackAndTheOthersStay() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "alice", "-s", "mail", "-w", "mail-one")
        try sandbox.run("add-generic-password", "-a", "bob", "-s", "web", "-w", "web-one")
        let taken = try backup("now")
        #expect(taken.status == 0, "\(taken.stderr)")
        #expect(masked(taken.stdout) == "<TIME>  change 2  items 2  <DIR>/login.<STAMP>.lksnapshot\n")
        try sandbox.run("add-generic-password", "-U", "-a", "alice", "-s", "mail", "-w", "mail-two")
        try sandbox.run("add-generic-password", "-U", "-a", "bob", "-s", "web", "-w", "web-two")

        let versions = try backup("list", "--item", "mail")
        #expect(versions.status == 0, "\(versions.stderr)")
        let ref = String(versions.stdout.split(separator: " ")[2].dropLast())
        #expect(ref.count == 64)
        #expect(
            masked(versions.stdout)
                == """
                genp item \(ref), from the change feed:
                  v1  added  change 1
                  v2  updated  change 3
                snapshots:
                  <TIME>  v1  <DIR>/login.<STAMP>.lksnapshot

                """)
        #expect(try backup("list", "--item", ref).stdout == versions.stdout, "by its reference as by its name")

        let restored = try backup("restore", "--at", "0m", "--item", ref)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(masked(restored.stdout) == "restored genp item \(ref) to its version of <TIME>\n")
        #expect(try secret("mail") == "mail-one\n")
        #expect(try secret("web") == "web-two\n", "the other item is not touched")
        #expect(masked(try backup("list").stdout) == "<TIME>  change 2  items 2  <DIR>/login.<STAMP>.lksnapshot\n")
        // Another keychain's snapshots share the directory; each keychain lists only its own.
        try sandbox.createKeychain("other")
        let other = try backup("now", "-k", "other")
        #expect(other.status == 0 && other.stdout.contains("  change 0  items 0  \(backups)/other."), "\(other.stderr)")
        #expect(try backup("list", "-k", "other").stdout == other.stdout)
    }

    @Test func theWholeKeychainGoesBack() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "alice", "-s", "mail", "-w", "mail-one")
        try sandbox.run("add-generic-password", "-a", "bob", "-s", "web", "-w", "web-one")
        try sandbox.run("add-generic-password", "-a", "carol", "-s", "chat", "-w", "chat-one")
        try backup("now")
        try sandbox.run("add-generic-password", "-U", "-a", "alice", "-s", "mail", "-w", "mail-two")
        try sandbox.run("delete-generic-password", "-s", "web")
        try sandbox.run("add-generic-password", "-a", "dave", "-s", "news", "-w", "news-one")

        let restored = try backup("restore", "--at", "0m")
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(
            masked(restored.stdout)
                == "restored the keychain to <TIME>: updated 1, added 1, removed 1; as it was before: <DIR>/login.<STAMP>.lksnapshot\n"
        )
        #expect(try secret("mail") == "mail-one\n")
        #expect(try secret("web") == "web-one\n")
        #expect(try secret("chat") == "chat-one\n")
        #expect(try sandbox.run("find-generic-password", "-s", "news").status == 44)
        let listed = try backup("list").stdout.split(separator: "\n")
        #expect(listed.count == 2)
        #expect(masked(String(listed[1])) == "<TIME>  change 6  items 3  <DIR>/login.<STAMP>.lksnapshot")
        // The newest snapshot is now the keychain as it was before: restoring it undoes the restore.
        #expect(
            masked(try backup("restore", "--at", "0m").stdout)
                == "restored the keychain to <TIME>: updated 1, added 1, removed 1; as it was before: <DIR>/login.<STAMP>.lksnapshot\n"
        )
        #expect(try secret("mail") == "mail-two\n")
        #expect(try sandbox.run("find-generic-password", "-s", "web").status == 44)
        #expect(try secret("news") == "news-one\n")
        // Nothing changed since the newest: a restore does nothing (and takes no snapshot).
        try backup("now")
        #expect(
            masked(try backup("restore", "--at", "0m").stdout)
                == "the keychain is as it was at <TIME>: nothing to restore\n")
        #expect(try backup("list").stdout.split(separator: "\n").count == 4)
    }

    @Test func failuresExitWithTheirStatuses() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "alice", "-s", "mail", "-w", "mail-one")
        let bad = try backup("restore", "--at", "yesterday")
        #expect(bad.status == 64)
        #expect(
            bad.stderr.hasPrefix(
                "latchkey: backup: --at takes a UTC time such as 2026-12-05T13:40:02Z or 2026-12-05, or a span ago such as 12h or 1d, not 'yesterday'\n"
            ))
        #expect(try backup("restore").status == 64)
        #expect(try backup("frob").status == 64)
        let none = try backup("restore", "--at", "0m")
        #expect(none.status == 44)
        #expect(
            masked(none.stderr)
                == "latchkey: backup: The specified item could not be found in the keychain. (no snapshot of this keychain in <DIR> was taken at or before <TIME>)\n"
        )

        try backup("now")
        let early = try backup("restore", "--at", "2001-01-01")
        #expect(early.status == 44)
        #expect(
            masked(early.stderr)
                == "latchkey: backup: The specified item could not be found in the keychain. (no snapshot of this keychain in <DIR> was taken at or before <TIME>; the oldest is of <TIME>)\n"
        )
        let unknown = try backup("restore", "--at", "0m", "--item", "nothing-named-so")
        #expect(unknown.status == 44)
        #expect(
            masked(unknown.stderr)
                == "latchkey: backup: The specified item could not be found in the keychain. (the snapshot of <TIME> has no item named nothing-named-so (label, service or server))\n"
        )
        let unknownRef = try backup("list", "--item", String(repeating: "ab", count: 32))
        #expect(unknownRef.status == 206)
        #expect(
            unknownRef.stderr
                == "latchkey: backup: One or more parameters passed to a function were not valid. (\(String(repeating: "ab", count: 32)) is not a persistent reference)\n"
        )

        _ = FileManager.default.createFile(atPath: sandbox.directory.file("plain-file"), contents: Data())
        let unwritable = try sandbox.run([
            "backup", "now", "--directory", sandbox.directory.file("plain-file") + "/sub",
        ])
        #expect(unwritable.status == 220)
        #expect(
            unwritable.stderr
                == "latchkey: backup: I/O error. (cannot create directory \(sandbox.directory.file("plain-file"))/sub: Not a directory)\n"
        )
    }

    @Test func aDamagedSnapshotIsListedAsSuchAndNeverRestored() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "alice", "-s", "mail", "-w", "mail-one")
        let path = String(try backup("now").stdout.split(separator: " ").last!.dropLast())
        try sandbox.run("add-generic-password", "-U", "-a", "alice", "-s", "mail", "-w", "mail-two")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count / 2] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: path))

        let listed = try backup("list", "--verify")
        #expect(listed.status == 0)
        #expect(masked(listed.stdout) == "<TIME>  change 1  items 1  <DIR>/login.<STAMP>.lksnapshot  damaged\n")
        #expect(
            listed.stderr
                == "latchkey: backup: warning: Unable to decode the provided data. (\(path) is damaged: its digest does not match its contents; it is not restored)\n"
        )
        let restored = try backup("restore", "--at", "0m")
        #expect(restored.status == 93)
        #expect(
            restored.stderr
                == "latchkey: backup: Unable to decode the provided data. (\(path) is damaged: its digest does not match its contents; it is not restored)\n"
        )
        #expect(try secret("mail") == "mail-two\n", "nothing changed")
        // A file named as a snapshot that is not one is named on standard error and left out.
        let foreign = backups + "/login.20000101T000000.000Z.lksnapshot"
        try Data("not a snapshot at all, but long enough to have a header".utf8).write(
            to: URL(fileURLWithPath: foreign))
        let again = try backup("list")
        #expect(masked(again.stdout) == "<TIME>  change 1  items 1  <DIR>/login.<STAMP>.lksnapshot\n")
        #expect(
            again.stderr
                == "latchkey: backup: warning: Unable to decode the provided data. (\(foreign) is not a Latchkey snapshot)\n"
        )
        try FileManager.default.removeItem(atPath: foreign)
        #expect(try FileManager.default.contentsOfDirectory(atPath: backups).count == 1, "no snapshot of the refusal")
    }

    @Test func aSnapshotOpensWithThePassphraseOfItsTime() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "alice", "-s", "mail", "-w", "mail-one")
        try backup("now")
        try sandbox.run("add-generic-password", "-U", "-a", "alice", "-s", "mail", "-w", "mail-two")
        let change = try sandbox.run(
            "set-keychain-password", "--new-passphrase-fd", "0", "--kdf-memory", "19", "--kdf-passes", "2",
            input: "the new one\n")
        #expect(change.status == 0, "\(change.stderr)")
        var renewed = sandbox.environment
        renewed["LATCHKEY_PASSPHRASE"] = "the new one"
        let arguments = ["backup", "restore", "--directory", backups, "--at", "0m", "--item", "mail"]
        let refused = try sandbox.run(arguments, environment: renewed)
        #expect(refused.status == 51)
        #expect(
            masked(refused.stderr)
                == "latchkey: backup: The user name or passphrase you entered is not correct. (the snapshot of <TIME> opens with the keychain's passphrase of that time, which is not the keychain's now; give it with --snapshot-passphrase-fd or LATCHKEY_SNAPSHOT_PASSPHRASE)\n"
        )
        renewed["LATCHKEY_SNAPSHOT_PASSPHRASE"] = "wrong"
        let wrong = try sandbox.run(arguments, environment: renewed)
        #expect(wrong.status == 51)
        #expect(
            masked(wrong.stderr)
                == "latchkey: backup: The user name or passphrase you entered is not correct. (the passphrase given for the snapshot of <TIME> does not open it)\n"
        )
        renewed["LATCHKEY_SNAPSHOT_PASSPHRASE"] = CLISandbox.passphrase
        let restored = try sandbox.run(arguments, environment: renewed)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(
            try sandbox.run(["find-generic-password", "-s", "mail", "-w"], environment: renewed).stdout == "mail-one\n")
    }

    @Test func theDirectoryComesFromTheAgentsEnvironmentFileWhenNotGiven() throws {
        try sandbox.createKeychain()
        let config = sandbox.directory.file("config/latchkey")
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try Data("LATCHKEY_SECRET_SERVICE=1\nLATCHKEY_BACKUP_DIRECTORY=~/kept/snapshots\n".utf8).write(
            to: URL(fileURLWithPath: config + "/latchkeyd.env"))
        let taken = try sandbox.run("backup", "now")
        #expect(taken.status == 0, "\(taken.stderr)")
        #expect(taken.stdout.contains("  \(sandbox.directory.path)/kept/snapshots/login."))
        // The variable, then --directory, come first.
        var environment = sandbox.unattended
        environment["LATCHKEY_BACKUP_DIRECTORY"] = sandbox.directory.file("elsewhere")
        #expect(try sandbox.run(["backup", "list"], environment: environment).stdout == "")
        #expect(
            try sandbox.run(["backup", "list", "--directory", "~/kept/snapshots"], environment: environment).stdout
                == taken.stdout)
    }

    @Test func aWholeRestoreLeavesSSHKeysAndTheirSettingsAsTheyAre() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "alice", "-s", "mail", "-w", "mail-one")
        try backup("now")
        #expect(try sandbox.run("ssh-key", "create", "laptop", "--confirm", "yes").status == 0)
        let listed = try sandbox.run("ssh-key", "list").stdout
        #expect(listed.contains("laptop (ECDSA)") && listed.contains("confirm=yes"), "\(listed)")
        try sandbox.run("add-generic-password", "-U", "-a", "alice", "-s", "mail", "-w", "mail-two")
        let restored = try backup("restore", "--at", "0m")
        #expect(
            masked(restored.stdout)
                == "restored the keychain to <TIME>: updated 1, added 0, removed 0; as it was before: <DIR>/login.<STAMP>.lksnapshot\n",
            "\(restored.stderr)")
        #expect(try secret("mail") == "mail-one\n")
        #expect(try sandbox.run("ssh-key", "list").stdout == listed, "the key and its confirmation stay")
    }

    @Test func aDeletedItemIsFoundByNameInTheNewestSnapshot() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "alice", "-s", "mail", "-w", "mail-one")
        try backup("now")
        try sandbox.run("delete-generic-password", "-s", "mail")
        let versions = try backup("list", "--item", "mail")
        #expect(versions.status == 0, "\(versions.stderr)")
        let ref = String(versions.stdout.split(separator: " ")[2].dropLast())
        #expect(
            masked(versions.stdout)
                == """
                genp item \(ref), from the change feed:
                  v1  added  change 1
                  v1  deleted  change 2
                snapshots:
                  <TIME>  v1  <DIR>/login.<STAMP>.lksnapshot

                """)
        let unknown = try backup("list", "--item", "nothing-named-so")
        #expect(unknown.status == 44)
        #expect(
            unknown.stderr
                == "latchkey: backup: The specified item could not be found in the keychain. (neither the keychain nor its newest snapshot has an item named nothing-named-so (label, service or server))\n"
        )
        #expect(try backup("restore", "--at", "0m", "--item", "mail").status == 0)
        #expect(try secret("mail") == "mail-one\n")
    }
}
