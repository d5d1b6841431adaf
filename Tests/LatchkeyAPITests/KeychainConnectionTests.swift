import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct KeychainConnectionTests {
    let directory = TemporaryDirectory()

    @Test func theDefaultPathFollowsTheEnvironment() {
        #expect(
            KeychainLocation.defaultPath(environment: ["HOME": "/home/a"])
                == "/home/a/.local/share/latchkey/login.keychain")
        #expect(
            KeychainLocation.defaultPath(environment: ["HOME": "/home/a", "XDG_DATA_HOME": "/data"])
                == "/data/latchkey/login.keychain")
        #expect(
            KeychainLocation.defaultPath(environment: ["HOME": "/home/a", "LATCHKEY_KEYCHAIN": "/srv/x.keychain"])
                == "/srv/x.keychain")
        #expect(
            KeychainLocation.defaultPath(environment: ["HOME": "/home/a", "LATCHKEY_KEYCHAIN": "work"])
                == "/home/a/.local/share/latchkey/work.keychain")
        #expect(KeychainLocation.resolve("ci.db", environment: ["HOME": "/h"]) == "/h/.local/share/latchkey/ci.db")
        // A relative XDG_DATA_HOME is ignored, as the XDG specification says.
        #expect(
            KeychainLocation.directory(environment: ["HOME": "/h", "XDG_DATA_HOME": "rel"])
                == "/h/.local/share/latchkey")
    }

    @Test func anEmbeddedConnectionCreatesTheKeychainOnceAndSharesIt() throws {
        let path = directory.file("app.keychain")
        let keyFile = directory.file("passphrase")
        #expect(
            FileManager.default.createFile(
                atPath: keyFile, contents: Data("file passphrase\n".utf8),
                attributes: [.posixPermissions: 0o600]))
        let connection = KeychainConnection.embedded(
            path: path, passphrase: .keyFile(keyFile),
            applicationIdentifier: "com.example.app")
        try Keychain(service: "s", connection: connection).set("v", forKey: "k")
        #expect(FileManager.default.fileExists(atPath: path))
        // A second value with the same path uses the same open, unlocked handle.
        #expect(try Keychain(service: "s", connection: connection).string(forKey: "k") == "v")
        let database = try #require(try connection.open())
        #expect(database === (try connection.open()))
        // The key file's first line is the passphrase.
        let reopened = try KeychainDatabase.open(at: path)
        try reopened.unlock(with: Passphrase("file passphrase"))
    }

    @Test func keyFilesReadableByOthersAreRefused() throws {
        let keyFile = directory.file("passphrase")
        #expect(
            FileManager.default.createFile(
                atPath: keyFile, contents: Data("p".utf8),
                attributes: [.posixPermissions: 0o644]))
        let failure = #expect(throws: KeychainError.self) { _ = try PassphraseSource.keyFile(keyFile).read() }
        #expect(failure?.status == .writePermission)
        #expect(failure?.detail == "the key file \(keyFile) is readable by others (mode 0644); run chmod 600 on it")
        #expect(status { _ = try PassphraseSource.keyFile(directory.file("missing")).read() } == .param)
    }

    @Test func passphrasesFromAFileDescriptorAndTheEnvironment() throws {
        let pipe = Pipe()
        pipe.fileHandleForWriting.write(Data("from a pipe\nsecond line".utf8))
        try pipe.fileHandleForWriting.close()
        let fromPipe = try PassphraseSource.fileDescriptor(pipe.fileHandleForReading.fileDescriptor).read()
        #expect(fromPipe == Passphrase("from a pipe"))
        #expect(try PassphraseSource.environment.read(environment: ["LATCHKEY_PASSPHRASE": "env"]) == Passphrase("env"))
        #expect(status { _ = try PassphraseSource.environment.read(environment: [:]) } == .param)
        #expect(PassphraseSource.automatic(environment: ["LATCHKEY_PASSPHRASE": "x"]) == .environment)
        #expect(PassphraseSource.automatic(environment: [:]) == .prompt)
    }

    @Test func withoutATerminalAPromptIsInteractionNotAllowed() throws {
        // In a session of its own (as every child of the tests) the helper has no controlling terminal,
        // whether or not the test runner has one.
        let output = try HelperProcess.run(HelperProcess.executable, ["prompt-without-terminal"])
        #expect(
            output.stdout
                == "-25308 no terminal to ask for the passphrase; set LATCHKEY_PASSPHRASE or pass a file descriptor\n",
            "\(output.stderr)")
    }

    @Test func passphrasesNeverPrint() {
        #expect(String(describing: Passphrase("hunter2")) == "Passphrase(redacted)")
        #expect(String(reflecting: Passphrase("hunter2")).contains("hunter2") == false)
    }
}
