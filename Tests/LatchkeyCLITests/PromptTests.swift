import Foundation
import LatchkeyTestSupport
import Testing

/// The interactive prompts, answered through a pseudo-terminal as a person would type.
@Suite(.dedicatedThreads) struct PromptTests {
    let sandbox = CLISandbox()

    func session(_ arguments: [String]) throws -> PseudoTerminalSession {
        try PseudoTerminalSession(executable: sandbox.binary, arguments: arguments, environment: sandbox.environment)
    }

    @Test func createAddAndFindWithPrompts() throws {
        let create = try session(["create-keychain", "--kdf-memory", "19", "--kdf-passes", "2"])
        #expect(create.expect("password for new keychain: "))
        create.send("typed passphrase")
        #expect(create.expect("retype password for new keychain: "))
        create.send("a typo")
        #expect(create.expect("passwords don't match"))
        #expect(create.expect("password for new keychain: "))
        create.send("typed passphrase")
        #expect(create.expect("retype password for new keychain: "))
        create.send("typed passphrase")
        #expect(create.wait() == 0)
        #expect(!create.transcript.contains("typed passphrase"), "echo is off")

        let add = try session(["add-generic-password", "-a", "alice", "-s", "mail", "-w"])
        #expect(add.expect("password data for new item: "))
        add.send("hunter2")
        #expect(add.expect("retype password for new item: "))
        add.send("hunter2")
        #expect(add.expect("password to unlock default: "))
        add.send("typed passphrase")
        #expect(add.wait() == 0, "\(add.transcript)")
        #expect(!add.transcript.contains("hunter2"))

        let find = try session(["find-generic-password", "-a", "alice", "-s", "mail", "-w"])
        #expect(find.expect("password to unlock default: "))
        find.send("typed passphrase")
        #expect(find.wait() == 0)
        #expect(find.transcript.hasSuffix("hunter2\r\n"))

        let wrong = try session(["find-generic-password", "-s", "mail"])
        #expect(wrong.expect("password to unlock default: "))
        wrong.send("not the passphrase")
        #expect(wrong.wait() == 51)
        #expect(
            wrong.transcript.contains(
                "latchkey: find-generic-password: The user name or passphrase you entered is not correct."))
    }

    @Test func withoutATerminalThePromptFailsClearly() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "a", "-s", "x", "--password-stdin", input: "needs the passphrase")
        let output = try sandbox.run(["find-generic-password", "-s", "x"], environment: sandbox.environment)
        #expect(output.status == 36)
        #expect(
            output.stderr
                == "latchkey: find-generic-password: User interaction is not allowed. (no terminal to prompt on; use --passphrase-fd, --passphrase-file, or LATCHKEY_PASSPHRASE)\n"
        )
    }

    /// Without a terminal each prompt names what gives its answer instead: the keychain's passphrase, the
    /// backup's own (LATCHKEY_PASSPHRASE being set already), the item's password.
    @Test func withoutATerminalEachPromptNamesWhatAnswersItInstead() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "a", "-s", "x", "--password-stdin", input: "secret")
        let backup = sandbox.directory.file("backup.lkb")
        let export = try sandbox.run(["export", "-o", backup])
        #expect(export.status == 36)
        #expect(
            export.stderr == "latchkey: export: User interaction is not allowed. (no terminal to prompt on; use "
                + "--backup-passphrase-fd or LATCHKEY_BACKUP_PASSPHRASE for the backup's own passphrase)\n")
        #expect(!FileManager.default.fileExists(atPath: backup))
        let exported = try sandbox.run(
            ["export", "-o", backup],
            environment: sandbox.unattended.merging(["LATCHKEY_BACKUP_PASSPHRASE": "b"]) { _, new in new })
        #expect(exported.status == 0, "\(exported.stderr)")
        let restore = try sandbox.run(["import", "-i", backup])
        #expect(restore.status == 36)
        #expect(
            restore.stderr == "latchkey: import: User interaction is not allowed. (no terminal to prompt on; use "
                + "--backup-passphrase-fd or LATCHKEY_BACKUP_PASSPHRASE for the backup's own passphrase)\n")
        let add = try sandbox.run(["add-generic-password", "-a", "b", "-s", "x", "-w"])
        #expect(add.status == 36)
        #expect(
            add.stderr
                == "latchkey: add-generic-password: User interaction is not allowed. (no terminal to prompt on; use "
                + "--password-stdin, --password-fd or -X for the item's password)\n")
        let create = try sandbox.run(
            ["create-keychain", "--kdf-memory", "19", "--kdf-passes", "2", "other"], environment: sandbox.environment)
        #expect(create.status == 36)
        #expect(
            create.stderr
                == "latchkey: create-keychain: User interaction is not allowed. (no terminal to prompt on; use "
                + "--passphrase-fd, --passphrase-file, or LATCHKEY_PASSPHRASE)\n")
    }
}
