/// One of Apple's `SecKeyAlgorithm` values ("algid:sign:ECDSA:message-X962:SHA256", …), understood: which
/// operation, which key type, which padding and which digest.
public struct KeyAlgorithm: RawRepresentable, Hashable, Sendable {
    /// Apple's string.
    public let rawValue: String
    let spec: Spec?

    /// Wraps Apple's string; unknown strings are kept (and supported by no key).
    public init(rawValue: String) {
        self.rawValue = rawValue
        // Apple's strings are looked up (every request through the agent names one); others are parsed.
        self.spec = Self.known[rawValue] ?? Self.parse(rawValue)
    }

    /// Every string `parse` accepts, with what it names: built once from the parts Apple's strings are
    /// made of, so a lookup costs a hash instead of splitting the string.
    static let known: [String: Spec] = {
        let digests = ["SHA1", "SHA224", "SHA256", "SHA384", "SHA512"]
        var candidates = [
            ed25519, "algid:sign:ECDSA:RFC4754", "algid:sign:ECDSA:digest-X962", "algid:sign:RSA:digest-PKCS1v15",
            "algid:encrypt:RSA:PKCS1", "algid:keyexchange:ECDH", "algid:keyexchange:ECDHC",
            "algid:sign:RSA:raw", "algid:encrypt:RSA:raw",
        ]
        for digest in digests {
            let length = Digest(rawValue: digest)?.length ?? 0
            candidates += [
                "algid:sign:ECDSA:digest-X962:\(digest)", "algid:sign:ECDSA:message-X962:\(digest)",
                "algid:sign:RSA:digest-PKCS1v15:\(digest)", "algid:sign:RSA:message-PKCS1v15:\(digest)",
                "algid:sign:RSA:digest-PSS:\(digest):\(digest):\(length)",
                "algid:sign:RSA:message-PSS:\(digest):\(digest):\(length)",
                "algid:encrypt:RSA:OAEP:\(digest)", "algid:encrypt:RSA:OAEP:\(digest):AESGCM",
                "algid:keyexchange:ECDH:KDFX963:\(digest)", "algid:keyexchange:ECDHC:KDFX963:\(digest)",
            ]
            for exchange in ["ECDH", "ECDHC"] {
                for mode in ["AESGCM", "AESGCM-KDFIV"] {
                    candidates.append("algid:encrypt:ECIES:\(exchange):KDFX963:\(digest):\(mode)")
                }
            }
        }
        var table: [String: Spec] = [:]
        for candidate in candidates {
            if let spec = parse(candidate) { table[candidate] = spec }
        }
        return table
    }()

    /// Ed25519 signatures of the message itself (RFC 8032's PureEdDSA): Latchkey's own name, as Apple's
    /// `SecKeyAlgorithm` has none.
    package static let ed25519 = "algid:sign:EdDSA:Ed25519"

    /// The digest an algorithm names.
    enum Digest: String, Sendable {
        case sha1 = "SHA1"
        case sha224 = "SHA224"
        case sha256 = "SHA256"
        case sha384 = "SHA384"
        case sha512 = "SHA512"

        var length: Int {
            switch self {
            case .sha1: 20
            case .sha224: 28
            case .sha256: 32
            case .sha384: 48
            case .sha512: 64
            }
        }
    }

    enum Spec: Sendable, Hashable {
        /// ECDSA: the input is the message (hashed with `digest`) or a digest; X9.62 DER or RFC 4754 r‖s.
        case ecdsa(message: Bool, digest: Digest?, rfc4754: Bool)
        /// RSA PKCS #1 v1.5 signatures; `digest` nil with a digest input: the digest is signed as it is.
        case rsaPKCS1Signature(message: Bool, digest: Digest?)
        /// RSA PSS (MGF1 with the same digest, salt as long as the digest).
        case rsaPSS(message: Bool, digest: Digest)
        /// Raw RSA: the input, as a big-endian number below the modulus, raised to the private exponent
        /// (signing) or the public one (encryption), with no padding.
        case rsaRawSignature
        case rsaRawEncryption
        case rsaPKCS1Encryption
        case rsaOAEP(Digest)
        /// OAEP-wrapped AES key, then AES-GCM.
        case rsaOAEPAESGCM(Digest)
        /// ECIES with the X9.63 KDF and AES-GCM; `variableIV`: the IV comes from the KDF too.
        case ecies(cofactor: Bool, digest: Digest, variableIV: Bool)
        /// ECDH: the raw shared X coordinate, or X9.63 KDF output.
        case ecdh(cofactor: Bool, digest: Digest?)
        /// Ed25519: the message is signed as it is.
        case ed25519

