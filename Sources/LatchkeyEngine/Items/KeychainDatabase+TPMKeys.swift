import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyPKI
internal import LatchkeyTPM

extension KeychainDatabase {
    /// Whether `request` asks for a key the TPM can make: a `kSecAttrTokenIDSecureEnclave` EC P-256 key (the
    /// Secure Enclave's only kind), stored or ephemeral (Apple's ephemeral Secure Enclave keys are inside it
    /// too). Other sizes and types with that token stay keys held in memory where the keychain runs.
    static func suitsTPM(_ request: HeldKeyRequest, token: String) -> Bool {
        token == HeldKeyRequest.secureEnclaveTokenID && request.type == .ellipticCurve && request.bits == 256
    }

    /// Makes a P-256 key inside the TPM: for a TPM-enrolled keychain its own TPM (pinned; a TPM that does
    /// not answer is `errSecNotAvailable`), else the TPM that answers at `TPMAddress.current` — or nil when
    /// none does, and the key is held in memory instead, as on a machine without a Secure Enclave.
    func makeKeyInTPM() throws(KeychainError) -> (stored: Data, publicKey: AsymmetricKey)? {
        let enrollment = try readKeyMeta().tpm
        let made: (TPMKeyObject, Data)
        do {
            made = try TPMKeyGuard.with(pinned: enrollment?.primaryName) { connection throws(TPMError) in
                (try connection.createP256Key(), connection.primaryName)
            }
        } catch  where enrollment == nil && error.reason == "tpm.noTPM" {
            return nil
        }
        let publicKey: AsymmetricKey
        do {
            publicKey = try AsymmetricKey(
                externalRepresentation: made.0.publicPoint, type: .ellipticCurve, isPrivate: false)
        } catch {
            throw KeychainError(.internal, "the TPM's new key is not a P-256 point: \(error.reason)")
        }
        return (HeldKeyData.seal(made.0, primaryName: made.1), publicKey)
    }

    /// Signs, decrypts (ECIES) or derives (ECDH) with the TPM-made key whose stored form is `stored`: the
    /// private step in the TPM that made it (load, use, flush), the rest of Apple's algorithm here.
    func useTPMKey(_ stored: Data, for use: KeyUse) throws(KeychainError) -> Data {
        guard let point = HeldKeyData.publicPart(stored) else {
            throw KeychainError.decode("a held key's data is damaged")
        }
        let publicKey: AsymmetricKey
        do {
            publicKey = try AsymmetricKey(externalRepresentation: point, type: .ellipticCurve, isPrivate: false)
        } catch {
            throw KeychainError.decode("a TPM-made key's public key is not a P-256 point: \(error.reason)")
        }
        let (primaryName, object) = try HeldKeyData.tpmObject(stored)
        switch use {
        case .sign(let algorithm, let data):
            let input = try Self.software { () throws(KeyError) in
                try AsymmetricKey.ecdsaSigningInput(algorithm, data, publicKey: publicKey)
            }
            let (r, s) = try TPMKeyGuard.with(pinned: primaryName) { connection throws(TPMError) in
                try connection.signP256(object, digest: input)
            }
            return try Self.software { () throws(KeyError) in try AsymmetricKey.ecdsaSignature(r: r, s: s, algorithm) }
        case .keyExchange(let algorithm, let peerData, let parameters):
            let peer = try Self.software { () throws(KeyError) in
                try AsymmetricKey.keyExchangePeer(algorithm, peerData: peerData, publicKey: publicKey)
            }
            let shared = try Self.sharedSecret(object, primaryName: primaryName, peer: peer)
            return try Self.software { () throws(KeyError) in
                try AsymmetricKey.keyExchangeResult(algorithm, shared: shared, parameters: parameters)
            }
        case .decrypt(let algorithm, let ciphertext, let parameters):
            let ephemeral = try Self.software { () throws(KeyError) in
                try AsymmetricKey.eciesEphemeralKey(algorithm, ciphertext, publicKey: publicKey)
            }
            let shared = try Self.sharedSecret(object, primaryName: primaryName, peer: ephemeral)
            return try Self.software { () throws(KeyError) in
                try AsymmetricKey.eciesOpen(
                    algorithm, ciphertext, shared: shared, publicKey: publicKey, parameters: parameters)
            }
        }
    }

    /// ECDH in the TPM with `peer`'s point.
    private static func sharedSecret(_ object: TPMSealedObject, primaryName: Data, peer: AsymmetricKey)
        throws(KeychainError) -> SecureBytes
    {
        let point = peer.publicKeyData  // 04 ‖ x ‖ y, uncompressed.
        guard point.count == 65 else { throw KeychainError.param("the peer's key is not an uncompressed P-256 point") }
        return try TPMKeyGuard.with(pinned: primaryName) { connection throws(TPMError) in
            try connection.ecdhP256(
                object, peerX: Data(point.dropFirst().prefix(32)), peerY: Data(point.suffix(32)))
        }
    }

    /// The software steps' failures, as Apple's statuses.
    private static func software<R>(_ body: () throws(KeyError) -> R) throws(KeychainError) -> R {
        do {
            return try body()
        } catch {
            throw KeychainError(error)
        }
    }
}

extension KeychainDatabase {
    /// How many keys the keychain holds live where (`lkst`; keys made before it existed count as software),
    /// for `latchkey doctor`. Reads attributes only: needs the keychain unlocked, asks no user.
    package func heldKeyStorage() throws(KeychainError) -> [KeyStorage: Int] {
        let everything = CallerIdentity(
            applicationIdentifier: "latchkey.doctor", accessGroups: [CallerIdentity.wildcardGroup])
        var counts: [KeyStorage: Int] = [:]
        let keys: [ItemResult]
        do {
            keys = try copyMatching(
                ItemQuery(.key, synchronizable: .any, limit: .all, returning: [.attributes]), caller: everything)
        } catch  where error.status == .itemNotFound {
            return [:]
        }
        for key in keys where key.attributes[.tokenID] != nil {
            let storage = key.attributes[.keyStorage]?.stringValue.flatMap(KeyStorage.init(rawValue:)) ?? .software
            counts[storage, default: 0] += 1
        }
        return counts
    }
}
