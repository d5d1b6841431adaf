import Foundation
import LatchkeyTestSupport
import Testing

/// Options anywhere before `--`, as macOS `security` users type them: after the keychain, after the
/// executable, between the words — from the real binary.
@Suite(.dedicatedThreads) struct OptionOrderTests {
    let sandbox = CLISandbox()

    /// Runs latchkey in the sandbox's directory, where `./c.keychain` is.
    func run(_ arguments: [String], environment: [String: String]? = nil, input: String? = nil) throws
        -> HelperProcess.Output
    {
        try HelperProcess.run(
            sandbox.binary, arguments, environment: environment ?? sandbox.unattended,
            input: input.map { Data($0.utf8) }, currentDirectory: sandbox.directory.path)
    }

    @Test func findGenericPasswordTakesItsOptionsAfterTheKeychain() throws {
        #expect(try run(["create-keychain", "--kdf-memory", "19", "--kdf-passes", "2", "./c.keychain"]).status == 0)
        let add = try run(
            ["add-generic-password", "./c.keychain", "-a", "alice", "-s", "mail", "--password-stdin"], input: "hunter2")
        #expect(add.status == 0, "\(add.stderr)")
        for arguments in [
            ["find-generic-password", "-a", "alice", "-s", "mail", "./c.keychain", "-w"],
            ["find-generic-password", "-a", "alice", "./c.keychain", "-s", "mail", "-w"],
            ["find-generic-password", "./c.keychain", "-w", "-a", "alice", "-s", "mail"],
            ["find-generic-password", "-w", "-a", "alice", "-s", "mail", "./c.keychain"],
        ] {
            let found = try run(arguments)
            #expect(found.status == 0, "\(arguments): \(found.stderr)")
            #expect(found.stdout == "hunter2\n", "\(arguments)")
            #expect(found.stderr == "", "\(arguments)")
        }
        // After `--` a word is a word, even one that looks like an option: here, a keychain named "-w".
        let literal = try run(["find-generic-password", "-a", "alice", "-s", "mail", "--", "-w"])
        #expect(literal.status == 50, "\(literal.stderr)")
        #expect(literal.stdout == "")
    }

    @Test func registerApplicationTakesThePassphraseFileAfterTheExecutable() throws {
        try sandbox.createKeychain()
        let keyFile = sandbox.directory.file("passphrase")
        #expect(
            FileManager.default.createFile(
                atPath: keyFile, contents: Data("\(CLISandbox.passphrase)\n".utf8),
                attributes: [.posixPermissions: 0o600]))
        let register = try run(
            ["register-application", "/usr/bin/true", "--passphrase-file", keyFile, "--app-id", "com.example.true"],
            environment: sandbox.environment)
        #expect(register.status == 0, "\(register.stderr)")
        #expect(register.stdout == "registered /usr/bin/true as com.example.true with access groups com.example.true\n")
        let list = try run(["list-applications", "--passphrase-file", keyFile], environment: sandbox.environment)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.hasPrefix(#"com.example.true ["com.example.true"] /usr/bin/true ("#), "\(list.stdout)")
        let unregister = try run(
            ["unregister-application", "/usr/bin/true", "--passphrase-file", keyFile], environment: sandbox.environment)
        #expect(unregister.status == 0, "\(unregister.stderr)")
    }

    /// `-w` as the very last word asks for the item's password on the terminal, wherever the keychain is;
    /// the unlock prompt names the keychain as given — the argument, or LATCHKEY_KEYCHAIN, never "default".
    @Test func aTrailingDashWAfterTheKeychainPromptsAndTheUnlockPromptNamesTheKeychain() throws {
        #expect(try run(["create-keychain", "--kdf-memory", "19", "--kdf-passes", "2", "./c.keychain"]).status == 0)
        let add = try PseudoTerminalSession(
            executable: sandbox.binary,
            arguments: ["add-generic-password", "-a", "alice", "-s", "mail", "./c.keychain", "-w"],
            environment: sandbox.environment, currentDirectory: sandbox.directory.path)
        #expect(add.expect("password data for new item: "))
        add.send("typed secret")
        #expect(add.expect("retype password for new item: "))
        add.send("typed secret")
        #expect(add.expect("password to unlock ./c.keychain: "), "\(add.transcript)")
        add.send(CLISandbox.passphrase)
        #expect(add.wait() == 0, "\(add.transcript)")

        var environment = sandbox.environment
        environment["LATCHKEY_KEYCHAIN"] = "./c.keychain"
        let find = try PseudoTerminalSession(
            executable: sandbox.binary, arguments: ["find-generic-password", "-s", "mail", "-w"],
            environment: environment, currentDirectory: sandbox.directory.path)
        #expect(find.expect("password to unlock ./c.keychain: "), "\(find.transcript)")
        find.send(CLISandbox.passphrase)
        #expect(find.wait() == 0, "\(find.transcript)")
        #expect(find.transcript.hasSuffix("typed secret\r\n"), "\(find.transcript)")
    }
}
