package import FoundationEssentials
package import LatchkeyCrypto

/// The software half of the operations of an EC P-256 private key that is kept elsewhere — made inside a TPM
/// and never leaving it: what Apple's algorithms do before and after the one step that needs the private key
/// (an ECDSA signature of a 32-byte number, an ECDH shared secret), so such a key answers every algorithm a
/// key in this process does, with the same checks and the same errors. `publicKey` is the key's public half.
extension AsymmetricKey {
    /// The 32 bytes ECDSA signs for `algorithm` over `data`: the message's digest (message algorithms) or the
    /// digest given (digest algorithms, checked for the digest's length), as the number ECDSA uses on P-256 —
    /// a longer digest's leftmost 256 bits, a shorter one with leading zeros (the same number).
    package static func ecdsaSigningInput(_ algorithm: KeyAlgorithm, _ data: Data, publicKey: AsymmetricKey)
        throws(KeyError) -> Data
    {
        let spec = try requireExternal(.sign, algorithm, publicKey: publicKey)
        guard case .ecdsa(let message, let digest, _) = spec else { throw KeyError(.param, "not an ECDSA algorithm") }
        var input = data
        if message {
            guard let digest,
                let hashed = data.withUnsafeBytes({ OpenSSL.digest(digest.rawValue, [$0]) })
            else { throw KeyError(.param, "\(algorithm.rawValue): the message cannot be hashed") }
            input = hashed
        } else if let digest, data.count != digest.length {
            throw KeyError(.param, "a \(digest.rawValue) digest is \(digest.length) bytes, not \(data.count)")
        }
        return input.count >= 32 ? Data(input.prefix(32)) : Data(count: 32 - input.count) + input
    }

    /// The signature `algorithm` gives for ECDSA's `r` and `s` (32 bytes each): X9.62 DER, or r‖s (RFC 4754).
    package static func ecdsaSignature(r: Data, s: Data, _ algorithm: KeyAlgorithm) throws(KeyError) -> Data {
        guard case .ecdsa(_, _, let rfc4754) = algorithm.spec, r.count == 32, s.count == 32 else {
            throw KeyError(.param, "not an ECDSA signature of P-256")
        }
        if rfc4754 { return r + s }
        guard let der = OpenSSL.ecdsaDER(fromRaw: r + s) else {
            throw KeyError(.param, "the signature cannot be put in X9.62 form")
        }
        return der
    }

    /// The peer's public key of a key exchange with `algorithm`, checked: a point of P-256 (its external
    /// representation is `peerData`).
    package static func keyExchangePeer(_ algorithm: KeyAlgorithm, peerData: Data, publicKey: AsymmetricKey)
        throws(KeyError) -> AsymmetricKey
    {
        guard case .ecdh = try requireExternal(.keyExchange, algorithm, publicKey: publicKey) else {
            throw KeyError(.param, "not a key exchange")
        }
        let peer: AsymmetricKey
        do {
            peer = try AsymmetricKey(externalRepresentation: peerData, type: .ellipticCurve, isPrivate: false)
        } catch {
            throw KeyError(.param, "the peer's public key: \(error.reason)")
        }
        guard peer.sizeInBits == publicKey.sizeInBits else {
            throw KeyError(.param, "the peer's key is not on this key's curve")
        }
        return peer
    }

    /// What a key exchange with `algorithm` gives for the ECDH shared secret `shared` (the shared point's x):
    /// the secret itself, or (X9.63 variants) `requestedSize` bytes of X9.63 KDF output with the shared info.
    package static func keyExchangeResult(
        _ algorithm: KeyAlgorithm, shared: SecureBytes, parameters: KeyOperationParameters
    ) throws(KeyError) -> Data {
        guard case .ecdh(_, let digest) = algorithm.spec else { throw KeyError(.param, "not a key exchange") }
        guard let digest else { return shared.withUnsafeBytes { Data($0) } }
        guard let size = parameters.requestedSize else {
            throw KeyError(.param, "kSecKeyKeyExchangeParameterRequestedSize is missing")
        }
        return try x963KDF(digest, secret: shared, sharedInfo: parameters.sharedInfo ?? Data(), count: size)
            .withUnsafeBytes { Data($0) }
    }

    /// ECIES decryption's ephemeral public key (the ciphertext's leading point), checked.
    package static func eciesEphemeralKey(_ algorithm: KeyAlgorithm, _ ciphertext: Data, publicKey: AsymmetricKey)
        throws(KeyError) -> AsymmetricKey
    {
        guard case .ecies = try requireExternal(.decrypt, algorithm, publicKey: publicKey) else {
            throw KeyError(.param, "not an ECIES algorithm")
        }
        let pointLength = publicKey.publicKeyData.count
        guard ciphertext.count >= pointLength + 16 else {
            throw KeyError(.param, "too small input packet for ECIES decrypt")
        }
        do {
            return try AsymmetricKey(
                externalRepresentation: Data(ciphertext.prefix(pointLength)), type: .ellipticCurve, isPrivate: false)
        } catch {
            throw KeyError(.param, "ECIES: the ephemeral key is not a point of this curve")
        }
    }

    /// ECIES decryption once ECDH with the ephemeral key gave `shared`: Apple's X9.63 KDF (the ephemeral key,
    /// then the caller's shared info) and AES-GCM, as `decrypt` does.
    package static func eciesOpen(
        _ algorithm: KeyAlgorithm, _ ciphertext: Data, shared: SecureBytes, publicKey: AsymmetricKey,
        parameters: KeyOperationParameters
    ) throws(KeyError) -> Data {
        guard case .ecies(_, let digest, let variableIV) = algorithm.spec else {
            throw KeyError(.param, "not an ECIES algorithm")
        }
        var keyLength = publicKey.sizeInBits > 256 ? 32 : 16
        if let bits = parameters.symmetricKeySizeInBits {
            guard [128, 192, 256].contains(bits) else {
                throw KeyError(.param, "Bad requested kSecKeyEncryptionParameterSymmetricKeySizeInBits: \(bits)")
            }
            keyLength = bits / 8
        }
        let pointLength = publicKey.publicKeyData.count
        let derived = try x963KDF(
            digest, secret: shared,
            sharedInfo: Data(ciphertext.prefix(pointLength)) + (parameters.sharedInfo ?? Data()),
            count: keyLength + (variableIV ? 16 : 0))
        let (key, iv) = derived.withUnsafeBytes { raw in
            (
                SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw.prefix(keyLength))),
                variableIV ? Array(raw.suffix(16)) : zeroIV
            )
        }
        let body = ciphertext.dropFirst(pointLength)
        guard
            let plaintext = OpenSSL.aesGCMOpen(
                key: key, iv: iv, aad: parameters.additionalAuthenticatedData, ciphertext: Data(body.dropLast(16)),
                tag: Data(body.suffix(16)))
        else { throw KeyError(.param, "ECIES: Failed to aes-gcm decrypt data") }
        return plaintext
    }

    /// The algorithm's spec when a P-256 private key can do `operation` with it.
    private static func requireExternal(_ operation: KeyOperation, _ algorithm: KeyAlgorithm, publicKey: AsymmetricKey)
        throws(KeyError) -> KeyAlgorithm.Spec
    {
        guard let spec = algorithm.spec, publicKey.type == .ellipticCurve, publicKey.sizeInBits == 256,
            supports(operation, algorithm, type: .ellipticCurve, isPrivate: true)
        else {
            throw KeyError(
                .param, "\(algorithm.rawValue) is not supported by this EC private key, 256 bits for \(operation)")
        }
        return spec
    }
}
