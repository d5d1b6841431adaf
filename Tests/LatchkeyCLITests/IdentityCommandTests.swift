import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// find-identity, verify-cert and create-keypair through the built binary: `security`'s exact output, exit
/// statuses, and the keys the keychain holds afterwards.
@Suite(.dedicatedThreads) struct IdentityCommandTests {
    let sandbox = CLISandbox()

    func fixture(_ name: String) -> String { CertificateFixtures.directory.appendingPathComponent(name).path }

    /// The sandbox's keychain opened in this process (after the commands ran), unlocked.
    func keychain() throws -> KeychainDatabase {
        let database = try KeychainDatabase.open(at: sandbox.defaultKeychain)
        try database.unlock(with: Passphrase(CLISandbox.passphrase))
        return database
    }

    static let caller = CallerIdentity(
        applicationIdentifier: "latchkey", accessGroups: ["latchkey", CallerIdentity.wildcardGroup])

    @Test func verifyCertEvaluatesAChainAsSecurityPrintsIt() throws {
        let chain = ["-c", fixture("leaf-ec256.der"), "-c", fixture("intermediate-ec384.der")]
        let good = try sandbox.run(
            ["verify-cert"] + chain + ["-r", fixture("root-rsa.der"), "-p", "ssl-server", "-s", "www.example.com"])
        #expect(good.status == 0 && good.stdout == "...certificate verification successful.\n" && good.stderr == "")
        let untrusted = try sandbox.run(["verify-cert"] + chain)
        #expect(
            untrusted.status == 1 && untrusted.stdout == ""
                && untrusted.stderr == "Cert Verify Result: CSSMERR_TP_NOT_TRUSTED\n")
        let host = try sandbox.run(
            ["verify-cert"] + chain + ["-r", fixture("root-rsa.der"), "-p", "ssl-server", "-s", "mail.example.com"])
        #expect(host.stderr == "Cert Verify Result: CSSMERR_APPLETP_HOSTNAME_MISMATCH\n")
        let late = try sandbox.run(["verify-cert"] + chain + ["-r", fixture("root-rsa.der"), "-d", "2060-01-01"])
        #expect(late.status == 1 && late.stderr == "Cert Verify Result: CSSMERR_TP_CERT_EXPIRED\n")
        let early = try sandbox.run(
            ["verify-cert"] + chain + ["-r", fixture("root-rsa.der"), "-d", "2020-06-01-12:00:00"])
        #expect(early.stderr == "Cert Verify Result: CSSMERR_TP_CERT_NOT_VALID_YET\n")
        let quiet = try sandbox.run(["verify-cert", "-q"] + chain)
        #expect(quiet.status == 1 && quiet.stdout == "" && quiet.stderr == "")
        #expect(try sandbox.run("verify-cert").status == 64)
        #expect(try sandbox.run(["verify-cert"] + chain + ["-d", "yesterday"]).status == 64)
        #expect(try sandbox.run(["verify-cert"] + chain + ["-p", "smime"]).status == 64)
    }

    @Test func findIdentityListsCertificatesWithTheirKeys() throws {
        try sandbox.createKeychain()
        #expect(
            try sandbox.run(
                "add-certificates", fixture("leaf-ec256.der"), fixture("root-rsa.der"),
                fixture("intermediate-ec384.der")
            ).status == 0)
        let none = try sandbox.run("find-identity")
        #expect(none.status == 0)
        #expect(
            none.stdout
                == "\nPolicy: X.509 Basic\n  Matching identities\n     0 identities found\n\n  Valid identities only\n     0 valid identities found\n"
        )
        // The leaf's private key joins it (added as a program would, through the library).
        let database = try keychain()
        let key = try AsymmetricKey(
            externalRepresentation: try CertificateFixtures.der("leaf-ec256.key"), type: .ellipticCurve, isPrivate: true
        )
        try database.add(
            NewItem(
                .key, attributes: KeyAttributes.derived(from: key), data: try CertificateFixtures.der("leaf-ec256.key")),
            caller: Self.caller)
        let fingerprint = try Certificate(derRepresentation: try CertificateFixtures.der("leaf-ec256.der"))
            .sha1Fingerprint.map { String(format: "%02X", $0) }.joined()
        let one = try sandbox.run("find-identity", "-p", "ssl-server", "-s", "www.example.com")
        #expect(
            one.stdout == """

                Policy: SSL (server)
                  Matching identities
                  1) \(fingerprint) "www.example.com" (CSSMERR_TP_NOT_TRUSTED)
                     1 identities found

                  Valid identities only
                     0 valid identities found

                """)
        #expect(try sandbox.run("find-identity", "-v").stdout == "     0 valid identities found\n")
        #expect(try sandbox.run("find-identity", "-p", "codesigning").status == 64)
    }

    @Test func createKeypairStoresBothHalves() throws {
        try sandbox.createKeychain()
        let made = try sandbox.run("create-keypair", "-a", "ec", "-s", "384", "--tag", "deploy", "deploy key")
        #expect(made.status == 0 && made.stdout == "" && made.stderr == "")
        let keys = try keychain().copyMatching(
            ItemQuery(.key, matching: [.label: .string("deploy key")], limit: .all, returning: [.attributes, .data]),
            caller: Self.caller)
        #expect(keys.map { $0[.keyClass] }.sorted { "\($0!)" < "\($1!)" } == [.number(0), .number(1)])
        #expect(Set(keys.map { $0[.keySizeInBits] }) == [.number(384)])
        #expect(Set(keys.map { $0[.applicationTag] }) == [.data(Data("deploy".utf8))])
        #expect(Set(keys.map { $0[.applicationLabel] }).count == 1, "both halves carry the public key's hash")
        let privateItem = try #require(keys.first { $0[.keyClass] == .number(1) })
        let key = try AsymmetricKey(
            externalRepresentation: try #require(privateItem.data), type: .ellipticCurve, isPrivate: true)
        #expect(key.sizeInBits == 384)
        #expect(try sandbox.run("create-keypair", "-a", "dsa", "x").status == 64)
        let small = try sandbox.run("create-keypair", "-s", "512", "x")
        #expect(small.status == 64)
        #expect(
            small.stderr.hasPrefix(
                "latchkey: create-keypair: an RSA key is 1024 to 8192 bits, a multiple of 8, not 512\n"))
    }
}
