import Foundation
import Latchkey
import LatchkeySecurity
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

extension GlobalSecItemTests {
    /// Certificates through Apple's functions: made from DER, stored by reference or by bytes with the
    /// attributes Apple derives, found by those attributes and by the certificate filters, handed back as
    /// `SecCertificate`, and bad bytes refused with `errSecDecode` without touching what is stored.
    @Suite(.dedicatedThreads) struct SecCertificateTests {
        let memory = InMemoryKeychain()
        init() { memory.install() }

        static func certificate(_ name: String) throws -> SecCertificate {
            try #require(SecCertificateCreateWithData(nil, try CertificateFixtures.der(name) as CFData))
        }

        static func hex(_ data: Data?) -> String? { data.map { $0.map { String(format: "%02x", $0) }.joined() } }

        struct Expected: Decodable {
            let slnr: String
            let issr: String
            let subj: String
            let pkhh: String
            let skid: String?
        }

        static func expected(_ name: String) throws -> Expected {
            let all = try JSONDecoder().decode(
                [String: Expected].self,
                from: Data(contentsOf: CertificateFixtures.directory.appendingPathComponent("expected.json")))
            return try #require(all[name])
        }

        func add(_ attributes: [String: Any]) -> OSStatus {
            SecItemAdd(
                ([kSecClass as String: kSecClassCertificate] as [String: Any]).merging(attributes) { _, new in new }
                    as CFDictionary, nil)
        }

        func find(_ query: [String: Any]) -> (OSStatus, CFTypeRef?) {
            var result: CFTypeRef?
            let status = SecItemCopyMatching(
                ([kSecClass as String: kSecClassCertificate] as [String: Any]).merging(query) { _, new in new }
                    as CFDictionary, &result)
            return (status, result)
        }

        /// The labels of every certificate a query finds (sorted), or the status when it finds none.
        func labels(_ query: [String: Any]) -> [String] {
            let (status, result) = find(
                query.merging([
                    kSecMatchLimit as String: kSecMatchLimitAll,
                    kSecReturnAttributes as String: true,
                ]) { _, new in new })
            guard status == errSecSuccess, let items = result as? [[String: Any]] else { return ["status \(status)"] }
            return items.compactMap { $0[kSecAttrLabel as String] as? String }.sorted()
        }

        @Test func theFunctionsReadTheCertificate() throws {
            let leaf = try Self.certificate("leaf-ec256.der")
            #expect(SecCertificateCopyData(leaf) as Data == (try CertificateFixtures.der("leaf-ec256.der")))
            #expect(SecCertificateCopySubjectSummary(leaf) as String? == "www.example.com")
            var name: CFString?
            #expect(SecCertificateCopyCommonName(leaf, &name) == errSecSuccess)
            #expect(name as String? == "www.example.com")
            var emails: CFArray?
            #expect(SecCertificateCopyEmailAddresses(leaf, &emails) == errSecSuccess)
            #expect(emails as? [String] == ["ops@example.com", "Webmaster@example.com"])
            let expected = try Self.expected("leaf-ec256.der")
            #expect(Self.hex(SecCertificateCopySerialNumberData(leaf, nil) as Data?) == expected.slnr)
            #expect(
                Self.hex((SecCertificateCopyNormalizedIssuerSequence(leaf) as Data?)?.dropFirst(2)) == expected.issr)
            #expect(
                Self.hex((SecCertificateCopyNormalizedSubjectSequence(leaf) as Data?)?.dropFirst(2)) == expected.subj)
            #expect(leaf.description == "<SecCertificate \"www.example.com\">")
            #expect(leaf == (try Self.certificate("leaf-ec256.der")))
            #expect(leaf != (try Self.certificate("root-rsa.der")))

