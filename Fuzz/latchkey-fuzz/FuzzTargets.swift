import Foundation
import Latchkey
import LatchkeyCLI
import LatchkeyEngine
import LatchkeyPKI
import LatchkeyProtocol
import LatchkeySSH

/// The fuzz targets. Each takes the fuzzer's bytes, must never crash, hang or leak, and checks the
/// invariants it can (a decoded message re-encodes to the same bytes).
enum FuzzTargets {
    static let names =
        ["query", "backup", "snapshot", "cli", "agent", "certificate", "pkcs12", "pem", "ssh", "tpm-policy"]
        + formatNames

    static func run(_ name: String, _ data: Data) {
        if runFormat(name, data) { return }
        switch name {
        case "query": query(data)
        case "backup": backup(data)
        case "snapshot": snapshot(data)
        case "cli": commandLine(data)
        case "agent": agent(data)
        case "certificate": certificate(data)
        case "pkcs12": pkcs12(data)
        case "pem": pem(data)
        case "ssh": ssh(data)
        case "tpm-policy": tpmPolicy(data)
        default: preconditionFailure("unknown fuzz target \(name); one of \(names)")
        }
    }

    // MARK: query: SecItem dictionaries through the dictionary layer into an in-memory keychain

    static let keys = [
        "class", "svce", "acct", "agrp", "pdmn", "sync", "labl", "desc", "icmt", "crtr", "type", "gena", "srvr",
        "ptcl", "port", "path", "sdmn", "atyp", "cdat", "mdat", "invi", "nega", "alis", "tomb", "kcls", "klbl",
        "atag", "bsiz", "esiz", "ctyp", "issr", "slnr", "v_Data", "v_Ref", "v_PersistentRef", "r_Data",
        "r_Attributes", "r_Ref", "r_PersistentRef", "m_Limit", "m_CaseInsensitive", "m_Issuers", "u_AuthUI", "accc",
        "m_SubjectContains", "m_SubjectStartsWith", "m_SubjectWholeString", "m_DiacriticInsensitive", "m_ItemList",
    ]
    static let strings = [
        "genp", "inet", "cert", "keys", "idnt", "ak", "ck", "dk", "aku", "cku", "dku", "akpu", "m_LimitOne",
        "m_LimitAll", "syna", "htps", "app", "shared", "other", "mail", "alice", "42", "", "*",
    ]

    static func value(_ input: inout FuzzInput, depth: Int = 0) -> Any {
        switch input.int(below: depth < 2 ? 9 : 7) {
        case 0, 1: return input.text(strings)
        case 2: return input.data(limit: 40)
        case 3: return Int(Int8(bitPattern: input.byte())) * Int(input.byte())
        case 4: return input.byte() % 2 == 0
        case 5: return Date(timeIntervalSinceReferenceDate: Double(Int8(bitPattern: input.byte())) * 1e6)
        case 6: return Double(Int8(bitPattern: input.byte())) / 3
        case 7: return (0..<input.int(below: 4)).map { _ in value(&input, depth: depth + 1) }
        default: return dictionary(&input, depth: depth + 1)
        }
    }

    static func dictionary(_ input: inout FuzzInput, depth: Int = 0) -> [String: Any] {
        var dictionary: [String: Any] = [:]
        for _ in 0..<input.int(below: 9) {
            dictionary[input.text(keys)] = value(&input, depth: depth)
        }
        return dictionary
    }

    /// Each input gets a keychain of its own, so that what an input finds replays from that input alone,
    /// and so that LeakSanitizer's check after an input means something: LSan cannot see a pointer Swift
    /// stores with tag bits (a `Data` of 15 bytes or more keeps its enum case in the top bits of its storage
    /// pointer), so the digests a long-lived keychain caches in its `KeyVault` read as leaked whenever
    /// libFuzzer happens to check (a keychain kept across inputs failed one CI run in about seven that way).
    static func query(_ data: Data) {
        let keychain = KeychainDatabase.inMemory()
        var input = FuzzInput(data)
        let caller = CallerIdentity(
            applicationIdentifier: "app", accessGroups: input.pick([["app"], ["app", "shared"], ["*"]]))
        let backend = DatabaseBackend(database: keychain, caller: caller)
        if input.byte() % 16 == 0 {
            keychain.lock()
        } else {
            do throws(KeychainError) {
                try keychain.unlock(with: Passphrase("latchkey-in-memory"))
            } catch {
                preconditionFailure("the in-memory keychain refused its own passphrase: \(error)")
            }
        }
        for _ in 0..<(1 + input.int(below: 8)) {
            let first = dictionary(&input)
            do throws(KeychainError) {
                switch input.int(below: 5) {
                case 0: _ = try backend.add(first)
                case 1: _ = try backend.copyMatching(first)
                case 2: try backend.update(first, with: dictionary(&input))
                case 3: try backend.delete(first)
                default: try backend.upsert(first, attributes: dictionary(&input))
                }
            } catch {
                precondition(error.status.rawValue != 0, "an error with status 0")
            }
        }
    }

    // MARK: backup: the header before the key derivation, and the decrypted payload

    static func backup(_ data: Data) {
        var input = FuzzInput(data)
        let payload = input.byte() % 2 == 0
        let rest = input.rest()
        do throws(KeychainError) {
            try KeychainBackup.fuzzParse(rest, payload: payload)
        } catch {
            precondition([.decode, .param].contains(error.status), "unexpected status \(error.status)")
        }
    }

    // MARK: snapshot: a versioned snapshot's header, size and digest, before anything is restored from it

    static func snapshot(_ data: Data) {
        do throws(KeychainError) {
            try KeychainSnapshot.fuzzVerify(data)
        } catch {
            precondition(error.status == .decode, "unexpected status \(error.status)")
        }
    }

