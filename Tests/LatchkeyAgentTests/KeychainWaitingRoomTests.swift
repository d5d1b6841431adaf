import Foundation
import Latchkey
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `latchkeyd --wait-for-keychain`: started before its keychain exists (by xdg-desktop-portal, by socket
/// activation), the agent waits for the file, answers `errSecNoSuchKeychain` meanwhile, holds the password an
/// unlock hands over and unlocks the keychain with it once it appears; at the end of its time it exits as it
/// does without the option.
@Suite(.serialized, .dedicatedThreads) struct KeychainWaitingRoomTests {
    /// A sandbox whose keychain (and its directory) does not exist.
    static func sandboxWithoutKeychain() throws -> AgentSandbox {
        let sandbox = try AgentSandbox()
        try FileManager.default.removeItem(atPath: sandbox.directory.file("data/latchkey"))
        return sandbox
    }

    /// Starts the agent of `sandbox`, waiting at most `seconds` for the keychain.
    static func startWaiting(_ sandbox: AgentSandbox, seconds: Int = 60) throws {
        try sandbox.start(
            HelperProcess.product("latchkeyd"), ["--verbose", "--no-ssh-agent", "--wait-for-keychain", "\(seconds)"])
    }

    /// A raw connection to the agent, past the greeting and the hello.
    static func connect(_ sandbox: AgentSandbox) throws -> AgentStream {
        let stream = try #require(AgentStream.connect(path: sandbox.socketPath, timeoutSeconds: 10))
        let challenge = try AgentGreeting.decode(try stream.receive()).challenge
        try stream.send(AgentRequest.hello(keychainPath: sandbox.keychainPath, challenge: challenge).encoded(id: 1))
        #expect(try AgentResponse.decode(try stream.receive()).outcome == .success(.none))
        return stream
    }

    /// Sends `request` as request `id` and returns the agent's outcome.
    static func ask(_ stream: AgentStream, _ request: KeychainRequest, id: UInt32) throws -> Result<
        KeychainReply, KeychainError
    > {
        try stream.send(AgentRequest.keychain(request).encoded(id: id))
        return try AgentResponse.decode(try stream.receive()).outcome
    }

    /// The failure of `outcome` (nil, with an issue, when it succeeded).
    static func failure(_ outcome: Result<KeychainReply, KeychainError>) -> KeychainError? {
        guard case .failure(let error) = outcome else {
            Issue.record("expected a failure, got \(outcome)")
            return nil
        }
        return error
    }

    /// Checks `error` is `errSecNoSuchKeychain` with the detail `before + N + after`, N from 1 to `most`.
    static func expectNoKeychainYet(_ error: KeychainError?, _ before: String, _ after: String, most: Int) {
        #expect(error?.status == .noSuchKeychain)
        let detail = error?.detail ?? ""
        let seconds =
            detail.hasPrefix(before) && detail.hasSuffix(after)
            ? Int(detail.dropFirst(before.count).dropLast(after.count)) : nil
        #expect(seconds.map { (1...most).contains($0) } == true, "\(detail)")
    }

    /// The keychain's lock state, once the agent serves it (nil while it still waits, or between).
    static func servedLockState(_ sandbox: AgentSandbox) -> LockState? {
        guard let stream = try? connect(sandbox), case .success(.status(let status))? = try? ask(stream, .status, id: 2)
        else {
            return nil  // Still waiting (errSecNoSuchKeychain), or opening the keychain now.
        }
        return status.lockState
    }

    /// Creates the keychain with the command line (the cheapest key derivation it takes) and `passphrase`.
    static func createKeychain(_ sandbox: AgentSandbox, passphrase: String) throws {
        let created = try HelperProcess.run(
            HelperProcess.product("latchkey"),
            ["create-keychain", "--kdf-memory", "19", "--kdf-passes", "2", "--passphrase-fd", "0"],
            environment: sandbox.environment, input: Data((passphrase + "\n").utf8))
        #expect(created.status == 0, "\(created.stderr)")
    }

    @Test func anUnlockWhileWaitingIsHeldAndUnlocksTheKeychainOnceItAppears() throws {
        let sandbox = try Self.sandboxWithoutKeychain()
        try Self.startWaiting(sandbox)
        var status = stat()
        #expect(
            stat(sandbox.directory.file("data/latchkey"), &status) == 0 && status.st_mode & 0o777 == 0o700,
            "made private")
        let stream = try Self.connect(sandbox)
        let path = sandbox.keychainPath
        Self.expectNoKeychainYet(
            Self.failure(try Self.ask(stream, .status, id: 2)),
            "no keychain at \(path) yet; the agent waits ", " more seconds for it", most: 60)
        // A wrong password first; the right one replaces it.
        for (id, passphrase) in [(UInt32(3), "not the password"), (4, AgentSandbox.passphrase)] {
            Self.expectNoKeychainYet(
                Self.failure(try Self.ask(stream, .unlock(Passphrase(passphrase)), id: id)),
                "no keychain at \(path) yet; the agent holds the password until it appears (at most ",
                " more seconds)", most: 60)
        }
        #expect(sandbox.agentLog.contains("(it replaces the one held before)"), "\(sandbox.agentLog)")
        try Self.createKeychain(sandbox, passphrase: AgentSandbox.passphrase)
        try waitUntil("the agent serves the keychain", seconds: 30) { Self.servedLockState(sandbox) != nil }
        #expect(Self.servedLockState(sandbox) == .unlocked, "\(sandbox.agentLog)")
        #expect(
            sandbox.agentLog.contains("latchkeyd: unlocked with the password handed over while waiting\n"),
            "\(sandbox.agentLog)")
        #expect(!sandbox.agentLog.contains(AgentSandbox.passphrase))
        // The waiting room's connection was closed; the agent serves new ones as always.
        #expect(throws: AgentStream.Failure.self) { _ = try Self.ask(stream, .status, id: 5) }
        let info = try sandbox.cli("show-keychain-info")
        #expect(
            info.stdout.contains("agent: running (pid \(sandbox.agent?.pid ?? 0)), unlocked\n"),
            "\(info.stdout)\(info.stderr)")
    }

    @Test func aWrongHeldPasswordLeavesTheKeychainLocked() throws {
        let sandbox = try Self.sandboxWithoutKeychain()
        try Self.startWaiting(sandbox)
        let stream = try Self.connect(sandbox)
        _ = try Self.ask(stream, .unlock(Passphrase("not the password")), id: 2)
        try Self.createKeychain(sandbox, passphrase: AgentSandbox.passphrase)
        try waitUntil("the agent serves the keychain", seconds: 30) { Self.servedLockState(sandbox) != nil }
        #expect(Self.servedLockState(sandbox) == .neverUnlocked)
        #expect(
            sandbox.agentLog.contains(
                "latchkeyd: the password handed over while waiting does not unlock the keychain (\(KeychainStatus.authFailed.name)); it stays locked\n"
            ),
            "\(sandbox.agentLog)")
        let served = try Self.connect(sandbox)
        #expect(
            try Self.ask(served, .listRegistrations, id: 2)
                == .failure(
                    KeychainError(
                        .interactionNotAllowed,
                        "the agent has not been unlocked since it started (application registrations are sealed under the passphrase)"
                    )))
        // The right password unlocks it as always.
        #expect(try Self.ask(served, .unlock(Passphrase(AgentSandbox.passphrase)), id: 3) == .success(.none))
        #expect(Self.servedLockState(sandbox) == .unlocked)
    }

    @Test func aLockWhileWaitingWipesTheHeldPassword() throws {
        let sandbox = try Self.sandboxWithoutKeychain()
        try Self.startWaiting(sandbox)
        let stream = try Self.connect(sandbox)
        _ = try Self.ask(stream, .unlock(Passphrase(AgentSandbox.passphrase)), id: 2)
        #expect(try Self.ask(stream, .lock, id: 3) == .success(.none))
        #expect(
            sandbox.agentLog.contains(
                "latchkeyd: wiped the password handed over while waiting (lock requested by pid "),
            "\(sandbox.agentLog)")
        try Self.createKeychain(sandbox, passphrase: AgentSandbox.passphrase)
        try waitUntil("the agent serves the keychain", seconds: 30) { Self.servedLockState(sandbox) != nil }
        #expect(Self.servedLockState(sandbox) == .neverUnlocked)
        #expect(!sandbox.agentLog.contains("handed over while waiting does not unlock"))
    }

    @Test func atTheDeadlineTheAgentWipesTheHeldPasswordAndExitsAsWithoutTheOption() throws {
        let sandbox = try Self.sandboxWithoutKeychain()
        try Self.startWaiting(sandbox, seconds: 2)
        let stream = try Self.connect(sandbox)
        _ = try Self.ask(stream, .unlock(Passphrase(AgentSandbox.passphrase)), id: 2)
        let agent = try #require(sandbox.agent)
        try waitUntil("the agent exits", seconds: 30) { !agent.isRunning }
        #expect(agent.exitStatus == 50)  // errSecNoSuchKeychain & 0xff, as without --wait-for-keychain.
        #expect(
            sandbox.agentLog.contains(
                "latchkeyd: wiped the password handed over while waiting: no keychain appeared\n"),
            "\(sandbox.agentLog)")
        #expect(
            sandbox.agentLog.hasSuffix(
                "latchkeyd: \(KeychainError(.noSuchKeychain, "\(sandbox.keychainPath) does not exist").message)\n"),
            "\(sandbox.agentLog)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.socketPath), "no socket is left behind")
    }

    @Test func sigtermEndsTheWaitingAgentAtOnce() throws {
        let sandbox = try Self.sandboxWithoutKeychain()
        try Self.startWaiting(sandbox)
        let stream = try Self.connect(sandbox)
        _ = try Self.ask(stream, .unlock(Passphrase(AgentSandbox.passphrase)), id: 2)
        let agent = try #require(sandbox.agent)
        agent.stop()  // SIGTERM; it would be killed (137) if the signal waited for the keychain.
        #expect(agent.exitStatus == 0, "\(sandbox.agentLog)")
    }

    @Test func withoutAnythingHeldTheDeadlineExitsWithTodaysError() throws {
        let sandbox = try Self.sandboxWithoutKeychain()
        let expected =
            "latchkeyd: \(KeychainError(.noSuchKeychain, "\(sandbox.keychainPath) does not exist").message)\n"
        // With the option first: it makes the keychain's directory (without it, a missing directory fails
        // earlier, at the agent's lock beside the keychain, as it always did).
        for arguments in [["--wait-for-keychain", "1"], []] {
            let output = try HelperProcess.run(
                HelperProcess.product("latchkeyd"), ["--no-ssh-agent"] + arguments,
                environment: sandbox.environment.merging(sandbox.agentEnvironment) { _, new in new })
            #expect(output.status == 50, "\(arguments)")
            #expect(output.stderr == expected, "\(arguments): \(output.stderr)")
            #expect(!FileManager.default.fileExists(atPath: sandbox.socketPath))
        }
    }

    @Test func withTheKeychainThereTheOptionChangesNothing() throws {
        let sandbox = try AgentSandbox()
        try Self.startWaiting(sandbox)
        #expect(!sandbox.agentLog.contains("waiting up to"), "\(sandbox.agentLog)")
        try sandbox.unlock()
        #expect(Self.servedLockState(sandbox) == .unlocked)
        let agent = try #require(sandbox.agent)
        agent.stop()
        #expect(agent.exitStatus == 0)
        #expect(sandbox.agentLog.hasSuffix("latchkeyd: keys wiped\n"), "\(sandbox.agentLog)")
    }

    @Test func badWaitingTimesAreRefused() throws {
        let sandbox = try Self.sandboxWithoutKeychain()
        let agentEnvironment = sandbox.environment.merging(sandbox.agentEnvironment) { _, new in new }
        for value in ["0", "3601", "-5", "ten", "1.5", ""] {
            let output = try HelperProcess.run(
                HelperProcess.product("latchkeyd"), ["--wait-for-keychain", value], environment: agentEnvironment)
            #expect(output.status == 64)
            #expect(
                output.stderr
                    == "latchkeyd: --wait-for-keychain takes whole seconds from 1 to 3600, not \"\(value)\"\n",
                "\(output.stderr)")
        }
        let variable = try HelperProcess.run(
            HelperProcess.product("latchkeyd"), [],
            environment: agentEnvironment.merging(["LATCHKEY_WAIT_FOR_KEYCHAIN": "9999"]) { _, new in new })
        #expect(variable.status == 64)
        #expect(
            variable.stderr
                == "latchkeyd: LATCHKEY_WAIT_FOR_KEYCHAIN takes whole seconds from 1 to 3600, not \"9999\"\n",
            "\(variable.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.directory.file("data/latchkey")), "nothing was made")
    }

    @Test func theVariableSetsTheWaitingTime() throws {
        let sandbox = try Self.sandboxWithoutKeychain()
        sandbox.agentEnvironment["LATCHKEY_WAIT_FOR_KEYCHAIN"] = "60"
        try sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--no-ssh-agent"])
        #expect(
            sandbox.agentLog.contains(
                "latchkeyd: no keychain at \(sandbox.keychainPath) yet: waiting up to 60 s for it\n"),
            "\(sandbox.agentLog)")
        let stream = try Self.connect(sandbox)
        #expect(Self.failure(try Self.ask(stream, .settings, id: 2))?.status == .noSuchKeychain)
    }

    @Test(.enabled(if: getuid() == 0 && getpwnam("nobody") != nil, "running a client as another user needs root"))
    func anotherUserIsRefusedInTheWaitingRoom() throws {
        let sandbox = try Self.sandboxWithoutKeychain()
        try Self.startWaiting(sandbox)
        let nobody = try #require(getpwnam("nobody")).pointee.pw_uid
        // Let the other user reach the socket at all (the default directory is private).
        for path in [sandbox.directory.path, sandbox.directory.file("run")] {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
        chmod(sandbox.socketPath, 0o777)
        let output = try HelperProcess.run(
            "/usr/bin/setpriv",
            ["--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups", AgentSandbox.clientPath("a"), "hello"],
            environment: sandbox.environment)
        #expect(
            output.stdout == "-25293 connections from another user (uid \(nobody)) are refused\n", "\(output.stderr)")
        #expect(sandbox.agentLog.contains("latchkeyd: refused pid "), "\(sandbox.agentLog)")
        #expect(sandbox.agentLog.contains(": uid \(nobody) is not the agent's user\n"), "\(sandbox.agentLog)")
        // The agent's own user is greeted; a hello for another keychain is refused as always.
        #expect(try sandbox.client("a", "hello") == "0 \n")
        let other = sandbox.environment.merging(["LATCHKEY_KEYCHAIN": sandbox.directory.file("other.keychain")]) {
            _, new in new
        }
        #expect(try sandbox.client("a", "hello", environment: other) == "-25291 this agent serves another keychain\n")
    }

    @Test func anUnlockBeforeTheHelloIsRefusedAndNotHeld() throws {
        let sandbox = try Self.sandboxWithoutKeychain()
        try Self.startWaiting(sandbox)
        let stream = try #require(AgentStream.connect(path: sandbox.socketPath, timeoutSeconds: 10))
        _ = try AgentGreeting.decode(try stream.receive())
        try stream.send(AgentRequest.keychain(.unlock(Passphrase(AgentSandbox.passphrase))).encoded(id: 1))
        let refusal = Self.failure(try AgentResponse.decode(try stream.receive()).outcome)
        #expect(
            refusal
                == KeychainError(.param, AgentProtocolError.outOfOrder("the first request must be hello").description))
        #expect(throws: AgentStream.Failure.closed) { _ = try stream.receive() }
        #expect(!sandbox.agentLog.contains("holding the password"), "an unlock before the hello is not held")
    }
}
