public import FoundationEssentials
public import LatchkeyPKI

/// A private key to make and keep in the keychain (Apple's token keys, `kSecAttrTokenID`; the Secure Enclave
/// on Apple hardware): it is generated where the keychain runs — inside `latchkeyd` when the agent serves
/// the keychain — stored there, and used there. Its private half is never handed out: searches give its
/// public key as its data, backups leave it behind, and callers sign, decrypt and derive with `KeyUse`.
///
/// ```swift
/// let request = HeldKeyRequest(type: .ellipticCurve, bits: 256,
///                              attributes: [.applicationTag: .data(Data("com.example.signing".utf8))])
/// ```
public struct HeldKeyRequest: Sendable, Hashable, CustomStringConvertible {
    /// `kSecAttrTokenIDSecureEnclave`: Apple's token, accepted as the keychain's own (Latchkey has no Secure
    /// Enclave; the agent process plays its part).
    public static let secureEnclaveTokenID = "com.apple.setoken"
    /// The token of keys made with `kSecAttrIsExtractable` false and no `kSecAttrTokenID`.
    public static let latchkeyTokenID = "com.latchkey.agent"
    /// The token identifiers a held key may name.
    public static let tokenIDs: Set<String> = [secureEnclaveTokenID, latchkeyTokenID]

    /// The key's type.
    public var type: KeyType
    /// Its size: 256, 384 or 521 for EC; 1024 to 8192 for RSA.
    public var bits: Int
    /// The private key item's attributes (label, application tag, access group, accessibility — a
    /// `…ThisDeviceOnly` one, `kSecAttrAccessibleWhenUnlockedThisDeviceOnly` by default — access control,
    /// and `tkid`, `com.latchkey.agent` by default). The key's own attributes (`kcls`, `type`, `bsiz`,
    /// `klbl`, the usage flags) are derived.
    public var attributes: [AttributeKey: AttributeValue]
    /// Whether the key is stored (`kSecAttrIsPermanent`). An ephemeral one (false) is kept in memory where
    /// the keychain runs, for the program that made it, until it is released (`releaseHeldKey`, or its last
    /// `HeldKey` going), the process that made it ends, the keychain locks, or 256 newer ones push it out; its
    /// reference is a handle, not an item's.
    public var isPermanent: Bool

    /// A request.
    public init(type: KeyType, bits: Int, attributes: [AttributeKey: AttributeValue] = [:], isPermanent: Bool = true) {
        self.type = type
        self.bits = bits
        self.attributes = attributes
        self.isPermanent = isPermanent
    }

    /// Type, size, permanence and attribute names; never values.
    public var description: String {
        "HeldKeyRequest(\(type.name) \(bits) bits\(isPermanent ? "" : ", ephemeral"), attributes: \(attributes.keys.sorted()))"
    }
}

/// Where a key the keychain holds lives: its `lkst` attribute (`AttributeKey.keyStorage`), a Latchkey
/// extension that `SecKeyCopyAttributes`, `latchkey doctor` and the key listings report.
public enum KeyStorage: String, Sendable, Hashable {
    /// Made inside the TPM and never out of it: the item holds the TPM's wrapped object.
    case tpm
    /// Held in memory where the keychain runs (`latchkeyd`, or this process), stored encrypted in the item.
    case software
}

/// What a key held by the keychain is asked to do: the operations that need its private half.
public enum KeyUse: Sendable, Hashable, CustomStringConvertible {
    /// `SecKeyCreateSignature`: signs the message (or digest, for the digest algorithms).
    case sign(KeyAlgorithm, Data)
    /// `SecKeyCreateDecryptedData`, with the options of the encryption (ECIES's key size and AAD).
    case decrypt(KeyAlgorithm, Data, KeyOperationParameters)
    /// `SecKeyCopyKeyExchangeResult` with the peer's public key (its external representation).
    case keyExchange(KeyAlgorithm, peerPublicKey: Data, KeyOperationParameters)

    /// The operation.
    public var operation: KeyOperation {
        switch self {
        case .sign: .sign
        case .decrypt: .decrypt
        case .keyExchange: .keyExchange
        }
    }

    /// The algorithm.
    public var algorithm: KeyAlgorithm {
        switch self {
        case .sign(let algorithm, _), .decrypt(let algorithm, _, _), .keyExchange(let algorithm, _, _): algorithm
        }
    }

    /// The operation and algorithm; never the data.
    public var description: String { "KeyUse(\(operation), \(algorithm.rawValue))" }
}
