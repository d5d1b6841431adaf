import Foundation
import Latchkey
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

/// The seeds' scenario end to end: store login information, read it back in a second process ("after the
/// app was reinstalled"), update it, delete it — through the Keychain API, through LatchkeySecurity (the
/// ZJKeyChainManager port), and through LatchkeyTesting. Each step is a separate process using the
/// default connection, configured only by LATCHKEY_KEYCHAIN, LATCHKEY_PASSPHRASE and LATCHKEY_APPLICATION_ID.
@Suite(.dedicatedThreads) struct SeedScenarioTests {
    let directory = TemporaryDirectory()

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["LATCHKEY_KEYCHAIN"] = directory.file("app.keychain")
        environment["LATCHKEY_PASSPHRASE"] = "scenario passphrase"
        environment["LATCHKEY_APPLICATION_ID"] = "com.example.seed-app"
        return environment
    }

    func helper(_ arguments: String...) throws -> String {
        let output = try HelperProcess.run(Array(arguments), environment: environment)
        #expect(output.status == 0, "\(arguments): \(output.stderr)")
        return output.stdout
    }

    @Test func throughTheKeychainAPI() throws {
        #expect(try helper("api", "set-login", "com.example.login", "current", "jit-001", "alice", "hunter2") == "")
        #expect(try helper("api", "get-login", "com.example.login", "current") == "jit-001 alice hunter2\n")
        #expect(try helper("api", "set-login", "com.example.login", "current", "jit-001", "alice", "rotated") == "")
        #expect(try helper("api", "get-login", "com.example.login", "current") == "jit-001 alice rotated\n")
        // Stored, and the file really is a keychain: no plaintext of what was stored in any file.
        let stored = ["com.example.login", "current", "jit-001", "alice", "hunter2", "rotated"]
        #expect(try plaintextsFound(stored, under: directory.path) == [])
        #expect(try helper("api", "remove", "com.example.login", "current") == "removed\n")
        #expect(try helper("api", "get-login", "com.example.login", "current") == "<nil>\n")
        #expect(try helper("api", "remove", "com.example.login", "current") == "absent\n")
        #expect(try permissions(directory.file("app.keychain")) == 0o600)
        #expect(try plaintextsFound(stored, under: directory.path) == [])
    }

    @Test func throughLatchkeySecurity() throws {
        #expect(try helper("seed", "save", "jit-001", "alice", "hunter2") == "saved\n")
        #expect(try helper("seed", "read") == "jit-001 alice hunter2\n")
        #expect(try helper("seed", "save", "jit-002", "bob", "s3cret") == "saved\n")
        #expect(try helper("seed", "read") == "jit-002 bob s3cret\n")
        #expect(try helper("seed", "delete") == "deleted\n")
        #expect(try helper("seed", "read") == "<empty>\n")
    }

    @Test func aWrongPassphraseInTheSecondProcessIsAuthFailed() throws {
        _ = try helper("api", "set", "s", "k", "v")
        var wrong = environment
        wrong["LATCHKEY_PASSPHRASE"] = "not it"
        let output = try HelperProcess.run(["api", "get", "s", "k"], environment: wrong)
        #expect(output.status == 1)
        #expect(
            output.stderr
                == "latchkey-test-helper: api: -25293 The user name or passphrase you entered is not correct.\n")
    }

    @Test func anotherApplicationDoesNotSeeTheItems() throws {
        _ = try helper("api", "set", "s", "k", "v")
        var other = environment
        other["LATCHKEY_APPLICATION_ID"] = "com.example.other-app"
        let output = try HelperProcess.run(["api", "get", "s", "k"], environment: other)
        #expect(output.stdout == "<nil>\n")
    }

    @Test func throughLatchkeyTesting() throws {
        // In memory there is no second process; a fresh Keychain value over the same store stands in for
        // the reinstalled app.
        let memory = InMemoryKeychain(applicationIdentifier: "com.example.seed-app")
        struct LoginInfo: Codable, Equatable { var enterpriseID, account, password: String }
        try memory.keychain(service: "com.example.login").set(
            LoginInfo(enterpriseID: "jit-001", account: "alice", password: "hunter2"), forKey: "current")
        let reinstalled = memory.keychain(service: "com.example.login")
        #expect(
            try reinstalled.value(LoginInfo.self, forKey: "current")
                == LoginInfo(enterpriseID: "jit-001", account: "alice", password: "hunter2"))
        try reinstalled.set(
            LoginInfo(enterpriseID: "jit-001", account: "alice", password: "rotated"), forKey: "current")
        #expect(try reinstalled.value(LoginInfo.self, forKey: "current")?.password == "rotated")
        #expect(try reinstalled.remove("current"))
        #expect(try reinstalled.value(LoginInfo.self, forKey: "current") == nil)
    }
}

func permissions(_ path: String) throws -> Int {
    ((try FileManager.default.attributesOfItem(atPath: path))[.posixPermissions] as? NSNumber)?.intValue ?? -1
}
