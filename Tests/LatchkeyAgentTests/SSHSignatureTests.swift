import Foundation
import LatchkeyTestSupport
import Testing

/// Signatures through the agent with keys only it holds: `ssh-keygen -Y sign` (SSHSIG, git's commit
/// signatures) verified by `ssh-keygen -Y verify`, for every kind of key; RSA with the digest the request's
/// flags ask for, and SHA-1 only when no flag asks for SHA-2.
@Suite(.serialized, .dedicatedThreads) struct SSHSignatureTests {
    @Test func sshKeygenSignaturesVerifyForEveryKind() throws {
        let ssh = try SSHSandbox()
        let message = ssh.directory.file("message")
        try "the commit to sign\n".write(toFile: message, atomically: true, encoding: .utf8)
        for kind in SSHAgentListingTests.kinds {
            let path = try ssh.makeKey(kind.name, type: kind.type, bits: kind.bits)
            try ssh.sshAdd(path)
            try ssh.hide(path)
            let signed = try ssh.run("ssh-keygen", ["-Y", "sign", "-n", "git", "-f", path + ".pub", message])
            #expect(signed.status == 0, "\(kind.name): \(signed.stderr)")
            #expect(signed.stderr == "Signing file \(message)\nWrite signature to \(message).sig\n")
            try "signer \(try ssh.publicKey(path))\n".write(
                toFile: ssh.directory.file("allowed"), atomically: true, encoding: .utf8)
            let verified = try ssh.run(
                "ssh-keygen",
                [
                    "-Y", "verify", "-f", ssh.directory.file("allowed"), "-I", "signer", "-n", "git",
                    "-s", message + ".sig",
                ], input: Data("the commit to sign\n".utf8))
            #expect(verified.status == 0, "\(kind.name): \(verified.stderr)")
            let fingerprint = try ssh.fingerprintLine(path).split(separator: " ")[1]
            let label = kind.type == "rsa" ? "RSA" : kind.type == "ed25519" ? "ED25519" : "ECDSA"
            #expect(verified.stdout == "Good \"git\" signature for signer with \(label) key \(fingerprint)\n")
            try FileManager.default.removeItem(atPath: message + ".sig")
        }
    }

    @Test func rsaSignsWithTheDigestTheFlagsAskFor() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_rsa", type: "rsa", bits: 2048)
        try ssh.sshAdd(path)
        let wire = try SSHAgentWire(path: ssh.socketPath)
        let listing = try #require(wire.exchange([11]))
        let blob = try #require(SSHAgentWire.identities(listing)?.first?.blob)
        func sign(flags: UInt32) -> String? {
            SSHAgentWire.signatureAlgorithm(
                wire.exchange(
                    [13] + SSHAgentWire.string(blob) + SSHAgentWire.string("data") + SSHAgentWire.uint32(flags)) ?? [])
        }
        #expect(sign(flags: 2) == "rsa-sha2-256")
        #expect(sign(flags: 4) == "rsa-sha2-512")
        #expect(sign(flags: 0) == "ssh-rsa")  // Asked for: no SHA-2 flag.
        // A key the agent does not hold: failure.
        #expect(
            wire.exchange(
                [13] + SSHAgentWire.string(Array(blob.dropLast()) + [0]) + SSHAgentWire.string("data")
                    + SSHAgentWire.uint32(2)) == [5])
    }
}
