import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The agent decides which program sees which items: two separately built programs, registered with
/// different groups, each see only their own; a rebuilt one is refused until registered again; another
/// user is refused.
@Suite(.serialized, .dedicatedThreads) struct AgentAccessControlTests {
    @Test func registeredProgramsSeeOnlyTheirOwnGroups() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.register(
            AgentSandbox.clientPath("a"), appID: "com.example.a", groups: ["com.example.a", "com.example.shared"])
        try sandbox.register(AgentSandbox.clientPath("b"), appID: "com.example.b", groups: ["com.example.b"])

        #expect(
            try sandbox.client("a", "status") == "unlocked registered com.example.a com.example.a,com.example.shared\n")
        #expect(try sandbox.client("b", "status") == "unlocked registered com.example.b com.example.b\n")
        #expect(try sandbox.client("a", "set", "mail", "alice", "secret-a") == "ok\n")
        #expect(try sandbox.client("b", "set", "mail", "alice", "secret-b") == "ok\n")
        #expect(try sandbox.client("a", "get", "mail", "alice") == "secret-a\n")
        #expect(try sandbox.client("b", "get", "mail", "alice") == "secret-b\n")
        #expect(try sandbox.client("b", "keys", "mail") == "alice\n")
        // b is not entitled to a's shared group.
        #expect(
            try sandbox.client("b", "shared-get", "mail", "alice", "com.example.shared")
                == "error -34018 caller com.example.b is not entitled to access group com.example.shared\n")
        #expect(try sandbox.client("a", "shared-get", "mail", "alice", "com.example.shared") == "<nil>\n")
        // The items are where the agent put them, under each program's own group.
        let keychain = try KeychainDatabase.open(at: sandbox.keychainPath)
        try keychain.unlock(with: Passphrase(AgentSandbox.passphrase))
        let groups = try keychain.copyMatching(
            ItemQuery(.genericPassword, limit: .all, returning: .attributes),
            caller: CallerIdentity(applicationIdentifier: "admin", accessGroups: ["*"])
        )
        .compactMap { $0[.accessGroup]?.stringValue }.sorted()
        #expect(groups == ["com.example.a", "com.example.b"])
    }

    @Test func aRebuiltProgramIsRefusedUntilRegisteredAgain() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        let copy = sandbox.directory.file("bin/app")
        try FileManager.default.createDirectory(
            atPath: sandbox.directory.file("bin"), withIntermediateDirectories: true)
        try installExecutable(copying: AgentSandbox.clientPath("a"), to: copy)
        try sandbox.register(copy, appID: "com.example.app", groups: ["com.example.app"])
        #expect(try sandbox.client("", "set", "s", "k", "v", path: copy) == "ok\n")

        // "Rebuild": another binary at the same path.
        try installExecutable(copying: AgentSandbox.clientPath("b"), to: copy)
        let refused = try sandbox.client("", "get", "s", "k", path: copy)
        #expect(
            refused
                == "error -34018 \(copy) changed since it was registered; register it again with `latchkey register-application`\n"
        )
        try sandbox.register(copy, appID: "com.example.app", groups: ["com.example.app"])
        #expect(try sandbox.client("", "get", "s", "k", path: copy) == "v\n")
    }

    @Test func unregisteredProgramsGetNothingFromTheAgentAndOpenTheKeychainThemselves() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        let a = AgentSandbox.clientPath("a")
        #expect(try sandbox.client("a", "status") == "unlocked unregistered - \n")
        // No passphrase: the agent refuses, and without it the keychain cannot be opened either.
        #expect(
            try sandbox.client("a", "set", "s", "k", "v")
                == "error -34018 \(a) is not registered with the agent; register it with `latchkey register-application \(a)`, "
                + "or let it open the keychain with the passphrase; without the agent: no terminal to ask for the passphrase; "
                + "set LATCHKEY_PASSPHRASE or pass a file descriptor\n")
        // With the passphrase it opens the keychain itself, as without an agent: its own name's group.
        #expect(try sandbox.client("a", "set", "s", "k", "embedded", environment: sandbox.withPassphrase) == "ok\n")
        // b registered under a's name sees what a stored; a, still unregistered, still gets nothing.
        try sandbox.register(AgentSandbox.clientPath("b"), appID: "com.example.b", groups: ["latchkey-test-client-a"])
        #expect(try sandbox.client("b", "get", "s", "k") == "embedded\n")
        #expect(
            try sandbox.client("a", "get", "s", "k").hasPrefix("error -34018 \(a) is not registered with the agent"))
    }

    @Test(.enabled(if: getuid() == 0 && getpwnam("nobody") != nil, "running a client as another user needs root"))
    func anotherUserIsRefused() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
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
        #expect(sandbox.agentLog.contains("is not the agent's user"))
        // Its own user's clients refuse a socket directory others can enter until it is private again.
        #expect(
            try sandbox.client("a", "status").hasPrefix(
                "error -61 the agent socket \(sandbox.socketPath) is not safe to use"))
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: sandbox.directory.file("run"))
        #expect(try sandbox.client("a", "status").hasPrefix("unlocked"), "the agent carries on")
    }
}
