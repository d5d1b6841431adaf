import Foundation
import LatchkeyTestSupport
import Testing

/// add-certificates, find-certificate and delete-certificate through the built binary: PEM and DER files,
/// `security`'s output (fingerprints checked against the `openssl` command), exit statuses, and what the
/// keychain holds afterwards.
@Suite(.dedicatedThreads) struct CertificateCommandTests {
    let sandbox = CLISandbox()

    func fixture(_ name: String) -> String { CertificateFixtures.directory.appendingPathComponent(name).path }

    /// PEM for a DER certificate, written here (not by the code under test).
    static func pem(_ der: Data) -> String {
        let base64 = der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
    }

    /// `openssl x509 -fingerprint` for a fixture, without the colons.
    func opensslFingerprint(_ name: String, _ digest: String) throws -> String {
        let output = try HelperProcess.run(
            "/usr/bin/openssl",
            ["x509", "-noout", "-fingerprint", "-\(digest)", "-inform", "der", "-in", fixture(name)])
        #expect(output.status == 0, "\(output.stderr)")
        return String(output.stdout.split(separator: "=").last ?? "").replacingOccurrences(of: ":", with: "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func labels() throws -> [String] {
        let output = try sandbox.run("find-certificate", "-a")
        #expect(output.status == 0)
        return output.stdout.split(separator: "\n").filter { $0.contains("\"labl\"") }.map { String($0) }.sorted()
    }

    func writeChain() throws -> String {
        let path = sandbox.directory.file("chain.pem")
        let text =
            "Bag Attributes: some tool writes text before the blocks\n"
            + Self.pem(try CertificateFixtures.der("root-rsa.der"))
            + Self.pem(try CertificateFixtures.der("intermediate-ec384.der"))
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func addFindAndDeleteCertificates() throws {
        try sandbox.createKeychain()
        let add = try sandbox.run("add-certificates", try writeChain(), fixture("leaf-ec256.der"))
        #expect(add.status == 0, "\(add.stderr)")
        #expect(add.stdout == "" && add.stderr == "")
        #expect(
            try labels() == [
                "    \"labl\"<blob>=\"  issuing   authority \"", "    \"labl\"<blob>=\"Latchkey Test Root\"",
                "    \"labl\"<blob>=\"www.example.com\"",
            ])

        let find = try sandbox.run("find-certificate", "-c", "EXAMPLE.com", "-Z", "-m")
        #expect(find.status == 0, "\(find.stderr)")
        let lines = find.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "SHA-256 hash: " + (try opensslFingerprint("leaf-ec256.der", "sha256")))
        #expect(lines[1] == "SHA-1 hash: " + (try opensslFingerprint("leaf-ec256.der", "sha1")))
        #expect(lines[2] == "email addresses: ops@example.com, Webmaster@example.com")
        #expect(lines[3] == "keychain: \"\(sandbox.defaultKeychain)\"")
        #expect(lines[5] == "class: \"cert\"")
        #expect(lines.contains("    \"slnr\"<blob>=0x008000000000000001 "))
        #expect(lines.contains("    \"ctyp\"<uint32>=0x00000003 "))
        #expect(lines.contains("    \"pdmn\"<blob>=\"dk\""))

        let pem = try sandbox.run("find-certificate", "-a", "-p")
        #expect(pem.status == 0)
        let expected = try ["root-rsa.der", "intermediate-ec384.der", "leaf-ec256.der"].map {
            Self.pem(try CertificateFixtures.der($0))
        }
        #expect(
            Set(
                pem.stdout.components(separatedBy: "-----END CERTIFICATE-----\n").filter { !$0.isEmpty }.map {
                    $0 + "-----END CERTIFICATE-----\n"
                })
                == Set(expected))

        let byMail = try sandbox.run("find-certificate", "-e", "WEBMASTER@example.com", "-c", "no such name", "-p")
        #expect(byMail.stdout == Self.pem(try CertificateFixtures.der("leaf-ec256.der")))

        let delete = try sandbox.run("delete-certificate", "-c", "www.example.com")
        #expect(delete.status == 0 && delete.stdout == "" && delete.stderr == "")
        let byHash = try sandbox.run(
            "delete-certificate", "-Z", (try opensslFingerprint("root-rsa.der", "sha1")).lowercased(), "-t")
        #expect(byHash.status == 0, "\(byHash.stderr)")
        #expect(try labels() == ["    \"labl\"<blob>=\"  issuing   authority \""])
    }

    @Test func aDuplicateIsReportedAndTheOthersAreStillAdded() throws {
        try sandbox.createKeychain()
        #expect(try sandbox.run("add-certificates", fixture("leaf-ec256.der")).status == 0)
        let again = try sandbox.run("add-certificates", fixture("leaf-ec256.der"), fixture("expired.der"))
        #expect(again.status == 45)
        #expect(
            again.stderr
                == "latchkey: add-certificates: \(fixture("leaf-ec256.der")): www.example.com: The specified item already exists in the keychain.\n"
        )
        #expect(
            try labels() == ["    \"labl\"<blob>=\"expired.example.com\"", "    \"labl\"<blob>=\"www.example.com\""])
    }

    @Test func aFileThatIsNoCertificateAddsNothing() throws {
        try sandbox.createKeychain()
        let bad = sandbox.directory.file("bad.der")
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: bad))
        let add = try sandbox.run("add-certificates", fixture("leaf-ec256.der"), bad)
        #expect(add.status == 93)
        #expect(
            add.stderr
                == "latchkey: add-certificates: Unable to decode the provided data. (\(bad): the data is not a DER-encoded X.509 certificate)\n"
        )
        let cut = sandbox.directory.file("cut.pem")
        try "-----BEGIN CERTIFICATE-----\nMIIB\n".write(toFile: cut, atomically: true, encoding: .utf8)
        #expect(
            try sandbox.run("add-certificates", cut).stderr
                == "latchkey: add-certificates: Unable to decode the provided data. (\(cut): a PEM certificate block is cut short or not base64)\n"
        )
        let missing = try sandbox.run("add-certificates", sandbox.directory.file("absent.pem"))
        #expect(missing.status == 1)
        #expect(
            missing.stderr
                == "latchkey: add-certificates: cannot read \(sandbox.directory.file("absent.pem")): no such file\n")
        #expect(try labels() == [])
    }

    @Test func notFoundAndUsageErrorsHaveSecuritysStatuses() throws {
        try sandbox.createKeychain()
        let none = try sandbox.run("find-certificate", "-c", "nothing")
        #expect(none.status == 44)
        #expect(none.stderr == "latchkey: find-certificate: The specified item could not be found in the keychain.\n")
        let all = try sandbox.run("find-certificate", "-a", "-c", "nothing")
        #expect(all.status == 0 && all.stdout == "" && all.stderr == "")
        #expect(try sandbox.run("delete-certificate", "-c", "nothing").status == 44)
        #expect(try sandbox.run("delete-certificate").status == 64)
        #expect(try sandbox.run("delete-certificate", "-c", "a", "-Z", String(repeating: "0", count: 40)).status == 64)
        let badHash = try sandbox.run("delete-certificate", "-Z", "12")
        #expect(badHash.status == 64)
        #expect(
            badHash.stderr.hasPrefix(
                "latchkey: delete-certificate: -Z needs a SHA-1 fingerprint of 40 hexadecimal digits\n"))
        #expect(try sandbox.run("add-certificates").status == 64)
    }
}
