import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct BackupCommandTests {
    let sandbox = CLISandbox()

    func backupEnvironment(_ passphrase: String = "backup passphrase") -> [String: String] {
        sandbox.unattended.merging(["LATCHKEY_BACKUP_PASSPHRASE": passphrase]) { _, new in new }
    }

    @Test func exportThenImportElsewhere() throws {
        try sandbox.createKeychain()
        try sandbox.run(
            "add-generic-password", "-a", "alice", "-s", "mail", "--password-stdin", input: "first-password")
        try sandbox.run(
            "add-internet-password", "-a", "bob", "-s", "example.com", "-P", "443", "--password-stdin",
            input: "second-password")
        try sandbox.run(
            "add-generic-password", "-a", "local", "-s", "device", "--accessibility", "aku", "--password-stdin",
            input: "three")
        let backup = sandbox.directory.file("backup.lkb")
        let export = try sandbox.run(["export", "-o", backup], environment: backupEnvironment())
        #expect(export.status == 0, "\(export.stderr)")
        #expect(
            export.stderr
                == "exported 2 items to \(backup); left 1 this-device-only items behind (--include-this-device-only takes them)\n"
        )
        #expect(try permissions(backup) == 0o600)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: backup))
        // Needles of six bytes or more: a shorter one turns up in random ciphertext now and then.
        for plaintext in ["alice", "first-password", "example.com", "second-password"] {
            #expect(bytes.range(of: Data(plaintext.utf8)) == nil, "\(plaintext) is in the backup in plaintext")
        }
        #expect(
            try sandbox.run(["export", "-o", backup], environment: backupEnvironment()).status == 1, "never overwrites")

        try sandbox.createKeychain("other")
        let imported = try sandbox.run(["import", "-i", backup, "other"], environment: backupEnvironment())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout == "added 2, updated 0, skipped 0\n")
        #expect(try sandbox.run("find-generic-password", "-s", "mail", "-w", "other").stdout == "first-password\n")
        #expect(
            try sandbox.run("find-internet-password", "-s", "example.com", "-w", "other").stdout == "second-password\n")
        #expect(try sandbox.run("find-generic-password", "-s", "device", "other").status == 44)

        // Conflicts: skip by default, replace on request.
        try sandbox.run(
            "add-generic-password", "-U", "-a", "alice", "-s", "mail", "--password-stdin", "other", input: "changed")
        #expect(
            try sandbox.run(["import", "-i", backup, "other"], environment: backupEnvironment()).stdout
                == "added 0, updated 0, skipped 2\n")
        #expect(try sandbox.run("find-generic-password", "-s", "mail", "-w", "other").stdout == "changed\n")
        #expect(
            try sandbox.run(
                ["import", "-i", backup, "--on-conflict", "newer", "other"], environment: backupEnvironment()
            ).stdout
                == "added 0, updated 0, skipped 2\n", "the keychain's copies are newer")
        #expect(
            try sandbox.run(
                ["import", "-i", backup, "--on-conflict", "replace", "other"], environment: backupEnvironment()
            ).stdout
                == "added 0, updated 2, skipped 0\n")
        #expect(try sandbox.run("find-generic-password", "-s", "mail", "-w", "other").stdout == "first-password\n")
    }

    @Test func thisDeviceOnlyItemsOnRequest() throws {
        try sandbox.createKeychain()
        try sandbox.run(
            "add-generic-password", "-a", "local", "-s", "device", "--accessibility", "cku", "--password-stdin",
            input: "x")
        let backup = sandbox.directory.file("all.lkb")
        let export = try sandbox.run(
            ["export", "-o", backup, "--include-this-device-only"], environment: backupEnvironment())
        #expect(export.stderr == "exported 1 items to \(backup)\n")
        // And it comes back, still this-device-only, in another keychain.
        try sandbox.createKeychain("other")
        let imported = try sandbox.run(["import", "-i", backup, "other"], environment: backupEnvironment())
        #expect(imported.stdout == "added 1, updated 0, skipped 0\n", "\(imported.stderr)")
        #expect(try sandbox.run("find-generic-password", "-s", "device", "-w", "other").stdout == "x\n")
        let found = try sandbox.run("find-generic-password", "-s", "device", "other")
        #expect(found.stdout.contains("    \"pdmn\"<blob>=\"cku\"\n"), "\(found.stdout)")
    }

    @Test func aWrongPassphraseOrADamagedBackupImportsNothing() throws {
        try sandbox.createKeychain()
        try sandbox.run(
            "add-generic-password", "-a", "alice", "-s", "mail", "--password-stdin", input: "first-password")
        let backup = sandbox.directory.file("backup.lkb")
        #expect(try sandbox.run(["export", "-o", backup], environment: backupEnvironment()).status == 0)
        try sandbox.createKeychain("other")
        let before = try sandbox.snapshot()
        let wrong = try sandbox.run(["import", "-i", backup, "other"], environment: backupEnvironment("not it"))
        #expect(wrong.status == 51)
        #expect(
            wrong.stderr
                == "latchkey: import: The user name or passphrase you entered is not correct. (wrong backup passphrase, or the backup is damaged)\n"
        )
        var damaged = try Data(contentsOf: URL(fileURLWithPath: backup))
        damaged[damaged.count - 20] ^= 1
        try damaged.write(to: URL(fileURLWithPath: backup))
        #expect(try sandbox.run(["import", "-i", backup, "other"], environment: backupEnvironment()).status == 51)
        try Data("not a backup".utf8).write(to: URL(fileURLWithPath: backup))
        let foreign = try sandbox.run(["import", "-i", backup, "other"], environment: backupEnvironment())
        #expect(foreign.status == 93)
        #expect(
            foreign.stderr == "latchkey: import: Unable to decode the provided data. (this is not a Latchkey backup)\n")
        #expect(try sandbox.snapshot() == before)
        #expect(
            try sandbox.run(
                ["import", "-i", backup, "--on-conflict", "sometimes", "other"], environment: backupEnvironment()
            ).status == 64)
    }
}

