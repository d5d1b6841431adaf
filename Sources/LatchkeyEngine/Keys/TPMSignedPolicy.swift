package import FoundationEssentials
internal import LatchkeyCrypto
package import LatchkeyPKI
internal import LatchkeyTPM

/// A signed PCR policy: the SHA-256 PCR values a machine is expected to measure (the firmware, shim and
/// kernel of an update about to be installed), the TPM2_PolicyPCR digest of those values, and the policy
/// key's ECDSA P-256 signature over it. A keychain enrolled with `--policy-key` opens unattended while
/// its PCRs hold the values of a signed policy it has been given (TPM2_PolicyAuthorize), so an expected
/// update needs no recovery: the key's owner signs the new values before the machine boots them.
///
/// The file (`latchkey tpm sign-policy` writes it, `latchkey tpm add-policy` reads it) is JSON:
///
/// ```json
/// {
///   "format" : "latchkey-tpm-pcr-policy/1",
///   "key" : "sha256:<SHA-256 of the policy key's SubjectPublicKeyInfo DER, hex>",
///   "pcrs" : { "7" : "<the expected SHA-256 value, hex>" },
///   "policy" : "<TPM2_PolicyPCR digest of those values, hex>",
///   "signature" : "<ECDSA P-256 r ‖ s over SHA-256(policy ‖ \"latchkey/v1/pcr-policy\"), base64>"
/// }
/// ```
package struct TPMSignedPolicy: Sendable, Equatable {
    /// The expected SHA-256 PCR values, by PCR number.
    package let pcrValues: [Int: Data]
    /// The approved policy: TPM2_PolicyPCR's digest over those values (`TPMPolicyDigest.pcr`).
    package let policyDigest: Data
    /// SHA-256 of the signer's public key (its SubjectPublicKeyInfo DER, as `openssl pkey -pubin -outform
    /// DER | sha256sum` prints it).
    package let keyFingerprint: Data
    /// The ECDSA signature, r ‖ s (32 bytes each).
    let signature: Data

    /// The file's `format`.
    static let format = "latchkey-tpm-pcr-policy/1"

    /// The PCR numbers the policy covers, ascending.
    package var pcrs: [Int] { pcrValues.keys.sorted() }

    var pcrMask: UInt32 { TPMPolicyDigest.mask(pcrValues.keys) }

    init(pcrValues: [Int: Data], policyDigest: Data, keyFingerprint: Data, signature: Data) {
        self.pcrValues = pcrValues
        self.policyDigest = policyDigest
        self.keyFingerprint = keyFingerprint
        self.signature = signature
    }

    /// Signs a policy for the SHA-256 PCR values `pcrValues` (PCR numbers 0 to 23, 32-byte values) with
    /// `key`, a P-256 private key. `errSecParam` for any other key or a value that is not 32 bytes.
    package static func sign(pcrValues: [Int: Data], key: AsymmetricKey) throws(KeychainError) -> TPMSignedPolicy {
        guard key.isPrivate, key.type == .ellipticCurve, key.sizeInBits == 256 else {
            throw KeychainError.param("a policy is signed with an EC P-256 private key")
        }
        guard !pcrValues.isEmpty, pcrValues.keys.allSatisfy({ (0..<24).contains($0) }) else {
            throw KeychainError.param("PCRs are numbers from 0 to 23, at least one")
        }
        guard let digest = TPMPolicyDigest.pcr(mask: TPMPolicyDigest.mask(pcrValues.keys), values: pcrValues) else {
            throw KeychainError.param("a SHA-256 PCR value is 32 bytes (64 hexadecimal digits)")
        }
        let signature: Data
        do {
            signature = try key.sign(
                KeyAlgorithm(rawValue: "algid:sign:ECDSA:RFC4754"), TPMPolicyDigest.approval(of: digest))
        } catch {
            throw KeychainError(.internal, "the policy could not be signed: \(error.reason)")
        }
        return TPMSignedPolicy(
            pcrValues: pcrValues, policyDigest: digest, keyFingerprint: try TPMPolicyKey(key).fingerprint,
            signature: signature)
    }

    /// The SHA-256 values the TPM's PCRs `pcrs` hold now (the TPM `LATCHKEY_TPM_TCTI` names), for signing a
    /// policy for this machine as it is. `errSecNotAvailable` when no TPM answers (a signer's machine has
    /// none: give the expected values instead).
    package static func currentPCRValues(_ pcrs: [Int]) throws(KeychainError) -> [Int: Data] {
        guard !pcrs.isEmpty, pcrs.allSatisfy({ (0..<24).contains($0) }) else {
            throw KeychainError.param("PCRs are numbers from 0 to 23, at least one")
        }
        do {
            let connection = try TPMConnection(address: TPMAddress.current)
            defer { connection.close() }
            return try connection.readPCRs(mask: TPMPolicyDigest.mask(pcrs))
        } catch  where error.kind == .noTPM {
            throw KeychainError(
                .notAvailable,
                "\(error.detail), so the present PCR values cannot be read; give the expected ones (--pcr n=HEX)",
                reason: "tpm.noTPM")
        } catch {
            throw TPMGuard.keychainError(error)
        }
    }

    /// SHA-256 of `key`'s public half as a SubjectPublicKeyInfo DER (what `key` in a policy file holds and
    /// `tpm status` shows). `errSecParam` for a key that is not EC P-256.
    package static func fingerprint(of key: AsymmetricKey) throws(KeychainError) -> Data {
        try TPMPolicyKey(key).fingerprint
    }

    /// Whether the signature is the ECDSA signature of `key` over this policy (checked in software; the
    /// TPM checks it again at every unattended unlock).
    func isSigned(by key: TPMPolicyKey) -> Bool {
        guard signature.count == 64, keyFingerprint == key.fingerprint else { return false }
        do {
            try key.key.verify(
                KeyAlgorithm(rawValue: "algid:sign:ECDSA:RFC4754"), TPMPolicyDigest.approval(of: policyDigest),
                signature: signature)
            return true
        } catch {
            return false  // Any failure to verify is a signature that is not the key's.
        }
    }

    // MARK: The file

    private struct File: Codable {
        var format: String
        var key: String
        var pcrs: [String: String]
        var policy: String
        var signature: String
    }

    /// Reads a policy file. `errSecDecode` when it is not one (not JSON, another format, a field missing or
    /// of the wrong size, or a policy digest that is not the digest of its PCR values).
    package init(fileContents: Data) throws(KeychainError) {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: fileContents)
        } catch {
            throw KeychainError.decode(
                "the signed policy is not a Latchkey PCR policy file (JSON with format, key, pcrs, policy and signature)"
            )
        }
        guard file.format == Self.format else {
            throw KeychainError.decode("the signed policy's format is '\(file.format)', not \(Self.format)")
        }
        var values: [Int: Data] = [:]
        for (name, hex) in file.pcrs {
            guard let index = Int(name), (0..<24).contains(index), let value = Hex.decode(hex), value.count == 32 else {
                throw KeychainError.decode(
                    "the signed policy's pcrs map PCR numbers (0 to 23) to SHA-256 values (64 hexadecimal digits)")
            }
            values[index] = Data(value)
        }
        guard !values.isEmpty,
            let computed = TPMPolicyDigest.pcr(mask: TPMPolicyDigest.mask(values.keys), values: values)
        else { throw KeychainError.decode("the signed policy names no PCR") }
        guard file.key.hasPrefix("sha256:"), let fingerprint = Hex.decode(file.key.dropFirst(7)),
            fingerprint.count == 32
        else { throw KeychainError.decode("the signed policy's key is not sha256:<64 hexadecimal digits>") }
        guard let signature = Data(base64Encoded: file.signature), signature.count == 64 else {
            throw KeychainError.decode("the signed policy's signature is not 64 bytes (r ‖ s) in base64")
        }
        guard let digest = Hex.decode(file.policy), Data(digest) == computed else {
            throw KeychainError.decode("the signed policy's digest is not the TPM2_PolicyPCR digest of its PCR values")
        }
        self.init(pcrValues: values, policyDigest: computed, keyFingerprint: Data(fingerprint), signature: signature)
    }

    /// The policy file (JSON, keys sorted, one field a line).
    package var fileContents: Data {
        let file = File(
            format: Self.format, key: "sha256:" + Hex.encode(keyFingerprint),
            pcrs: Dictionary(uniqueKeysWithValues: pcrValues.map { (String($0.key), Hex.encode($0.value)) }),
            policy: Hex.encode(policyDigest), signature: signature.base64EncodedString())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(file) + Data("\n".utf8)
        } catch {
            preconditionFailure("strings always encode as JSON")  // A struct of strings cannot fail to encode.
        }
    }

    // MARK: In the enrollment record

    /// The PCR mask (4 bytes, little-endian), the values in ascending PCR order (32 bytes each), the
    /// digest, the key's fingerprint and the signature (fields).
    func append(to writer: inout ByteWriter) {
        writer.append(pcrMask)
        for index in pcrs { writer.appendRaw(pcrValues[index] ?? Data()) }
        writer.appendField(policyDigest)
        writer.appendField(keyFingerprint)
        writer.appendField(signature)
    }

    static func read(from reader: inout ByteReader) throws -> TPMSignedPolicy {
        let mask = try reader.readUInt32()
        guard mask != 0, mask < 1 << 24 else { throw ByteReader.Truncated() }
        var values: [Int: Data] = [:]
        for index in TPMPolicyDigest.pcrs(mask) { values[index] = try reader.readRaw(32) }
        return TPMSignedPolicy(
            pcrValues: values, policyDigest: try reader.readField(), keyFingerprint: try reader.readField(),
            signature: try reader.readField())
    }
}

