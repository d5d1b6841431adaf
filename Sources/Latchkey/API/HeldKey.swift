public import FoundationEssentials
public import LatchkeyEngine
public import LatchkeyPKI
import LatchkeyPOSIX

/// A private key the keychain holds and never hands out (Apple's token keys, `kSecAttrTokenID`; made by
/// `KeychainService.createHeldKey` or `SecKeyCreateRandomKey` with a token): this process has its public
/// half and its persistent reference, and signs, decrypts and derives by asking the service that holds it —
/// `latchkeyd`, when the agent serves the keychain, so the key's bytes never enter this process. Verifying
/// and encrypting use the public half here.
///
/// ```swift
/// let signature = try held.sign(KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256"), Data("hello".utf8))
/// try held.publicKey.verify(KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256"), Data("hello".utf8), signature: signature)
/// ```
public final class HeldKey: Sendable, Hashable, CustomStringConvertible {
    /// The public half.
    public let publicKey: AsymmetricKey
    /// The persistent reference of the private key's item: what names it to the service.
    public let persistentReference: Data
    /// The token that holds it (`kSecAttrTokenID`).
    public let tokenID: String
    /// Where it lives (`lkst`): inside the TPM, or in memory where the keychain runs.
    public let storage: KeyStorage
    /// The service that holds it.
    let service: any KeychainService
    /// The process that made this handle: a forked child's copy of it releases nothing when it goes (the
    /// parent may still be using the key).
    private let process = CurrentProcess.id

    /// A held key's handle, from a search result (whose data is its public key).
    init(
        publicKey: AsymmetricKey, persistentReference: Data, tokenID: String, storage: KeyStorage = .software,
        service: any KeychainService
    ) {
        self.publicKey = publicKey
        self.persistentReference = persistentReference
        self.tokenID = tokenID
        self.storage = storage
        self.service = service
    }

    /// The handle of the held key a search or add result describes (its data the public key, its attributes
    /// with `kcls`, `type` and `tkid`): `errSecDecode` when the result is not one.
    package convenience init(result: ItemResult, service: any KeychainService) throws(KeychainError) {
        guard let token = result.attributes[.tokenID]?.stringValue else {
            throw KeychainError.decode("the key is not one the keychain holds")
        }
        var attributes = result.attributes
        attributes[.keyClass] = .number(0)
        self.init(
            publicKey: try KeyAttributes.key(data: result.data ?? Data(), attributes: attributes),
            persistentReference: result.persistentReference, tokenID: token,
            // Keys made before `lkst` existed were all held in software.
            storage: result.attributes[.keyStorage]?.stringValue.flatMap(KeyStorage.init(rawValue:)) ?? .software,
            service: service)
    }

    /// An ephemeral key (made without `kSecAttrIsPermanent`) goes when its last handle in this program does,
    /// as Apple frees a non-permanent key when its `SecKey` is released — asked for here and sent right after,
    /// off this thread (`HeldKeyReleases`), so dropping a key never waits for the agent.
    deinit {
        guard EphemeralKeyHandle.isHandle(persistentReference), CurrentProcess.id == process else { return }
        HeldKeyReleases.release(persistentReference, in: service)
    }

    /// The key's type.
    public var type: KeyType { publicKey.type }
    /// Its size in bits.
    public var sizeInBits: Int { publicKey.sizeInBits }
    /// `kSecAttrApplicationLabel`: SHA-1 of the public key.
    public var applicationLabel: Data { publicKey.applicationLabel }

    /// `SecKeyIsAlgorithmSupported` for the private key.
    public func supports(_ operation: KeyOperation, _ algorithm: KeyAlgorithm) -> Bool {
        AsymmetricKey.supports(operation, algorithm, type: type, isPrivate: true)
    }

    /// Signs `data` (the message, or its digest for the digest algorithms) where the key is held.
    public func sign(_ algorithm: KeyAlgorithm, _ data: Data) throws(KeychainError) -> Data {
        try service.useHeldKey(persistentReference, for: .sign(algorithm, data))
    }

    /// Decrypts `ciphertext` where the key is held.
    public func decrypt(
        _ algorithm: KeyAlgorithm, _ ciphertext: Data, parameters: KeyOperationParameters = KeyOperationParameters()
    )
        throws(KeychainError) -> Data
    {
        try service.useHeldKey(persistentReference, for: .decrypt(algorithm, ciphertext, parameters))
    }

    /// ECDH of the held key with `peer`'s public key, where the key is held.
    public func keyExchange(
        _ algorithm: KeyAlgorithm, with peer: AsymmetricKey,
        parameters: KeyOperationParameters = KeyOperationParameters()
    )
        throws(KeychainError) -> Data
    {
        try service.useHeldKey(
            persistentReference, for: .keyExchange(algorithm, peerPublicKey: peer.publicKeyData, parameters))
    }

    /// The same item and the same public key.
    public static func == (left: HeldKey, right: HeldKey) -> Bool {
        left.persistentReference == right.persistentReference && left.publicKey == right.publicKey
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(persistentReference)
        hasher.combine(publicKey)
    }

    /// `EC private key, 256 bits, held by com.latchkey.agent` (`…, in the TPM` for a key made there): never
    /// key material.
    public var description: String {
        "\(type.name) private key, \(sizeInBits) bits, held by \(tokenID)\(storage == .tpm ? ", in the TPM" : "")"
    }
}