    // MARK: cli: the argument parser of every command

    static func commandLine(_ data: Data) {
        var input = FuzzInput(data)
        let command = input.int(below: LatchkeyCommandLine.commandNames.count)
        let words = input.rest().split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        if let message = LatchkeyCommandLine.fuzzParse(commandAt: command, words) {
            precondition(!message.isEmpty, "a usage error without a message")
        }
    }

    // MARK: agent: requests and responses as they arrive on the socket

    // `try?` below: a message the decoder refuses is the expected outcome for most inputs; only what it
    // accepts has an invariant to check.
    static func agent(_ data: Data) {
        if let (id, request) = try? AgentRequest.decode(data) {
            let again = request.encoded(id: id)
            guard let (sameID, decoded) = try? AgentRequest.decode(again) else {
                preconditionFailure("a decoded request does not decode after encoding")
            }
            precondition(sameID == id && decoded.encoded(id: id) == again, "request encoding is not canonical")
        }
        if let response = try? AgentResponse.decode(data) {
            let again = response.encoded()
            guard let decoded = try? AgentResponse.decode(again) else {
                preconditionFailure("a decoded response does not decode after encoding")
            }
            precondition(decoded.encoded() == again, "response encoding is not canonical")
        }
        if let greeting = try? AgentGreeting.decode(data) {
            precondition(Data(greeting.encoded()) == data, "greeting encoding is not canonical")
        }
    }

    // MARK: certificate: DER certificates through OpenSSL and Latchkey's name normalization

    static func certificate(_ data: Data) {
        let certificate: Certificate
        do {
            certificate = try Certificate(derRepresentation: data)
        } catch {
            precondition(!error.reason.isEmpty, "a refusal without a reason")
            return
        }
        precondition(certificate.derRepresentation == data, "the certificate's bytes changed")
        precondition(certificate.publicKeyHash.count == 20, "a public key hash that is not SHA-1")
        precondition(
            Certificate.normalizedName(certificate.issuerSequence) == certificate.normalizedIssuer,
            "the issuer normalizes differently as a sequence")
        precondition(
            Certificate.normalizedName(certificate.normalizedIssuerSequence) == certificate.normalizedIssuer,
            "normalizing a normalized name changed it")
        _ = CertificateAttributes.derived(from: certificate, label: true)
    }

    // MARK: pkcs12: PKCS #12 files through OpenSSL (with the fixtures' passphrase, so the seeds decrypt)

    static func pkcs12(_ data: Data) {
        do {
            let contents = try PKCS12Contents(data, passphrase: "fixture p12")
            precondition(!contents.certificates.isEmpty, "a PKCS #12 file accepted without a certificate")
            if let identity = contents.identity {
                precondition(
                    identity.privateKey.publicKeyData == identity.certificate.publicKeyBits,
                    "an identity whose key is not its certificate's")
            }
        } catch {
            // errSecParam only for a key derivation that asks for more work than is accepted (never run).
            precondition(
                [.decode, .authFailed].contains(error.kind)
                    || (error.kind == .param && error.reason.contains("iterations of its key derivation")),
                "unexpected PKCS #12 failure \(error.kind)")
        }
    }

    // MARK: pem: PEM key blocks (the block splitting is Latchkey's, the key parsing OpenSSL's)

    static func pem(_ data: Data) {
        do {
            for key in try AsymmetricKey.keys(inPEM: String(decoding: data, as: UTF8.self), passphrase: "fixture p12") {
                precondition(key.applicationLabel.count == 20, "a key without its public half")
            }
        } catch {
            precondition(
                [.decode, .authFailed].contains(error.kind)
                    || (error.kind == .param
                        && (error.reason.contains("of its key derivation") || error.reason.contains("scrypt cost"))),
                "unexpected PEM failure \(error.kind)")
        }
    }

    // MARK: tpm-policy: signed PCR policy files, as `latchkey tpm add-policy` reads them

    /// A file that is not a policy is `errSecDecode`; one that is writes a file that reads as the same policy.
    static func tpmPolicy(_ data: Data) {
        let policy: TPMSignedPolicy
        do throws(KeychainError) {
            policy = try TPMSignedPolicy(fileContents: data)
        } catch {
            precondition(error.status == .decode, "unexpected policy file failure \(error.status)")
            return
        }
        do throws(KeychainError) {
            let again = try TPMSignedPolicy(fileContents: policy.fileContents)
            precondition(again == policy, "a policy's file reads as another")
        } catch {
            preconditionFailure("a policy's own file does not read: \(error.message)")
        }
    }

    // MARK: ssh: what reaches the SSH agent's socket (requests, key blobs, certificates) and OpenSSH key files

    static func ssh(_ data: Data) {
        do {
            if case .add(let added) = try SSHAgentRequest.decode(data) {
                // A key the agent would store is a key whose public half it can list again.
                let blob = added.privateKey.publicKey.blob
                precondition(
                    (try? SSHPublicKey(blob: blob))?.blob == blob,
                    "an added key's public blob does not decode to itself")
            }
        } catch {
            precondition(!error.description.isEmpty, "a refusal without a reason")
        }
        // try? below: refusals are the expected outcome for most inputs; the decoders must only not crash.
        if let key = try? SSHPublicKey(blob: data) {
            precondition(key.blob == data, "a public key blob that decodes to other bytes")
        }
        if SSHCertificate.isCertificate(data) { _ = try? SSHCertificate(blob: data) }
        // The key file without a passphrase: an encrypted file stops before bcrypt_pbkdf (its rounds are the
        // file's, up to the bound, too slow to run per input).
        if let file = try? OpenSSHKeyFile(String(decoding: data, as: UTF8.self)) {
            _ = try? file.privateKey(passphrase: nil)
        }
    }
}
