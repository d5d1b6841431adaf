import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// What the access log holds for the SSH agent: a signature is one `use` of the key by the program that asked
/// for it; listing keys and reading their settings are the agent's own lookups and are not in it; adding and
/// removing a key are.
@Suite(.serialized, .dedicatedThreads) struct SSHAccessLogTests {
    @Test func aSignatureIsOneUseOfTheKeyAndListingIsNotLogged() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_logged", type: "ed25519")
        #expect(try ssh.sshAdd(path).status == 0)
        #expect(try ssh.sshAdd("-l").status == 0)
        let message = ssh.directory.file("message")
        try "signed\n".write(toFile: message, atomically: true, encoding: .utf8)
        let signed = try ssh.run("ssh-keygen", ["-Y", "sign", "-n", "file", "-f", path + ".pub", message])
        #expect(signed.status == 0, "\(signed.stderr)")

        let keygen = try ssh.agent.cli("log", "--program", "/usr/bin/ssh-keygen").stdout
        let lines = keygen.split(separator: "\n")
        #expect(lines.count == 1, "\(keygen)")
        #expect(lines.first?.contains(" allowed use keys ") == true, "\(keygen)")
        #expect(lines.first?.hasSuffix(" through the SSH agent: its access groups") == true, "\(keygen)")
        // ssh-add stored the key (one add of the key, one of its settings) and listed it (nothing logged).
        let add = try ssh.agent.cli("log", "--program", "/usr/bin/ssh-add").stdout
        #expect(!add.contains(" read "), "\(add)")
        #expect(add.contains(" allowed add "), "\(add)")
    }
}
