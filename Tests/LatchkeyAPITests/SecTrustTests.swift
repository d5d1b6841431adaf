import Foundation
import LatchkeySecurity
import LatchkeyTestSupport
import Testing

/// Trust evaluation through Apple's functions, on OpenSSL: the fixtures' chain (root → intermediate →
/// leaf for www.example.com) against anchors and against Debian's CA store, with Apple's error codes for
/// an untrusted root, a missing intermediate, a wrong host, an expired or not yet valid certificate.
@Suite struct SecTrustTests {
    static func certificate(_ name: String) throws -> SecCertificate {
        try #require(SecCertificateCreateWithData(nil, try CertificateFixtures.der(name) as CFData))
    }

    /// A trust of `names` (leaf first) under `policy`, anchored at the fixtures' root unless told otherwise.
    func trust(_ names: [String], policy: SecPolicy, anchors: [String]? = ["root-rsa.der"], date: Date? = nil) throws
        -> SecTrust
    {
        var trust: SecTrust?
        #expect(
            SecTrustCreateWithCertificates(try names.map(Self.certificate) as CFArray, policy, &trust) == errSecSuccess)
        let made = try #require(trust)
        if let anchors {
            #expect(SecTrustSetAnchorCertificates(made, try anchors.map(Self.certificate) as CFArray) == errSecSuccess)
        }
        if let date { #expect(SecTrustSetVerifyDate(made, date as CFDate) == errSecSuccess) }
        return made
    }

    /// nil when trusted, else the error's code.
    func evaluate(_ trust: SecTrust) -> Int? {
        var error: CFError?
        let trusted = SecTrustEvaluateWithError(trust, &error)
        #expect(trusted == (error == nil))
        return error?.code
    }

    @Test func aGoodChainToTheAnchorIsTrusted() throws {
        let good = try trust(
            ["leaf-ec256.der", "intermediate-ec384.der"],
            policy: SecPolicyCreateSSL(true, "www.example.com" as CFString))
        #expect(evaluate(good) == nil)
        var result = SecTrustResultType.invalid
        #expect(SecTrustGetTrustResult(good, &result) == errSecSuccess && result == .unspecified)
        let chain = try #require(SecTrustCopyCertificateChain(good) as? [SecCertificate])
        #expect(
            chain.map { SecCertificateCopySubjectSummary($0) as String? } == [
                "www.example.com", "  issuing   authority ", "Latchkey Test Root",
            ])
        #expect(SecTrustGetCertificateCount(good) == 3)
        #expect(SecTrustCopyKey(good) == SecCertificateCopyKey(try Self.certificate("leaf-ec256.der")))
        // Basic X.509 checks no host name; an intermediate may be the anchor.
        #expect(
            evaluate(try trust(["leaf-ec256.der", "intermediate-ec384.der"], policy: SecPolicyCreateBasicX509())) == nil
        )
        #expect(
            evaluate(
                try trust(["leaf-ec256.der"], policy: SecPolicyCreateBasicX509(), anchors: ["intermediate-ec384.der"]))
                == nil)
    }

    @Test func eachFailureHasApplesCode() throws {
        let ssl = SecPolicyCreateSSL(true, "www.example.com" as CFString)
        // The system's store does not know the fixtures' root.
        #expect(
            evaluate(try trust(["leaf-ec256.der", "intermediate-ec384.der"], policy: ssl, anchors: nil))
                == Int(errSecNotTrusted))
        // The intermediate is missing.
        #expect(evaluate(try trust(["leaf-ec256.der"], policy: ssl)) == Int(errSecNotTrusted))
        // Another host.
        let other = try trust(
            ["leaf-ec256.der", "intermediate-ec384.der"],
            policy: SecPolicyCreateSSL(true, "mail.example.com" as CFString))
        #expect(evaluate(other) == Int(errSecHostNameMismatch))
        var result = SecTrustResultType.invalid
        #expect(SecTrustGetTrustResult(other, &result) == errSecSuccess && result == .recoverableTrustFailure)
        // Expired, and not valid yet (the fixtures' leaf is valid from 2025-12-02 to 2047).
        #expect(
            evaluate(try trust(["expired.der", "intermediate-ec384.der"], policy: SecPolicyCreateBasicX509()))
                == Int(errSecCertificateExpired))
        #expect(
            evaluate(
                try trust(
                    ["leaf-ec256.der", "intermediate-ec384.der"], policy: ssl,
                    date: Date(timeIntervalSince1970: 1_600_000_000)))
                == Int(errSecCertificateNotValidYet))
        // An anchor that did not issue the certificate does not make it trusted.
        #expect(
            evaluate(try trust(["dns-only.der"], policy: SecPolicyCreateBasicX509(), anchors: ["leaf-ec256.der"]))
                == Int(errSecNotTrusted))
        var made: SecTrust?
        #expect(SecTrustCreateWithCertificates("not a certificate" as CFString, nil, &made) == errSecParam)
        #expect(SecTrustCreateWithCertificates([] as CFArray, nil, &made) == errSecParam)
    }

    @Test func changingTheSettingsEvaluatesAgain() throws {
        let later = try trust(["leaf-ec256.der", "intermediate-ec384.der"], policy: SecPolicyCreateBasicX509())
        #expect(evaluate(later) == nil)
        #expect(SecTrustSetVerifyDate(later, Date(timeIntervalSince1970: 2_600_000_000) as CFDate) == errSecSuccess)
        #expect(evaluate(later) == Int(errSecCertificateExpired))
        #expect(SecTrustSetPolicies(later, SecPolicyCreateSSL(true, "www.example.com" as CFString)) == errSecSuccess)
        #expect(SecTrustSetVerifyDate(later, Date() as CFDate) == errSecSuccess)
        #expect(evaluate(later) == nil)
        // Anchors beside the system's store.
        #expect(SecTrustSetAnchorCertificatesOnly(later, false) == errSecSuccess)
        #expect(evaluate(later) == nil)
    }

    @Test func aRootOfTheSystemStoreIsTrustedWithoutAnchors() throws {
        // Any root Debian's ca-certificates ships: trusted by the system's store, by nothing else here.
        let directory = "/etc/ssl/certs"
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: directory).sorted().first { $0.hasSuffix(".pem") })
        let pem = try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
        let base64 = pem.components(separatedBy: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try #require(Data(base64Encoded: base64))
        let root = try #require(SecCertificateCreateWithData(nil, der as CFData))
        var trust: SecTrust?
        #expect(SecTrustCreateWithCertificates(root, SecPolicyCreateBasicX509(), &trust) == errSecSuccess)
        #expect(evaluate(try #require(trust)) == nil)
        #expect(
            SecTrustSetAnchorCertificates(trust!, [try Self.certificate("root-rsa.der")] as CFArray) == errSecSuccess)
        #expect(evaluate(trust!) == Int(errSecNotTrusted), "only the anchors count once they are set")
    }
}