        var operation: KeyOperation {
            switch self {
            case .ecdsa, .rsaPKCS1Signature, .rsaPSS, .rsaRawSignature, .ed25519: .sign
            case .rsaPKCS1Encryption, .rsaOAEP, .rsaOAEPAESGCM, .ecies, .rsaRawEncryption: .encrypt
            case .ecdh: .keyExchange
            }
        }

        var keyType: KeyType {
            switch self {
            case .ecdsa, .ecies, .ecdh: .ellipticCurve
            case .ed25519: .ed25519
            default: .rsa
            }
        }
    }

    static func parse(_ text: String) -> Spec? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0] == "algid" else { return nil }
        switch (parts[1], parts[2]) {
        case ("sign", "EdDSA"):
            return parts.count == 4 && parts[3] == "Ed25519" ? .ed25519 : nil
        case ("sign", "ECDSA"):
            guard parts.count >= 4 else { return nil }
            switch parts[3] {
            case "RFC4754" where parts.count == 4: return .ecdsa(message: false, digest: nil, rfc4754: true)
            case "digest-X962" where parts.count == 4: return .ecdsa(message: false, digest: nil, rfc4754: false)
            case "digest-X962" where parts.count == 5:
                return Digest(rawValue: parts[4]).map { .ecdsa(message: false, digest: $0, rfc4754: false) }
            case "message-X962" where parts.count == 5:
                return Digest(rawValue: parts[4]).map { .ecdsa(message: true, digest: $0, rfc4754: false) }
            default: return nil
            }
        case ("sign", "RSA"):
            guard parts.count >= 4 else { return nil }
            let hash = parts.count > 4 ? Digest(rawValue: parts[4]) : nil
            switch parts[3] {
            case "raw" where parts.count == 4: return .rsaRawSignature
            case "digest-PKCS1v15" where parts.count == 4: return .rsaPKCS1Signature(message: false, digest: nil)
            case "digest-PKCS1v15" where parts.count == 5:
                return hash.map { .rsaPKCS1Signature(message: false, digest: $0) }
            case "message-PKCS1v15" where parts.count == 5:
                return hash.map { .rsaPKCS1Signature(message: true, digest: $0) }
            case "digest-PSS" where parts.count == 7 && parts[4] == parts[5] && Int(parts[6]) == hash?.length:
                return hash.map { .rsaPSS(message: false, digest: $0) }
            case "message-PSS" where parts.count == 7 && parts[4] == parts[5] && Int(parts[6]) == hash?.length:
                return hash.map { .rsaPSS(message: true, digest: $0) }
            default: return nil
            }
        case ("encrypt", "RSA"):
            if parts.count == 4, parts[3] == "PKCS1" { return .rsaPKCS1Encryption }
            if parts.count == 4, parts[3] == "raw" { return .rsaRawEncryption }
            guard parts.count >= 5, parts[3] == "OAEP", let hash = Digest(rawValue: parts[4]) else { return nil }
            if parts.count == 5 { return .rsaOAEP(hash) }
            return parts.count == 6 && parts[5] == "AESGCM" ? .rsaOAEPAESGCM(hash) : nil
        case ("encrypt", "ECIES"):
            guard parts.count == 7, ["ECDH", "ECDHC"].contains(parts[3]), parts[4] == "KDFX963",
                let hash = Digest(rawValue: parts[5]), ["AESGCM", "AESGCM-KDFIV"].contains(parts[6])
            else { return nil }
            let variableIV = parts[6] == "AESGCM-KDFIV"
            if variableIV && hash == .sha1 { return nil }  // Apple defines no SHA-1 variable-IV variant.
            return .ecies(cofactor: parts[3] == "ECDHC", digest: hash, variableIV: variableIV)
        case ("keyexchange", "ECDH"), ("keyexchange", "ECDHC"):
            let cofactor = parts[2] == "ECDHC"
            if parts.count == 3 { return .ecdh(cofactor: cofactor, digest: nil) }
            guard parts.count == 5, parts[3] == "KDFX963", let hash = Digest(rawValue: parts[4]) else { return nil }
            return .ecdh(cofactor: cofactor, digest: hash)
        default:
            return nil
        }
    }
}

/// What a key is asked to do (`SecKeyOperationType`, with Apple's raw values).
public enum KeyOperation: Int, Sendable {
    /// `kSecKeyOperationTypeSign`.
    case sign = 0
    /// `kSecKeyOperationTypeVerify`.
    case verify = 1
    /// `kSecKeyOperationTypeEncrypt`.
    case encrypt = 2
    /// `kSecKeyOperationTypeDecrypt`.
    case decrypt = 3
    /// `kSecKeyOperationTypeKeyExchange`.
    case keyExchange = 4
}
