import Foundation
import LatchkeyTestSupport
import Testing

/// `import FILE` and `export -t …`: PKCS #12 identities and certificates into and out of a keychain, checked
/// by the `openssl` command on the way out; and encrypted backups that carry certificates and keys.
@Suite(.dedicatedThreads) struct PKITransferTests {
    let sandbox = CLISandbox()

    func fixture(_ name: String) -> String { CertificateFixtures.directory.appendingPathComponent(name).path }

    @Test func aPKCS12IdentityImportsOnceAndExportsForOpenSSL() throws {
        try sandbox.createKeychain()
        let first = try sandbox.run("import", fixture("leaf-aes.p12"), "-P", "fixture p12")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "1 identity imported.\n2 certificates imported.\n")
        let again = try sandbox.run("import", fixture("leaf-3des.p12"), "-P", "fixture p12", "-f", "pkcs12")
        #expect(again.stdout == "3 items were already in the keychain.\n")
        #expect(try sandbox.run("find-identity", "-v").stdout.hasSuffix("     0 valid identities found\n"))
        #expect(try sandbox.run("find-identity").stdout.contains("     1 identities found\n"))

        let out = sandbox.directory.file("out.p12")
        let export = try sandbox.run(
            "export", "-t", "identities", "--key-passphrase-fd", "0", "-o", out, input: "new pass\n")
        #expect(export.status == 0 && export.stdout == "" && export.stderr == "", "\(export.stderr)")
        // openssl reads it with the new passphrase: the leaf's key and certificate, and the two CA certificates.
        let keys = try HelperProcess.run(
            "/usr/bin/openssl", ["pkcs12", "-in", out, "-passin", "pass:new pass", "-nocerts", "-nodes"])
        #expect(keys.status == 0, "\(keys.stderr)")
        #expect(keys.stdout.contains("-----BEGIN PRIVATE KEY-----"))
        let certificates = try HelperProcess.run(
            "/usr/bin/openssl", ["pkcs12", "-in", out, "-passin", "pass:new pass", "-nokeys"])
        #expect(certificates.stdout.components(separatedBy: "-----BEGIN CERTIFICATE-----").count == 4)
        #expect(
            try HelperProcess.run("/usr/bin/openssl", ["pkcs12", "-in", out, "-passin", "pass:wrong", "-nokeys"]).status
                != 0)
        // And back into another keychain.
        try sandbox.createKeychain(sandbox.directory.file("other.keychain"))
        let back = try sandbox.run("import", out, "-P", "new pass", "-k", sandbox.directory.file("other.keychain"))
        #expect(back.stdout == "1 identity imported.\n2 certificates imported.\n", "\(back.stderr)")
    }

    /// The second review (issue 30, point 4): `-t identities` without `-P`, or with `-P ''`, wrote the private
    /// key under an empty PKCS #12 passphrase. Refused, as `-t allKeys` is, and no file is written.
    @Test func anIdentityNeverLeavesUnderAnEmptyPassphrase() throws {
        try sandbox.createKeychain()
        #expect(try sandbox.run("import", fixture("leaf-aes.p12"), "-P", "fixture p12").status == 0)
        let out = sandbox.directory.file("empty.p12")
        for words in [["export", "-t", "identities", "-o", out], ["export", "-t", "identities", "-P", "", "-o", out]] {
            let refused = try sandbox.run(words)
            #expect(refused.status == 64, "\(words)")
            #expect(
                refused.stderr.contains(
                    "latchkey: export: -t identities writes a private key, encrypted: give its passphrase with "
                        + "--key-passphrase-fd or -P\n"), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }

    /// The second review's point 9 (issue 30): a passphrase given as an option's value is in the process list
    /// for every user to read while the command runs. Each such option warns and names the safe one.
    @Test func aPassphraseOnTheCommandLineIsWarnedAbout() throws {
        try sandbox.createKeychain()
        func warning(_ command: String, _ option: String, _ safe: String) -> String {
            "latchkey: \(command): warning: a passphrase given with \(option) is visible to every process in the process list (ps); use \(safe) instead\n"
        }
        let imported = try sandbox.run("import", fixture("leaf-aes.p12"), "-P", "fixture p12")
        #expect(
            imported.status == 0 && imported.stderr == warning("import", "-P", "--key-passphrase-fd"),
            "\(imported.stderr)")
        let quiet = try sandbox.run(
            "import", fixture("leaf-aes.p12"), "--key-passphrase-fd", "0", input: "fixture p12\n")
        #expect(quiet.status == 0 && quiet.stderr == "", "\(quiet.stderr)")
        let exported = try sandbox.run(
            "export", "-t", "identities", "-P", "out pass", "-o", sandbox.directory.file("w.p12"))
        #expect(
            exported.status == 0 && exported.stderr == warning("export", "-P", "--key-passphrase-fd"),
            "\(exported.stderr)")
        let unlocked = try sandbox.run("unlock-keychain", "--no-agent", "-p", CLISandbox.passphrase)
        #expect(
            unlocked.stderr.hasPrefix(
                warning("unlock-keychain", "-p", "the prompt, --passphrase-fd or --passphrase-file")),
            "\(unlocked.stderr)")
        let created = try sandbox.run("create-keychain", "-p", "new one", sandbox.directory.file("second.keychain"))
        #expect(
            created.status == 0 && created.stderr == warning("create-keychain", "-p", "the prompt or --passphrase-fd"),
            "\(created.stderr)")
    }

    @Test func aWrongPassphraseOrADamagedFileAddsNothing() throws {
        try sandbox.createKeychain()
        let wrong = try sandbox.run("import", fixture("leaf-rc2.p12"), "--key-passphrase-fd", "0", input: "wrong\n")
        #expect(wrong.status == 51)
        #expect(
            wrong.stderr
                == "latchkey: import: The user name or passphrase you entered is not correct. (\(fixture("leaf-rc2.p12")): the passphrase does not open the PKCS #12 file)\n"
        )
        let junk = sandbox.directory.file("junk.p12")
        try Data("junk".utf8).write(to: URL(fileURLWithPath: junk))
        #expect(try sandbox.run("import", junk, "-P", "x").status == 93)
        #expect(try sandbox.run("find-certificate", "-a").stdout == "")
        #expect(try sandbox.run("import", fixture("leaf-rc2.p12"), "-t", "priv").status == 64)
        #expect(try sandbox.run("import", fixture("leaf-rc2.p12"), "-f", "openssl").status == 64)
        #expect(try sandbox.run("import").status == 64)
    }

    @Test func certificatesImportFromPEMAndExportAsPEMOrDER() throws {
        try sandbox.createKeychain()
        let pem = sandbox.directory.file("root.pem")
        let der = try CertificateFixtures.der("root-rsa.der")
        try
            ("-----BEGIN CERTIFICATE-----\n"
            + der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END CERTIFICATE-----\n").write(toFile: pem, atomically: true, encoding: .utf8)
        #expect(try sandbox.run("import", pem).stdout == "1 certificate imported.\n")
        let x509 = try sandbox.run("export", "-t", "certs", "-f", "x509")
        #expect(x509.status == 0 && Data(x509.stdout.utf8).count > 0)
        let out = sandbox.directory.file("root.der")
        #expect(try sandbox.run("export", "-t", "certs", "-f", "x509", "-o", out).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == der)
        #expect(try sandbox.run("import", fixture("leaf-ec256.der")).stdout == "1 certificate imported.\n")
        let both = try sandbox.run("export", "-t", "certs")
        #expect(both.stdout.components(separatedBy: "-----BEGIN CERTIFICATE-----").count == 3)
        let tooMany = try sandbox.run("export", "-t", "certs", "-f", "x509")
        #expect(tooMany.status == 1)
        #expect(
            tooMany.stderr == "latchkey: export: x509 holds one certificate and the keychain has 2; use -f pemseq\n")
        #expect(try sandbox.run("export", "-t", "identities", "-P", "x").status == 44)
        #expect(try sandbox.run("export", "-t", "pubKeys").status == 44)
        #expect(try sandbox.run("export", "-t", "secretKeys").status == 64)
    }

    @Test func keysTravelAsPEMThatOpenSSLReads() throws {
        try sandbox.createKeychain()
        #expect(try sandbox.run("create-keypair", "-a", "ec", "signing").status == 0)
        let publicFile = sandbox.directory.file("public.pem")
        let allFile = sandbox.directory.file("all.pem")
        #expect(try sandbox.run("export", "-t", "pubKeys", "-f", "openssl", "-o", publicFile).status == 0)
        #expect(
            try String(contentsOfFile: publicFile, encoding: .utf8).components(
                separatedBy: "-----BEGIN PUBLIC KEY-----"
            ).count == 2)
        let publicCheck = try HelperProcess.run(
            "/usr/bin/openssl", ["pkey", "-pubin", "-in", publicFile, "-noout", "-text"])
        #expect(publicCheck.status == 0 && publicCheck.stdout.contains("P-256"), "\(publicCheck.stderr)")
        #expect(try sandbox.run("export", "-t", "allKeys").status == 64, "private keys leave only encrypted")
        #expect(try sandbox.run("export", "-t", "allKeys", "-P", "pem pass", "-o", allFile).status == 0)
        let text = try String(contentsOfFile: allFile, encoding: .utf8)
        #expect(text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") && !text.contains("-----BEGIN PRIVATE KEY-----"))
        // openssl opens the private key with the passphrase, and its public key is the exported one.
        let opened = try HelperProcess.run(
            "/usr/bin/openssl", ["pkey", "-in", allFile, "-passin", "pass:pem pass", "-pubout"])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout == (try String(contentsOfFile: publicFile, encoding: .utf8)))
        #expect(
            try HelperProcess.run("/usr/bin/openssl", ["pkey", "-in", allFile, "-passin", "pass:wrong", "-noout"])
                .status != 0)
        // Back into another keychain: the public and the private key.
        let other = sandbox.directory.file("other.keychain")
        try sandbox.createKeychain(other)
        #expect(try sandbox.run("import", allFile, "-P", "wrong", "-k", other).status == 51)
        #expect(try sandbox.run("import", allFile, "-P", "pem pass", "-k", other).stdout == "2 keys imported.\n")
        #expect(
            try sandbox.run("import", allFile, "-P", "pem pass", "-k", other).stdout
                == "2 items were already in the keychain.\n")
        // A key openssl made, unencrypted, imports too.
        let made = sandbox.directory.file("made.pem")
        #expect(
            try HelperProcess.run(
                "/usr/bin/openssl",
                ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", made]
            ).status == 0)
        #expect(try sandbox.run("import", made).stdout == "1 key imported.\n")
        // On a terminal, an encrypted key without -P is refused, never prompted for by OpenSSL itself.
        let session = try PseudoTerminalSession(
            executable: sandbox.binary, arguments: ["import", allFile, "-k", other],
            environment: sandbox.unattended)
        #expect(session.wait(timeout: 30) == 51)
        #expect(!session.transcript.contains("pass phrase"), "\(session.transcript)")
        let unsupported = sandbox.directory.file("ed.pem")
        #expect(
            try HelperProcess.run("/usr/bin/openssl", ["genpkey", "-algorithm", "ED25519", "-out", unsupported]).status
                == 0)
        #expect(try sandbox.run("import", unsupported).status == 93)
    }

    @Test func anEncryptedBackupCarriesCertificatesAndKeys() throws {
        try sandbox.createKeychain()
        #expect(try sandbox.run("import", fixture("leaf-aes.p12"), "-P", "fixture p12").status == 0)
        #expect(try sandbox.run("create-keypair", "-a", "ec", "spare").status == 0)
        let backup = sandbox.directory.file("all.backup")
        let environment = sandbox.unattended.merging(["LATCHKEY_BACKUP_PASSPHRASE": "backup pass"]) { _, new in new }
        #expect(
            try sandbox.run(["export", "-o", backup], environment: environment).stderr
                == "exported 6 items to \(backup)\n")
        let other = sandbox.directory.file("restored.keychain")
        try sandbox.createKeychain(other)
        #expect(
            try sandbox.run(["import", "-i", backup, other], environment: environment).stdout
                == "added 6, updated 0, skipped 0\n")
        let identities = try sandbox.run("find-identity", other)
        #expect(identities.stdout.contains("     1 identities found\n"), "\(identities.stdout)")
        #expect(try sandbox.run("export", "-t", "identities", "-P", "p", "-k", other).status == 0)
    }
}
