import Foundation
import LatchkeyCrypto
import LatchkeySSH
import LatchkeyTestSupport
import Testing

/// OpenSSH's private key files as `ssh-keygen` writes them — every key kind, unencrypted and encrypted with
/// each cipher Latchkey reads — open to the very key of their `.pub` file; a wrong or missing passphrase, a
/// damaged file and an unsupported cipher are told apart.
@Suite struct OpenSSHKeyFileTests {
    let directory = TemporaryDirectory()

    func keygen(_ name: String, _ arguments: [String]) throws -> (file: String, publicLine: String) {
        let path = directory.file(name)
        let made = try HelperProcess.run(
            "/usr/bin/ssh-keygen", ["-q", "-C", "comment of \(name)", "-f", path] + arguments,
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(made.status == 0, "\(made.stderr)")
        return (
            try String(contentsOfFile: path, encoding: .utf8),
            try String(contentsOfFile: path + ".pub", encoding: .utf8)
        )
    }

    func open(_ text: String, _ passphrase: String?) throws -> (key: SSHPrivateKey, comment: String) {
        try OpenSSHKeyFile(text).privateKey(passphrase: passphrase.map { SecureBytes(copying: Array($0.utf8)) })
    }

    @Test(arguments: [
        ["-t", "ecdsa", "-b", "256"], ["-t", "ecdsa", "-b", "384"], ["-t", "ecdsa", "-b", "521"],
        ["-t", "rsa", "-b", "2048"], ["-t", "ed25519"],
    ])
    func everyKindOpensUnencryptedAndEncrypted(_ kind: [String]) throws {
        let plain = try keygen("plain", kind + ["-N", ""])
        let (key, comment) = try open(plain.file, nil)
        #expect(key.publicKey.line(comment: comment) + "\n" == plain.publicLine)
        #expect(try !OpenSSHKeyFile(plain.file).isEncrypted)

        let encrypted = try keygen("encrypted", kind + ["-N", "key file passphrase", "-a", "4"])
        let file = try OpenSSHKeyFile(encrypted.file)
        #expect(file.isEncrypted)
        // Without the passphrase.
        #expect(file.publicKey.line(comment: "comment of encrypted") + "\n" == encrypted.publicLine)
        let opened = try open(encrypted.file, "key file passphrase")
        #expect(opened.key.publicKey.line(comment: opened.comment) + "\n" == encrypted.publicLine)
    }

    @Test(arguments: ["aes256-ctr", "aes128-ctr", "aes192-ctr", "aes256-cbc", "aes128-cbc", "aes256-gcm@openssh.com"])
    func everyCipherOpens(_ cipher: String) throws {
        let made = try keygen("key", ["-t", "ed25519", "-N", "secret", "-a", "2", "-Z", cipher])
        let opened = try open(made.file, "secret")
        #expect(opened.key.publicKey.line(comment: opened.comment) + "\n" == made.publicLine)
    }

    @Test func failuresAreToldApart() throws {
        let made = try keygen("key", ["-t", "ecdsa", "-N", "right", "-a", "2"])
        #expect(throws: OpenSSHKeyFile.Failure.wrongPassphrase) { try open(made.file, "wrong") }
        #expect(throws: OpenSSHKeyFile.Failure.passphraseNeeded) { try open(made.file, nil) }
        let gcm = try keygen("gcm", ["-t", "ecdsa", "-N", "right", "-a", "2", "-Z", "aes256-gcm@openssh.com"])
        #expect(throws: OpenSSHKeyFile.Failure.wrongPassphrase) { try open(gcm.file, "wrong") }
        let chacha = try keygen(
            "chacha", ["-t", "ed25519", "-N", "right", "-a", "2", "-Z", "chacha20-poly1305@openssh.com"])
        #expect(throws: OpenSSHKeyFile.Failure.unsupported("the cipher chacha20-poly1305@openssh.com")) {
            try OpenSSHKeyFile(chacha.file)
        }
        #expect(throws: OpenSSHKeyFile.Failure.notAKeyFile) { try OpenSSHKeyFile(made.publicLine) }
        // A byte changed in the base64 body.
        var lines = made.file.split(separator: "\n").map(String.init)
        lines[2] = String(lines[2].reversed())
        #expect(throws: (any Error).self) { try open(lines.joined(separator: "\n"), "right") }
        // Rounds a hostile file could ask for: the file's rounds (the uint32 after its 16-byte salt) set to 2000.
        let body = try #require(Data(base64Encoded: made.file.split(separator: "\n").dropFirst().dropLast().joined()))
        // magic, "aes256-ctr", "bcrypt", the options' length, the salt.
        let salt = 15 + (4 + 10) + (4 + 6) + 4 + (4 + 16)
        var heavy = body
        heavy.replaceSubrange(salt..<(salt + 4), with: [0, 0, 0x07, 0xD0])
        let file =
            "-----BEGIN OPENSSH PRIVATE KEY-----\n\(heavy.base64EncodedString())\n-----END OPENSSH PRIVATE KEY-----\n"
        #expect(
            throws: OpenSSHKeyFile.Failure.unsupported(
                "bcrypt with 2000 rounds and a 16-byte salt (at most 1024 rounds)")
        ) {
            try OpenSSHKeyFile(file)
        }
    }
}