func permissions(_ path: String) throws -> Int {
    ((try FileManager.default.attributesOfItem(atPath: path))[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

/// Items behind access control (`.userPresence`) in the commands that read every secret: export and
/// `dump-keychain -d` take the passphrase given to unlock as the user's confirmation, and import replaces
/// such an item without asking (it reads no secret).
@Suite(.dedicatedThreads) struct ProtectedItemBackupTests {
    let sandbox = CLISandbox()

    @Test func exportDumpAndImportCarryProtectedItems() throws {
        try sandbox.createKeychain()
        do {
            let keychain = try KeychainDatabase.open(at: sandbox.defaultKeychain)
            try keychain.unlock(with: Passphrase(CLISandbox.passphrase))
            let control = AccessControl(protection: .whenUnlocked, flags: .userPresence)
            try keychain.add(
                NewItem(
                    .genericPassword,
                    attributes: [
                        .service: .string("bank"), .account: .string("pin"), .accessControl: control.attributeValue,
                    ], data: Data("4321".utf8)), caller: CallerIdentity(applicationIdentifier: "latchkey"))
        }
        let environment = sandbox.unattended.merging(["LATCHKEY_BACKUP_PASSPHRASE": "backup passphrase"]) { _, new in
            new
        }
        let dump = try sandbox.run(["dump-keychain", "-d"], environment: environment)
        #expect(dump.status == 0, "\(dump.stderr)")
        #expect(dump.stdout.contains("\"4321\""), "\(dump.stdout)")
        let backup = sandbox.directory.file("protected.lkb")
        let export = try sandbox.run(["export", "-o", backup], environment: environment)
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stderr == "exported 1 items to \(backup)\n")

        try sandbox.createKeychain("other")
        let imported = try sandbox.run(["import", "-i", backup, "other"], environment: environment)
        #expect(imported.stdout == "added 1, updated 0, skipped 0\n", "\(imported.stderr)")
        #expect(
            try sandbox.run(["import", "-i", backup, "--on-conflict", "replace", "other"], environment: environment)
                .stdout
                == "added 0, updated 1, skipped 0\n")
        // Still protected after the round trip: the attributes show the control, and no terminal can confirm.
        let restored = try KeychainDatabase.open(at: sandbox.directory.path + "/data/latchkey/other.keychain")
        try restored.unlock(with: Passphrase(CLISandbox.passphrase))
        let caller = CallerIdentity(applicationIdentifier: "latchkey")
        let found = try restored.copyMatching(
            ItemQuery(.genericPassword, matching: [.service: .string("bank")], returning: .attributes),
            caller: caller)
        #expect(found.first?[.accessControl].flatMap(AccessControl.init(attributeValue:))?.flags == .userPresence)
        #expect(
            throws: KeychainError(
                .interactionNotAllowed, "a matching item needs the user's confirmation, and there is no one to ask here"
            )
        ) {
            _ = try restored.copyMatching(
                ItemQuery(.genericPassword, matching: [.service: .string("bank")], returning: .data), caller: caller)
        }
    }
}
