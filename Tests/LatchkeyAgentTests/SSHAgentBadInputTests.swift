import Foundation
import LatchkeyTestSupport
import Testing

/// What a client of the SSH socket sends cannot hurt the agent or what it stores: malformed and unknown
/// requests get `SSH_AGENT_FAILURE` (5), a frame over the 256 KiB limit (a 100 MB one) closes that connection
/// without being read, and afterwards the agent still serves, with every key where it was.
@Suite(.serialized, .dedicatedThreads) struct SSHAgentBadInputTests {
    @Test func badRequestsFailAndTheAgentKeepsServing() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_kept", type: "ed25519")
        try ssh.sshAdd(path)
        let listing = try ssh.sshAdd("-L").stdout
        let wire = try SSHAgentWire(path: ssh.socketPath)
        let cases: [(String, [UInt8])] = [
            ("an unknown message type", [200]),
            ("an SSH-1 request", [1]),
            ("a smartcard key", [20] + SSHAgentWire.string("/usr/lib/pkcs11.so") + SSHAgentWire.string("")),
            ("a list with bytes after it", [11, 0]),
            ("a sign request cut short", [13] + SSHAgentWire.uint32(1_000) + [1, 2, 3]),
            ("a key of an unknown type", [17] + SSHAgentWire.string("ssh-dss") + SSHAgentWire.string("x")),
            (
                "an RSA key whose numbers do not agree",
                [17] + SSHAgentWire.string("ssh-rsa")
                    + (0..<6).flatMap { _ in SSHAgentWire.string([0x7f] + [UInt8](repeating: 1, count: 200)) }
                    + SSHAgentWire.string("c")
            ),
            (
                "an EC key on the wrong curve",
                [17] + SSHAgentWire.string("ecdsa-sha2-nistp256") + SSHAgentWire.string("nistp384")
                    + SSHAgentWire.string([4] + [UInt8](repeating: 1, count: 64)) + SSHAgentWire.string([1])
                    + SSHAgentWire.string("c")
            ),
            (
                "an unknown constraint",
                [25] + SSHAgentWire.string("ssh-ed25519") + SSHAgentWire.string([UInt8](repeating: 0, count: 32))
                    + SSHAgentWire.string([UInt8](repeating: 0, count: 64)) + SSHAgentWire.string("c") + [9]
            ),
            ("an unknown extension", [27] + SSHAgentWire.string("nothing@example.com")),
            ("a text that is not UTF-8", [27] + SSHAgentWire.string([0xff, 0xfe])),
            ("an unlock of an agent not locked", [23] + SSHAgentWire.string("passphrase")),
            ("an empty message", []),
        ]
        for (what, body) in cases {
            #expect(wire.exchange(body) == [5], "\(what)")
        }
        // A session binding that cannot be read is a binding that failed: SSH_AGENT_EXTENSION_FAILURE, as
        // OpenSSH answers it.
        #expect(wire.exchange([27] + SSHAgentWire.string("session-bind@openssh.com")) == [28])
        // The same connection still answers; so does a new one; nothing stored was lost.
        #expect(SSHAgentWire.identities(wire.exchange([11]) ?? [])?.count == 1)
        #expect(try ssh.sshAdd("-L").stdout == listing)
        #expect(try ssh.storedKeys().count == 1)
    }

    @Test func aHundredMegabyteFrameClosesOnlyItsConnection() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_kept", type: "ecdsa")
        try ssh.sshAdd(path)
        let wire = try SSHAgentWire(path: ssh.socketPath)
        wire.send(SSHAgentWire.uint32(100 << 20) + [11] + [UInt8](repeating: 0, count: 64 << 10))
        #expect(wire.reply() == nil)  // Closed, not read.
        // Just over the limit too.
        let over = try SSHAgentWire(path: ssh.socketPath)
        over.send(SSHAgentWire.uint32(256 * 1024 + 1) + [11])
        #expect(over.reply() == nil)
        // A frame that stops midway, then the peer goes: only that connection ends.
        do {
            let partial = try SSHAgentWire(path: ssh.socketPath)
            partial.send(SSHAgentWire.uint32(100) + [13, 0, 0])
        }
        #expect(try ssh.sshAdd("-l").stdout == (try ssh.fingerprintLine(path)))
        #expect(ssh.agent.agentLog.contains("message is over the limit of 262144"))
        #expect(ssh.agent.agent?.isRunning == true)
    }

    @Test(.enabled(if: getuid() == 0, "acting as another user needs root"))
    func anotherUserCannotReachTheSocket() throws {
        let nobody = try #require(CLIHardeningNobody.user, "needs the user nobody")
        let ssh = try SSHSandbox()
        try ssh.sshAdd(try ssh.makeKey("id_mine", type: "ecdsa"))
        // The socket's directory is the agent user's alone: another user cannot even reach the socket.
        let listed = try HelperProcess.run(
            "/usr/bin/setpriv",
            ["--reuid=\(nobody.uid)", "--regid=\(nobody.gid)", "--clear-groups", "/usr/bin/ssh-add", "-l"],
            environment: ["SSH_AUTH_SOCK": ssh.socketPath, "PATH": "/usr/bin:/bin"])
        #expect(listed.status == 2)
        #expect(listed.stderr.hasPrefix("Error connecting to agent: Permission denied"))
    }
}

/// The user `nobody`, for the tests that need another user.
enum CLIHardeningNobody {
    static let user: (uid: uid_t, gid: gid_t)? = getpwnam("nobody").map { ($0.pointee.pw_uid, $0.pointee.pw_gid) }
}
