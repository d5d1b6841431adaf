import Foundation
import LatchkeyTestSupport
import Testing

/// The `ssh-add -c` dialog names a login's destination only when the login is for the session the connection
/// last bound (the same session identifier and, when the login names one, the same host key), bound for a
/// login and not for forwarding. Any other login — a relayed one, signed on a connection bound to host-a for a
/// session with host-b — is still asked about, as OpenSSH's agent asks about an unrestricted key, but the
/// dialog says the agent could not check where it goes instead of naming host-a.
@Suite(.serialized, .dedicatedThreads) struct SSHConfirmationDestinationTests {
    func fingerprint(_ ssh: SSHSandbox, _ path: String) throws -> String {
        String(try ssh.run("ssh-keygen", ["-lf", path + ".pub"]).stdout.split(separator: " ")[1])
    }

    @Test func aLoginForAnotherSessionIsNotNamedAsTheBoundOne() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_confirmed", type: "ecdsa")
        #expect(try ssh.sshAdd("-c", path).status == 0)
        let key = try SSHAgentWire.blob(ofFile: path + ".pub")
        let hostA = try ssh.makeKey("host_a", type: "ed25519")
        let hostB = try ssh.makeKey("host_b", type: "ed25519")
        let (aKey, bKey) = (
            try SSHAgentWire.blob(ofFile: hostA + ".pub"), try SSHAgentWire.blob(ofFile: hostB + ".pub")
        )
        let signer = try SSHHostSigner(in: ssh, keys: [hostA, hostB])
        let (sessionA, sessionB) = ([UInt8](repeating: 0xA1, count: 32), [UInt8](repeating: 0xB2, count: 32))
        try ssh.answerPinentry("confirm")
        func prompt(after sign: () -> [UInt8]?) -> (reply: [UInt8]?, text: String) {
            let before = ssh.agent.file(ssh.pinentryLog).count
            let reply = sign()
            return (reply, String(ssh.agent.file(ssh.pinentryLog).dropFirst(before)))
        }
        func login(_ wire: SSHAgentWire, user: String, session: [UInt8], hostKey: [UInt8]?) -> [UInt8]? {
            wire.exchange(
                SSHAgentWire.signRequest(
                    key: key,
                    data: SSHAgentWire.login(
                        sessionID: session, user: Array(user.utf8), key: key, algorithm: "ecdsa-sha2-nistp256",
                        hostKey: hostKey)))
        }
        let unchecked =
            "to a host the agent could not check (the login is not for the session this connection last bound)?\nAsked by: "

        // Bound to host-a's session; the login signed is for host-b's session (and names host-b's key).
        let relay = try SSHAgentWire(path: ssh.socketPath)
        #expect(
            relay.exchange(try signer.binding(shown: aKey, signer: aKey, sessionID: sessionA, forwarding: false))
                == [6])
        let relayed = prompt { login(relay, user: "alice", session: sessionB, hostKey: bKey) }
        #expect(relayed.reply?.first == 14)  // Asked, allowed: signed, as ssh-agent signs an unrestricted key.
        #expect(relayed.text.contains("for logging in as alice " + unchecked), "\(relayed.text)")
        #expect(!relayed.text.contains(try fingerprint(ssh, hostA)), "\(relayed.text)")
        #expect(!relayed.text.contains("Connection: direct from this computer"), "\(relayed.text)")

        // host-a's session, but another host key named in the login: not checked either.
        let mixed = prompt { login(relay, user: "bob", session: sessionA, hostKey: bKey) }
        #expect(mixed.text.contains("for logging in as bob " + unchecked), "\(mixed.text)")

        // A login on a connection whose last binding is a forwarding one: nothing to check it against.
        let forwarded = try SSHAgentWire(path: ssh.socketPath)
        #expect(
            forwarded.exchange(try signer.binding(shown: aKey, signer: aKey, sessionID: sessionA, forwarding: true))
                == [6])
        let onForwarding = prompt { login(forwarded, user: "carol", session: sessionA, hostKey: aKey) }
        #expect(onForwarding.text.contains("for logging in as carol " + unchecked), "\(onForwarding.text)")

        // The login for host-a's very session is named as host-a's.
        let hostAFingerprint = try fingerprint(ssh, hostA)
        let named = prompt { login(relay, user: "dave", session: sessionA, hostKey: aKey) }
        #expect(
            named.text.contains(
                "for logging in as dave to the host with key \(hostAFingerprint)?\nHost key: \(hostAFingerprint)\nConnection: direct from this computer\n"
            ), "\(named.text)")
        let withoutHostKey = prompt { login(relay, user: "erin", session: sessionA, hostKey: nil) }
        #expect(withoutHostKey.text.contains("for logging in as erin to the host with key \(hostAFingerprint)?"))
    }
}