/// The P-256 public key that signs an unattended unlock's PCR policies, as the enrollment keeps it (its
/// X9.63 point `04 ‖ x ‖ y`).
struct TPMPolicyKey: Equatable {
    /// `04 ‖ x ‖ y`, 65 bytes.
    let point: Data
    let key: AsymmetricKey
    /// SHA-256 of its SubjectPublicKeyInfo DER.
    let fingerprint: Data

    /// The public half of `key`, an EC P-256 key. `errSecParam` for any other.
    init(_ key: AsymmetricKey) throws(KeychainError) {
        guard key.type == .ellipticCurve, key.sizeInBits == 256 else {
            throw KeychainError.param("a policy key is an EC P-256 key (openssl ecparam -name prime256v1 -genkey)")
        }
        let publicKey = key.publicKey
        point = publicKey.publicKeyData
        self.key = publicKey
        let pem: String
        do {
            pem = try publicKey.publicKeyPEM()
        } catch {
            throw KeychainError(.internal, "the policy key cannot be encoded: \(error.reason)")
        }
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        fingerprint = MessageDigest.sha256.hash(Data(base64Encoded: body) ?? Data())
    }

    /// The key of a stored point; nil when it is not a P-256 point.
    init?(point: Data) {
        // Either failure means the stored bytes are no P-256 point: nil is the answer, not an error to pass on.
        guard point.count == 65,
            let key = try? AsymmetricKey(externalRepresentation: point, type: .ellipticCurve, isPrivate: false),
            let made = try? TPMPolicyKey(key)
        else { return nil }  // A point that does not load: the caller reports a malformed enrollment.
        self = made
    }

    var x: Data { point.dropFirst().prefix(32) }
    var y: Data { point.suffix(32) }

    static func == (lhs: TPMPolicyKey, rhs: TPMPolicyKey) -> Bool { lhs.point == rhs.point }
}