            let noName = try Self.certificate("email-only.der")
            name = nil
            #expect(SecCertificateCopyCommonName(noName, &name) == errSecInternal)
            #expect(name == nil)
            var none: CFArray?
            #expect(SecCertificateCopyEmailAddresses(try Self.certificate("dns-only.der"), &none) == errSecSuccess)
            #expect((none as? [String]) == [])
        }

        @Test func bytesThatAreNoCertificateMakeNone() throws {
            let der = try CertificateFixtures.der("leaf-ec256.der")
            #expect(SecCertificateCreateWithData(nil, Data() as CFData) == nil)
            #expect(SecCertificateCreateWithData(nil, Data("hello".utf8) as CFData) == nil)
            #expect(SecCertificateCreateWithData(nil, der.dropLast() as CFData) == nil)
            #expect(SecCertificateCreateWithData(nil, (der + Data([0])) as CFData) == nil)
        }

        @Test func addingByReferenceStoresTheAttributesAppleDerives() throws {
            let leaf = try Self.certificate("leaf-ec256.der")
            #expect(add([kSecValueRef as String: leaf]) == errSecSuccess)
            let (status, result) = find([kSecReturnAttributes as String: true])
            #expect(status == errSecSuccess)
            let attributes = try #require(result as? [String: Any])
            let expected = try Self.expected("leaf-ec256.der")
            #expect(attributes[kSecAttrCertificateType as String] as? Int == 3)
            #expect(attributes[kSecAttrCertificateEncoding as String] as? Int == 3)
            #expect(Self.hex(attributes[kSecAttrSerialNumber as String] as? Data) == expected.slnr)
            #expect(Self.hex(attributes[kSecAttrIssuer as String] as? Data) == expected.issr)
            #expect(Self.hex(attributes[kSecAttrSubject as String] as? Data) == expected.subj)
            #expect(Self.hex(attributes[kSecAttrPublicKeyHash as String] as? Data) == expected.pkhh)
            #expect(Self.hex(attributes[kSecAttrSubjectKeyID as String] as? Data) == expected.skid)
            #expect(attributes[kSecAttrLabel as String] as? String == "www.example.com")
            #expect(attributes[kSecAttrAccessible as String] as? String == "dk")
            // The same certificate again, by reference or by its bytes, is the same primary key.
            #expect(add([kSecValueRef as String: leaf]) == errSecDuplicateItem)
            #expect(add([kSecValueData as String: SecCertificateCopyData(leaf)]) == errSecDuplicateItem)
        }

        @Test func addingByBytesDerivesTheSameAndTheCallersLabelWins() throws {
            #expect(
                add([
                    kSecValueData as String: try CertificateFixtures.der("root-rsa.der"),
                    kSecAttrLabel as String: "our root",
                ]) == errSecSuccess)
            #expect(
                add([kSecValueData as String: try CertificateFixtures.der("intermediate-ec384.der")]) == errSecSuccess)
            #expect(labels([:]) == ["  issuing   authority ", "our root"])
            let root = try Self.expected("root-rsa.der")
            let (status, result) = find([kSecAttrLabel as String: "our root", kSecReturnAttributes as String: true])
            #expect(status == errSecSuccess)
            #expect(Self.hex((result as? [String: Any])?[kSecAttrSerialNumber as String] as? Data) == root.slnr)
        }

        @Test func returningTheReferenceGivesTheCertificate() throws {
            let leaf = try Self.certificate("leaf-ec256.der")
            #expect(add([kSecValueRef as String: leaf]) == errSecSuccess)
            let (status, result) = find([kSecReturnRef as String: true])
            #expect(status == errSecSuccess)
            #expect((result as? SecCertificate) == leaf)
            let (_, both) = find([kSecReturnRef as String: true, kSecReturnAttributes as String: true])
            let dictionary = try #require(both as? [String: Any])
            #expect((dictionary[kSecValueRef as String] as? SecCertificate) == leaf)
            #expect(dictionary[kSecValueData as String] == nil)
            #expect(dictionary[kSecAttrLabel as String] as? String == "www.example.com")
            let (_, withData) = find([kSecReturnRef as String: true, kSecReturnData as String: true])
            #expect(
                (withData as? [String: Any])?[kSecValueData as String] as? Data == SecCertificateCopyData(leaf) as Data)
            var added: CFTypeRef?
            let root = try Self.certificate("root-rsa.der")
            #expect(
                SecItemAdd([kSecValueRef as String: root, kSecReturnRef as String: true] as CFDictionary, &added)
                    == errSecSuccess)
            #expect((added as? SecCertificate) == root)
        }

        @Test func aReferenceNamesItsItemInSearchesAndDeletes() throws {
            let leaf = try Self.certificate("leaf-ec256.der")
            let root = try Self.certificate("root-rsa.der")
            #expect(add([kSecValueRef as String: leaf]) == errSecSuccess)
            #expect(add([kSecValueRef as String: root]) == errSecSuccess)
            #expect(labels([kSecValueRef as String: root]) == ["Latchkey Test Root"])
            #expect(
                SecItemDelete(
                    [kSecClass as String: kSecClassCertificate, kSecValueRef as String: root] as CFDictionary)
                    == errSecSuccess)
            #expect(labels([:]) == ["www.example.com"])
            #expect(SecItemDelete([kSecValueRef as String: root] as CFDictionary) == errSecItemNotFound)
        }

        @Test func badInputGetsAppleStatusesAndChangesNothing() throws {
            let leaf = try Self.certificate("leaf-ec256.der")
            #expect(add([kSecValueRef as String: leaf]) == errSecSuccess)
            #expect(add([kSecValueData as String: Data("not a certificate".utf8)]) == errSecDecode)
            #expect(
                SecCopyLastErrorDetail()
                    == "Unable to decode the provided data. (kSecValueData of a certificate item must be one DER-encoded X.509 certificate: the data is not a DER-encoded X.509 certificate)"
            )
            #expect(
                add([kSecValueData as String: (try CertificateFixtures.der("root-rsa.der")).dropLast()]) == errSecDecode
            )
            #expect(
                add([kSecValueRef as String: leaf, kSecValueData as String: SecCertificateCopyData(leaf)])
                    == errSecParam)
            #expect(add([kSecValueRef as String: "a string"]) == errSecParam)
            #expect(
                SecItemAdd(
                    [kSecClass as String: kSecClassGenericPassword, kSecValueRef as String: leaf] as CFDictionary, nil)
                    == errSecParam)
            #expect(
                SecItemUpdate(
                    [kSecClass as String: kSecClassCertificate] as CFDictionary,
                    [kSecValueData as String: Data("garbage".utf8)] as CFDictionary) == errSecDecode)
            let (status, result) = find([kSecReturnRef as String: true, kSecMatchLimit as String: kSecMatchLimitAll])
            #expect(status == errSecSuccess)
            #expect((result as? [SecCertificate]) == [leaf])
        }

        @Test func updatingTheBytesUpdatesTheDerivedAttributes() throws {
            #expect(
                add([kSecValueRef as String: try Self.certificate("expired.der"), kSecAttrLabel as String: "server"])
                    == errSecSuccess)
            #expect(
                SecItemUpdate(
                    [kSecClass as String: kSecClassCertificate, kSecAttrLabel as String: "server"] as CFDictionary,
                    [kSecValueData as String: try CertificateFixtures.der("leaf-ec256.der")] as CFDictionary)
                    == errSecSuccess)
            let (_, result) = find([kSecAttrLabel as String: "server", kSecReturnAttributes as String: true])
            let attributes = try #require(result as? [String: Any])
            #expect(
                Self.hex(attributes[kSecAttrSerialNumber as String] as? Data)
                    == (try Self.expected("leaf-ec256.der")).slnr)
            #expect(labels([kSecValueRef as String: try Self.certificate("leaf-ec256.der")]) == ["server"])
        }

        @Test func theCertificateFiltersLookInsideTheCertificates() throws {
            for name in [
                "root-rsa.der", "intermediate-ec384.der", "leaf-ec256.der", "email-only.der", "two-names.der",
                "dns-only.der", "expired.der",
            ] {
                #expect(add([kSecValueRef as String: try Self.certificate(name)]) == errSecSuccess)
            }
            let root = try Self.certificate("root-rsa.der")
            let intermediate = try Self.certificate("intermediate-ec384.der")
            let leaf = try Self.certificate("leaf-ec256.der")
            let rootName = try #require(SecCertificateCopyNormalizedSubjectSequence(root) as Data?)
            let intermediateName = try #require(SecCertificateCopyNormalizedSubjectSequence(intermediate) as Data?)
            let everyoneButRootAndIntermediate = [
                "Zoë, first (signing)", "alice@example.org", "api.example.net",
                "expired.example.com", "www.example.com",
            ]
            // Issued by the intermediate: directly.
            #expect(labels([kSecMatchIssuers as String: [intermediateName]]) == everyoneButRootAndIntermediate)
            // Issued by the root: the root itself, the intermediate, and through the intermediate everything else.
            #expect(
                labels([kSecMatchIssuers as String: [rootName]])
                    == (everyoneButRootAndIntermediate + ["  issuing   authority ", "Latchkey Test Root"]).sorted())
            // The issuer as it stands in the certificate (not normalized) is normalized first, as Apple does.
            #expect(
                labels([kSecMatchIssuers as String: [leaf.certificate.issuerSequence]])
                    == everyoneButRootAndIntermediate)
            // Names that are not names filter nothing; an unknown issuer finds nothing.
            #expect(labels([kSecMatchIssuers as String: [Data("junk".utf8)]]).count == 7)
            #expect(
                labels([kSecMatchIssuers as String: [SecCertificateCopyNormalizedSubjectSequence(leaf)! as Data]])
                    == ["status \(errSecItemNotFound)"])

            let now = Date()
            #expect(!labels([kSecMatchValidOnDate as String: now]).contains("expired.example.com"))
            #expect(labels([kSecMatchValidOnDate as String: now]).count == 6)
            #expect(labels([kSecMatchValidOnDate as String: NSNull()]).count == 6)
            // 2025-01-01T00:00:00Z: the first second of the root's period and the last of the expired one's.
            #expect(
                labels([kSecMatchValidOnDate as String: Date(timeIntervalSince1970: 1_735_689_600)]) == [
                    "Latchkey Test Root", "expired.example.com",
                ])
            #expect(
                labels([kSecMatchValidOnDate as String: Date(timeIntervalSince1970: 1_735_689_599)]) == [
                    "expired.example.com"
                ])

            #expect(
                labels([kSecMatchSubjectContains as String: "example"]) == [
                    "alice@example.org", "expired.example.com", "www.example.com",
                ])
            #expect(labels([kSecMatchSubjectContains as String: "EXAMPLE"]) == ["status \(errSecItemNotFound)"])
            #expect(
                labels([kSecMatchSubjectContains as String: "EXAMPLE", kSecMatchCaseInsensitive as String: true]).count
                    == 4)

            // With an e-mail address, or without any: the leaf has two, the others but alice's none.
            #expect(labels([kSecMatchEmailAddressIfPresent as String: "OPS@example.com"]).count == 6)
            #expect(!labels([kSecMatchEmailAddressIfPresent as String: "bob@example.com"]).contains("www.example.com"))
            #expect(labels([kSecMatchEmailAddressIfPresent as String: "bob@example.com"]).count == 5)

            // Filters combine with each other and with attributes, and with the limit after filtering.
            #expect(
                labels([
                    kSecMatchIssuers as String: [rootName], kSecMatchValidOnDate as String: now,
                    kSecMatchSubjectContains as String: "www",
                ]) == ["www.example.com"])
            let (status, one) = find([kSecMatchSubjectContains as String: "expired", kSecReturnRef as String: true])
            #expect(status == errSecSuccess)
            #expect((one as? SecCertificate) == (try Self.certificate("expired.der")))
            // Trusted only: none of the fixtures chains to Debian's CA store; one of its roots does.
            #expect(labels([kSecMatchTrustedOnly as String: true]) == ["status \(errSecItemNotFound)"])
            #expect(labels([kSecMatchTrustedOnly as String: false]).count == 7)
            let directory = "/etc/ssl/certs"
            let name = try #require(
                try FileManager.default.contentsOfDirectory(atPath: directory).sorted().first { $0.hasSuffix(".pem") })
            let base64 = try String(contentsOfFile: directory + "/" + name, encoding: .utf8).components(
                separatedBy: "\n"
            )
            .filter { !$0.hasPrefix("-----") }.joined()
            let systemRoot = try #require(Data(base64Encoded: base64))
            #expect(
                add([kSecValueData as String: systemRoot, kSecAttrLabel as String: "system root"]) == errSecSuccess)
            #expect(labels([kSecMatchTrustedOnly as String: true]) == ["system root"])
            for bad: [String: Any] in [
                [kSecMatchIssuers as String: "x"], [kSecMatchTrustedOnly as String: "yes"],
                [kSecMatchValidOnDate as String: "today"],
                [kSecMatchSubjectContains as String: 3], [kSecMatchCaseInsensitive as String: "yes"],
            ] {
                #expect(find(bad).0 == errSecParam)
            }
        }

        /// macOS's `kSecMatchSubjectStartsWith`, `EndsWith` and `WholeString` look at the common name
        /// (`SecCertificateCopyCommonName`'s, as its file-based keychain's `FilterCandidateItem` does), with the
        /// case, diacritic and width flags; a certificate without a common name matches none of them.
        @Test func macOSSubjectFiltersMatchTheCommonName() throws {
            for name in [
                "root-rsa.der", "intermediate-ec384.der", "leaf-ec256.der", "email-only.der", "two-names.der",
                "dns-only.der", "expired.der",
            ] {
                #expect(add([kSecValueRef as String: try Self.certificate(name)]) == errSecSuccess)
            }
            let notFound = ["status \(errSecItemNotFound)"]
            #expect(labels([kSecMatchSubjectStartsWith as String: "www."]) == ["www.example.com"])
            #expect(labels([kSecMatchSubjectStartsWith as String: "WWW."]) == notFound)
            #expect(
                labels([kSecMatchSubjectStartsWith as String: "WWW.", kSecMatchCaseInsensitive as String: true]) == [
                    "www.example.com"
                ])
            // Contains looks in every subject value; the three look at the common name only, and not in its middle.
            #expect(labels([kSecMatchSubjectContains as String: "example"]).count == 3)
            #expect(labels([kSecMatchSubjectStartsWith as String: "example"]) == notFound)
            #expect(labels([kSecMatchSubjectContains as String: "issuing"]) == ["  issuing   authority "])
            // An OU, not a common name.
            #expect(labels([kSecMatchSubjectStartsWith as String: "  issuing"]) == notFound)
            #expect(
                labels([kSecMatchSubjectEndsWith as String: "example.com"]) == [
                    "expired.example.com", "www.example.com",
                ])
            #expect(labels([kSecMatchSubjectEndsWith as String: "www.example"]) == notFound)
            #expect(labels([kSecMatchSubjectWholeString as String: "www.example.com"]) == ["www.example.com"])
            #expect(labels([kSecMatchSubjectWholeString as String: "www.example"]) == notFound)
            #expect(
                labels([
                    kSecMatchSubjectWholeString as String: "Latchkey Test Root",
                    kSecMatchSubjectStartsWith as String: "Latchkey",
                    kSecMatchSubjectEndsWith as String: "Root",
                ]) == ["Latchkey Test Root"])
            #expect(labels([kSecMatchSubjectStartsWith as String: ""]) == notFound)
            // Diacritics and width, each by its own flag (the name with two common names is matched by its last, "Zoë").
            var name: CFString?
            #expect(SecCertificateCopyCommonName(try Self.certificate("two-names.der"), &name) == errSecSuccess)
            #expect(name as String? == "Zoë")
            #expect(labels([kSecMatchSubjectWholeString as String: "Zoe"]) == notFound)
            #expect(
                labels([kSecMatchSubjectWholeString as String: "Zoe", kSecMatchDiacriticInsensitive as String: true])
                    == ["Zoë, first (signing)"])
            #expect(labels([kSecMatchSubjectStartsWith as String: "ｗｗｗ"]) == notFound)
            #expect(
                labels([kSecMatchSubjectStartsWith as String: "ｗｗｗ", kSecMatchWidthInsensitive as String: true]) == [
                    "www.example.com"
                ])
            // Combined with the other filters, and refused as Apple would for values of the wrong type.
            #expect(
                labels([kSecMatchSubjectEndsWith as String: "example.com", kSecMatchValidOnDate as String: Date()]) == [
                    "www.example.com"
                ])
            for bad: [String: Any] in [
                [kSecMatchSubjectStartsWith as String: 3], [kSecMatchSubjectEndsWith as String: Data()],
                [kSecMatchSubjectWholeString as String: ["www.example.com"]],
                [kSecMatchDiacriticInsensitive as String: "yes"], [kSecMatchWidthInsensitive as String: "no"],
            ] {
                #expect(find(bad).0 == errSecParam)
            }
            // Update and delete refuse them, as every certificate filter (nothing is deleted).
            #expect(
                SecItemDelete(
                    [kSecClass as String: kSecClassCertificate, kSecMatchSubjectStartsWith as String: "www."]
                        as CFDictionary)
                    == errSecParam)
            #expect(labels([:]).count == 7)
        }

        /// macOS's `kSecMatchItemList`: what the rest of the query finds among the listed references and
        /// persistent references, each once, in the keychain's order, the limit applied to them.
        @Test func anItemListNarrowsTheSearchToTheListedItems() throws {
            let leaf = try Self.certificate("leaf-ec256.der")
            let expired = try Self.certificate("expired.der")
            let root = try Self.certificate("root-rsa.der")
            let intermediate = try Self.certificate("intermediate-ec384.der")
            for certificate in [leaf, expired, root] {
                #expect(add([kSecValueRef as String: certificate]) == errSecSuccess)
            }
            #expect(labels([kSecMatchItemList as String: [root, leaf]]) == ["Latchkey Test Root", "www.example.com"])
            #expect(
                labels([kSecMatchItemList as String: [root, leaf], kSecMatchSubjectStartsWith as String: "www"]) == [
                    "www.example.com"
                ])
            #expect(labels([kSecMatchItemList as String: [leaf, leaf]]) == ["www.example.com"])
            // Persistent references name items too; one of another class, or not a reference, names none.
            let (status, persistent) = find([kSecValueRef as String: expired, kSecReturnPersistentRef as String: true])
            #expect(status == errSecSuccess)
            let expiredReference = try #require(persistent as? Data)
            #expect(labels([kSecMatchItemList as String: [expiredReference]]) == ["expired.example.com"])
            var password: CFTypeRef?
            #expect(
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "s",
                        kSecValueData as String: Data("p".utf8),
                        kSecReturnPersistentRef as String: true,
                    ] as CFDictionary, &password) == errSecSuccess)
            let notFound = ["status \(errSecItemNotFound)"]
            #expect(
                labels([kSecMatchItemList as String: [try #require(password as? Data), Data("junk".utf8)]]) == notFound)
            // Not in the keychain, or an empty list: nothing.
            #expect(labels([kSecMatchItemList as String: [intermediate]]) == notFound)
            #expect(labels([kSecMatchItemList as String: [Any]()]) == notFound)
            // The limit applies after the list, in the keychain's order (the leaf was added first).
            let (one, first) = find([kSecMatchItemList as String: [root, leaf], kSecReturnRef as String: true])
            #expect(one == errSecSuccess)
            #expect((first as? SecCertificate) == leaf)
            // Bad input: Apple's statuses, nothing changed.
            #expect(find([kSecMatchItemList as String: ["www.example.com"]]).0 == errSecParam)
            #expect(find([kSecMatchItemList as String: leaf]).0 == errSecParam)
            #expect(find([kSecMatchItemList as String: [leaf], kSecValueRef as String: root]).0 == errSecParam)
            #expect(
                SecItemDelete(
                    [kSecClass as String: kSecClassCertificate, kSecMatchItemList as String: [leaf]] as CFDictionary)
                    == errSecParam)
            // No private key for the leaf here: no identity, listed or not.
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassIdentity, kSecMatchItemList as String: [leaf]] as CFDictionary, nil)
                    == errSecItemNotFound)
            #expect(labels([:]).count == 3)
        }

        @Test func aPolicyMatchesAsApplesFilterDoes() throws {
            for name in [
                "root-rsa.der", "intermediate-ec384.der", "leaf-ec256.der", "email-only.der", "two-names.der",
                "dns-only.der", "expired.der",
            ] {
                #expect(add([kSecValueRef as String: try Self.certificate(name)]) == errSecSuccess)
            }
            // SSL: the certificate alone, its host name and dates (no chain, as Apple's leaf-only evaluation).
            #expect(
                labels([kSecMatchPolicy as String: SecPolicyCreateSSL(true, "www.example.com" as CFString)]) == [
                    "www.example.com"
                ])
            #expect(
                labels([kSecMatchPolicy as String: SecPolicyCreateSSL(true, "api.example.net" as CFString)]) == [
                    "api.example.net"
                ])
            #expect(
                labels([kSecMatchPolicy as String: SecPolicyCreateSSL(true, "nobody.example.org" as CFString)])
                    == ["status \(errSecItemNotFound)"])
            // The expired one (its host name in its common name) matches on a date of its period only.
            let policy = SecPolicyCreateSSL(true, "expired.example.com" as CFString)
            #expect(labels([kSecMatchPolicy as String: policy]) == ["status \(errSecItemNotFound)"])
            #expect(
                labels([
                    kSecMatchPolicy as String: policy,
                    kSecMatchValidOnDate as String: Date(timeIntervalSince1970: 1_735_689_599),
                ])
                    == ["expired.example.com"])
            // Basic X.509 builds the chain: none of the fixtures reaches Debian's CA store.
            #expect(labels([kSecMatchPolicy as String: SecPolicyCreateBasicX509()]) == ["status \(errSecItemNotFound)"])
            // Not a policy; a class that has none.
            #expect(find([kSecMatchPolicy as String: "ssl"]).0 == errSecParam)
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassGenericPassword,
                        kSecMatchPolicy as String: SecPolicyCreateBasicX509(),
                    ]
                        as CFDictionary, nil) == errSecUnimplemented)
        }
    }
}
