import Foundation
import LatchkeyTestSupport
import Testing

/// create-, delete-, list-, default-keychain, show-keychain-info, set-keychain-password, lock-, unlock-
/// keychain and set-keychain-settings through the built binary.
@Suite(.dedicatedThreads) struct KeychainCommandTests {
    let sandbox = CLISandbox()

    @Test func createListDefaultAndDelete() throws {
        try sandbox.createKeychain()
        try sandbox.createKeychain("work")
        let list = try sandbox.run("list-keychains")
        #expect(list.status == 0)
        #expect(
            list.stdout
                == "    \"\(sandbox.defaultKeychain)\"\n    \"\(sandbox.directory.path)/data/latchkey/work.keychain\"\n"
        )
        #expect(try sandbox.run("default-keychain").stdout == "    \"\(sandbox.defaultKeychain)\"\n")

        // Creating over an existing keychain: errSecDuplicateKeychain (-25296), exit status 0x30.
        let again = try sandbox.run("create-keychain", "--kdf-memory", "19", "--kdf-passes", "2", "work")
        #expect(again.status == 48)
        #expect(again.stderr.hasPrefix("latchkey: create-keychain: A keychain with the same name already exists."))

        #expect(try sandbox.run("default-keychain", "-s", "work").status == 0)
        #expect(
            try sandbox.run("default-keychain").stdout
                == "    \"\(sandbox.directory.path)/data/latchkey/work.keychain\"\n")
        #expect(
            try sandbox.run("add-generic-password", "-a", "a", "-s", "s", "--password-stdin", input: "in work").status
                == 0)
        #expect(try sandbox.run("find-generic-password", "-s", "s", "-w", "work.keychain").stdout == "in work\n")
        #expect(try sandbox.run("find-generic-password", "-s", "s", sandbox.defaultKeychain).status == 44)
        #expect(try sandbox.run("default-keychain", "-s").status == 0)
        #expect(try sandbox.run("default-keychain").stdout == "    \"\(sandbox.defaultKeychain)\"\n")

        #expect(try sandbox.run("delete-keychain", "work").status == 0)
        #expect(!FileManager.default.fileExists(atPath: sandbox.directory.path + "/data/latchkey/work.keychain"))
        #expect(
            !FileManager.default.fileExists(atPath: sandbox.directory.path + "/data/latchkey/work.keychain.device-key"))
        #expect(try sandbox.run("delete-keychain", "work").status == 50)
        #expect(try sandbox.run("delete-keychain").status == 64)
        #expect(try sandbox.run("list-keychains", "-s").status == 1)
        #expect(try sandbox.run("list-keychains", "-s", "x").status == 64)
    }

    /// The --kdf bounds are the engine's (`KeyDerivation.validate`): the command line states them as the
    /// engine does, before any file is made.
    @Test(arguments: [
        (
            ["--kdf-memory", "5"],
            "--kdf-memory/--kdf-passes: key derivation Argon2id, 5 MiB, 3 passes is outside the accepted range (19 to 4096 MiB, 2 to 64 passes)"
        ),
        (
            ["--kdf-memory", "4097", "--kdf-passes", "2"],
            "--kdf-memory/--kdf-passes: key derivation Argon2id, 4097 MiB, 2 passes is outside the accepted range (19 to 4096 MiB, 2 to 64 passes)"
        ),
        (
            ["--kdf-passes", "65"],
            "--kdf-memory/--kdf-passes: key derivation Argon2id, 64 MiB, 65 passes is outside the accepted range (19 to 4096 MiB, 2 to 64 passes)"
        ),
        (["--kdf-passes", "two"], "--kdf-passes needs a number, not 'two'"),
        (["--kdf-memory", "-1"], "--kdf-memory needs a number of MiB, not '-1'"),
    ])
    func keyDerivationOutsideTheEnginesBoundsIsAUsageError(_ options: [String], _ message: String) throws {
        let create = try sandbox.run(["create-keychain", "-p", "pw"] + options + ["bounds"])
        #expect(create.status == 64)
        #expect(
            create.stderr.contains("latchkey: create-keychain: \(message)\nUsage: latchkey create-keychain "),
            "\(create.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.directory.path + "/data/latchkey/bounds.keychain"))
    }

    @Test func showInfoAndSettings() throws {
        try sandbox.createKeychain()
        let info = try sandbox.run("show-keychain-info")
        #expect(info.status == 0)
        #expect(info.stderr == "Keychain \"\(sandbox.defaultKeychain)\" no-timeout\n")
        #expect(
            info.stdout == """
                path: \(sandbox.defaultKeychain)
                format: 6 (this Latchkey reads up to 6)
                key derivation: Argon2id, 19 MiB, 2 passes
                items: 0
                device key: present
                tpm: not enrolled
                agent: not running

                """)
        #expect(try sandbox.run("set-keychain-settings", "-l", "-t", "300").status == 0)
        #expect(
            try sandbox.run("show-keychain-info").stderr
                == "Keychain \"\(sandbox.defaultKeychain)\" lock-on-sleep use-lock-interval timeout=300s\n")
        #expect(try sandbox.run("set-keychain-settings").status == 0)
        #expect(try sandbox.run("show-keychain-info").stderr == "Keychain \"\(sandbox.defaultKeychain)\" no-timeout\n")
    }

    @Test func changingThePassphrase() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "a", "-s", "s", "--password-stdin", input: "kept")
        // The old passphrase comes from LATCHKEY_PASSPHRASE, the new one from standard input (fd 0).
        let change = try sandbox.run(
            "set-keychain-password", "--new-passphrase-fd", "0", "--kdf-memory", "32", "--kdf-passes", "3",
            input: "the new one\n")
        #expect(change.status == 0, "\(change.stderr)")
        #expect(try sandbox.run("find-generic-password", "-s", "s", "-w").status == 51)
        var renewed = sandbox.environment
        renewed["LATCHKEY_PASSPHRASE"] = "the new one"
        #expect(try sandbox.run(["find-generic-password", "-s", "s", "-w"], environment: renewed).stdout == "kept\n")
        #expect(
            try sandbox.run(["show-keychain-info"], environment: renewed).stdout.contains(
                "key derivation: Argon2id, 32 MiB, 3 passes"))
        // A wrong old passphrase changes nothing.
        #expect(
            try sandbox.run(["set-keychain-password", "-o", "wrong", "-p", "x"], environment: renewed).status == 51)
    }

    @Test func lockAndUnlockWithoutAnAgent() throws {
        try sandbox.createKeychain()
        let unlock = try sandbox.run("unlock-keychain", "--no-agent")
        #expect(unlock.status == 0)
        #expect(
            unlock.stderr
                == "latchkey: unlock-keychain: the passphrase is correct; without the agent the keychain stays unlocked only within each latchkey command\n"
        )
        let wrong = try sandbox.run("unlock-keychain", "--no-agent", "-p", "guess")
        #expect(wrong.status == 51)
        #expect(
            wrong.stderr.hasSuffix(
                "latchkey: unlock-keychain: The user name or passphrase you entered is not correct.\n"))
        let lock = try sandbox.run("lock-keychain")
        #expect(lock.status == 0)
        #expect(
            lock.stderr
                == "latchkey: lock-keychain: no agent is running; the keychain's keys are held by no process, so it is locked\n"
        )
    }

    @Test func passphraseFromAKeyFile() throws {
        let keyFile = sandbox.directory.file("passphrase")
        #expect(
            FileManager.default.createFile(
                atPath: keyFile, contents: Data("from a file\n".utf8), attributes: [.posixPermissions: 0o600]))
        let create = try sandbox.run(
            ["create-keychain", "--kdf-memory", "19", "--kdf-passes", "2", "--passphrase-file", keyFile],
            environment: sandbox.environment)
        #expect(create.status == 0, "\(create.stderr)")
        #expect(
            try sandbox.run(
                ["unlock-keychain", "--no-agent", "--passphrase-file", keyFile], environment: sandbox.environment
            ).status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyFile)
        let open = try sandbox.run(
            ["unlock-keychain", "--no-agent", "--passphrase-file", keyFile], environment: sandbox.environment)
        #expect(open.status == 195)
        #expect(
            open.stderr
                == "latchkey: unlock-keychain: Write permissions error. (the key file \(keyFile) is readable by others (mode 0644); run chmod 600 on it)\n"
        )
    }
}
