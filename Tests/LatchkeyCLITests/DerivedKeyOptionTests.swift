import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// `unlock-keychain --derived-key-fd`: what pam_latchkey runs at the login's auth step (issue 56). It unlocks
/// nothing and writes the key the passphrase derives to a pipe, and only to a pipe.
@Suite(.dedicatedThreads) struct DerivedKeyOptionTests {
    let sandbox = CLISandbox()
    static let usage = "Usage: latchkey unlock-keychain [-p passphrase] [--no-agent] [keychain]\n"

    /// Runs `latchkey arguments` through the shell, with `redirection` giving it descriptor 4 (`4>&1`: the
    /// pipe of standard output, whose own output goes to /dev/null).
    func run(_ arguments: [String], redirection: String = "4>&1 >/dev/null", input: String? = nil) throws
        -> HelperProcess.Output
    {
        try HelperProcess.run(
            "/bin/sh", ["-c", "exec \"$@\" \(redirection)", "sh", sandbox.binary] + arguments,
            environment: input == nil ? sandbox.unattended : sandbox.environment, input: input.map { Data($0.utf8) })
    }

    @Test func theKeyGoesToThePipeAndOpensTheKeychain() throws {
        try sandbox.createKeychain()
        let derived = try run(["unlock-keychain", "--derived-key-fd", "4"])
        #expect(derived.status == 0, "\(derived.stderr)")
        #expect(derived.stderr == "")
        #expect(derived.stdoutBytes.count == 65)
        let key = try #require(derived.stdoutBytes.withUnsafeBytes { DerivedUnlockKey(encoded: $0) })
        let keychain = try KeychainDatabase.open(at: sandbox.defaultKeychain)
        try keychain.unlock(with: key)
        #expect(keychain.lockState == .unlocked)
        // Nothing was unlocked on the way: no agent was started.
        #expect(try AgentClient.connect(keychainPath: sandbox.defaultKeychain, environment: sandbox.environment) == nil)
    }

    @Test func aWrongPassphraseWritesNothing() throws {
        try sandbox.createKeychain()
        let derived = try run(["unlock-keychain", "--derived-key-fd", "4", "--passphrase-fd", "0"], input: "guess\n")
        #expect(derived.status == 51)
        #expect(derived.stdoutBytes.isEmpty)
        #expect(
            derived.stderr == "latchkey: unlock-keychain: The user name or passphrase you entered is not correct.\n")
    }

    @Test func onlyAPipeTakesTheKey() throws {
        try sandbox.createKeychain()
        let file = sandbox.directory.file("key")
        let toFile = try run(["unlock-keychain", "--derived-key-fd", "4"], redirection: "4>'\(file)'")
        #expect(toFile.status == 64)
        #expect(
            toFile.stderr
                == "latchkey: unlock-keychain: --derived-key-fd: descriptor 4 is not a pipe; the key is written only to a pipe\n"
                + Self.usage)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)).isEmpty)
        let closed = try run(["unlock-keychain", "--derived-key-fd", "9"])
        #expect(closed.status == 64)
        #expect(closed.stderr == "latchkey: unlock-keychain: --derived-key-fd: descriptor 9 is not open\n" + Self.usage)
        let word = try run(["unlock-keychain", "--derived-key-fd", "four"])
        #expect(word.status == 64)
        #expect(
            word.stderr == "latchkey: unlock-keychain: --derived-key-fd needs a file descriptor number, not 'four'\n"
                + Self.usage)
        #expect(closed.stdoutBytes.isEmpty && word.stdoutBytes.isEmpty)
    }

    @Test func theUnattendedUnlockHasNoPassphraseToDeriveFrom() throws {
        try sandbox.createKeychain()
        let both = try run(["unlock-keychain", "--unattended", "--derived-key-fd", "4"], input: "")
        #expect(both.status == 64)
        #expect(
            both.stderr
                == "latchkey: unlock-keychain: --derived-key-fd derives from a passphrase; --unattended takes none\n"
                + Self.usage)
    }
}
