import Foundation
import LatchkeyTestSupport
import Testing

/// A host the agent is forwarded to cannot shed its hop: every `session-bind@openssh.com` counts, whatever
/// its body. A host certificate whose principal is not UTF-8 is read as OpenSSH reads it (principals are
/// bytes), so the forwarding through that host is recorded and a key restricted to "this computer → host-a"
/// signs nothing for it; a binding that fails (malformed, of a host key the agent cannot read, not signed by
/// the host) leaves the connection's destination-constrained keys unusable — not listed, not signed with,
/// not removed — whatever is bound after it.
@Suite(.serialized, .dedicatedThreads) struct SSHForwardedBindingTests {
    /// "h", 0xFF, "b": a principal that is not UTF-8.
    static let principal: [UInt8] = [0x68, 0xFF, 0x62]

    /// The issue's attack, with Debian's ssh and sshd: the user logs in to host-b with the agent forwarded
    /// (`ssh -A`); host-b shows a host certificate whose principal is not UTF-8 (ssh finds no authority for it
    /// and checks the plain key, silently); host-b then logs in to host-a with the user's key restricted to
    /// "this computer → host-a". OpenSSH's agent refuses that login; so must latchkeyd.
    @Test func aHostWithANonUTF8PrincipalCannotUseAKeyRestrictedToAnotherHost() throws {
        let ssh = try SSHSandbox()
        let restricted = try ssh.makeKey("id_restricted", type: "ed25519")
        let everyday = try ssh.makeKey("id_everyday", type: "ed25519")
        let a = try SSHServer(in: ssh, authorizedKeys: [try ssh.publicKey(restricted)], name: "sshd-a")
        let b = try SSHServer(
            in: ssh, authorizedKeys: [try ssh.publicKey(everyday)], name: "sshd-b",
            hostCertificatePrincipal: Self.principal)
        let knownHosts = ssh.directory.file("known_hosts")
        try "host-a \(a.hostKey)\nhost-b \(b.hostKey)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        #expect(try ssh.sshAdd("-h", "host-a", "-H", knownHosts, restricted).status == 0)
        #expect(try ssh.sshAdd(everyday).status == 0)
        try ssh.hide(restricted)
        try ssh.hide(everyday)

        let relayed = try b.ssh(ssh, identity: everyday, command: a.commandLine(identity: restricted), extra: ["-A"])
        #expect(relayed.status == 255, "\(relayed.stdout)\n\(relayed.stderr)\n\(ssh.agent.agentLog)")
        #expect(relayed.stdout == "")
        #expect(b.log.contains("Accepted publickey"), "\(b.log)")  // host-b itself was reached …
        #expect(!a.log.contains("Accepted publickey"), "\(a.log)")  // … host-a through it was not.
        // The binding through host-b was read, its principal logged escaped.
        #expect(
            ssh.agent.agentLog.contains(#"(a host certificate for "h\xffb") (forwarding)"#), "\(ssh.agent.agentLog)")
        // The user's own login to host-a, from this computer, still works.
        #expect(try a.ssh(ssh, identity: restricted).stdout == "logged in\n")
    }

    /// Host keys and sessions made by hand: host-a's plain key, host-b's certificate (principal "h\xffb").
    struct Hosts {
        let ssh: SSHSandbox
        let a: SSHServer
        let b: SSHServer
        let signer: SSHHostSigner
        /// The restricted key's blob.
        let key: [UInt8]
        let aKey: [UInt8]
        let bKey: [UInt8]
        let bCertificate: [UInt8]

        /// Whether the connection lists the restricted key.
        func lists(_ wire: SSHAgentWire) -> Bool {
            (SSHAgentWire.identities(wire.exchange([11]) ?? []) ?? []).contains { $0.blob == key }
        }

        /// The connection's answer to a login to host-a (session `sessionID`) with the restricted key.
        func loginToA(_ wire: SSHAgentWire, sessionID: [UInt8]) -> [UInt8]? {
            wire.exchange(
                SSHAgentWire.signRequest(
                    key: key,
                    data: SSHAgentWire.login(
                        sessionID: sessionID, user: Array("alice".utf8), key: key, algorithm: "ssh-ed25519",
                        hostKey: aKey)))
        }
    }

    func hosts() throws -> Hosts {
        let ssh = try SSHSandbox()
        let restricted = try ssh.makeKey("id_restricted", type: "ed25519")
        let a = try SSHServer(in: ssh, authorizedKeys: [try ssh.publicKey(restricted)], name: "sshd-a")
        let b = try SSHServer(
            in: ssh, authorizedKeys: [], name: "sshd-b", hostCertificatePrincipal: Self.principal)
        let knownHosts = ssh.directory.file("known_hosts")
        try "host-a \(a.hostKey)\nhost-b \(b.hostKey)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        #expect(try ssh.sshAdd("-h", "host-a", "-H", knownHosts, restricted).status == 0)
        let signer = try SSHHostSigner(
            in: ssh, keys: [a.directory + "/host_ed25519", b.directory + "/host_ed25519"])
        return Hosts(
            ssh: ssh, a: a, b: b, signer: signer, key: try SSHAgentWire.blob(ofFile: restricted + ".pub"),
            aKey: try SSHAgentWire.blob(ofLine: a.hostKey), bKey: try SSHAgentWire.blob(ofLine: b.hostKey),
            bCertificate: try SSHAgentWire.blob(ofLine: try #require(b.hostCertificate)))
    }

    @Test func theBindingThroughAHostWithANonUTF8PrincipalIsAHop() throws {
        let hosts = try hosts()
        let sessionA = [UInt8](repeating: 0xA1, count: 32)
        let sessionB = [UInt8](repeating: 0xB2, count: 32)
        // On this computer, unbound: the key is listed.
        let local = try SSHAgentWire(path: hosts.ssh.socketPath)
        #expect(hosts.lists(local))
        // The connection the user's ssh opens for host-b's forwarded agent: bound through host-b's certificate.
        let wire = try SSHAgentWire(path: hosts.ssh.socketPath)
        #expect(
            wire.exchange(
                try hosts.signer.binding(
                    shown: hosts.bCertificate, signer: hosts.bKey, sessionID: sessionB, forwarding: true)) == [6])
        #expect(!hosts.lists(wire))  // Restricted to "this computer → host-a": nothing to use beyond host-b.
        // host-b logs in to host-a through it: bound to host-a's session, and refused.
        #expect(
            wire.exchange(
                try hosts.signer.binding(shown: hosts.aKey, signer: hosts.aKey, sessionID: sessionA, forwarding: false))
                == [6])
        #expect(hosts.loginToA(wire, sessionID: sessionA) == [5])
        #expect(
            hosts.ssh.agent.agentLog.contains(
                "refused a destination-constrained key for a destination it is not allowed"))
        // The same login on a connection of this computer's own ssh (bound to host-a only) is signed.
        let direct = try SSHAgentWire(path: hosts.ssh.socketPath)
        #expect(
            direct.exchange(
                try hosts.signer.binding(shown: hosts.aKey, signer: hosts.aKey, sessionID: sessionA, forwarding: false))
                == [6])
        #expect(hosts.loginToA(direct, sessionID: sessionA)?.first == 14)
    }

    /// Bindings that fail, each followed on its connection by a good binding to host-a: the restricted key is
    /// neither listed, nor signed with, nor removed there.
    @Test(arguments: [
        "a binding cut short", "a host key of a type the agent does not read", "a signature by another key",
        "a certificate whose signature is not its authority's",
    ])
    func aFailedBindingLeavesConstrainedKeysUnusable(failure: String) throws {
        let hosts = try hosts()
        let sessionA = [UInt8](repeating: 0xA1, count: 32)
        let sessionB = [UInt8](repeating: 0xB2, count: 32)
        let failed: [UInt8]
        switch failure {
        case "a binding cut short":
            failed = [27] + SSHAgentWire.string("session-bind@openssh.com") + SSHAgentWire.string(hosts.bKey)
        case "a host key of a type the agent does not read":
            let dss =
                SSHAgentWire.string("ssh-dss")
                + (0..<4).flatMap { _ in SSHAgentWire.string([0x7F] + [UInt8](repeating: 1, count: 20)) }
            failed = SSHAgentWire.sessionBind(
                hostKey: dss, sessionID: sessionB,
                signature: SSHAgentWire.string("ssh-dss") + SSHAgentWire.string([UInt8](repeating: 2, count: 40)),
                forwarding: true)
        case "a signature by another key":
            failed = SSHAgentWire.sessionBind(
                hostKey: hosts.bKey, sessionID: sessionB, signature: try hosts.signer.sign(sessionB, by: hosts.aKey),
                forwarding: true)
        default:
            var certificate = hosts.bCertificate
            certificate[certificate.count - 1] ^= 1  // The authority's signature, spoilt.
            failed = SSHAgentWire.sessionBind(
                hostKey: certificate, sessionID: sessionB, signature: try hosts.signer.sign(sessionB, by: hosts.bKey),
                forwarding: true)
        }
        let wire = try SSHAgentWire(path: hosts.ssh.socketPath)
        #expect(wire.exchange(failed) == [28], "\(failure)")  // SSH_AGENT_EXTENSION_FAILURE, as OpenSSH answers.
        #expect(
            wire.exchange(
                try hosts.signer.binding(shown: hosts.aKey, signer: hosts.aKey, sessionID: sessionA, forwarding: false))
                == [6])
        #expect(!hosts.lists(wire), "\(failure)")
        #expect(hosts.loginToA(wire, sessionID: sessionA) == [5], "\(failure)")
        #expect(wire.exchange([18] + SSHAgentWire.string(hosts.key)) == [5], "\(failure)")
        #expect(try hosts.ssh.storedKeys().count == 1)
        #expect(hosts.ssh.agent.agentLog.contains("a session binding failed on this connection"), "\(failure)")
    }
}
