public import FoundationEssentials
import LatchkeyCrypto

/// Options of encryption and key exchange (`SecKeyCreateEncryptedData`'s and `SecKeyCopyKeyExchangeResult`'s
/// parameter dictionaries).
public struct KeyOperationParameters: Sendable, Hashable {
    /// `kSecKeyKeyExchangeParameterRequestedSize`: the bytes an X9.63 key exchange derives.
    public var requestedSize: Int?
    /// `kSecKeyKeyExchangeParameterSharedInfo`: the X9.63 KDF's shared info (ECIES appends it to the
    /// ephemeral key).
    public var sharedInfo: Data?
    /// `kSecKeyEncryptionParameterSymmetricKeySizeInBits`: ECIES's AES key size (128, 192 or 256).
    public var symmetricKeySizeInBits: Int?
    /// `kSecKeyEncryptionParameterSymmetricAAD`: additional authenticated data for ECIES's AES-GCM.
    public var additionalAuthenticatedData: Data?

    /// Creates a set of options (none by default).
    public init(
        requestedSize: Int? = nil, sharedInfo: Data? = nil, symmetricKeySizeInBits: Int? = nil,
        additionalAuthenticatedData: Data? = nil
    ) {
        self.requestedSize = requestedSize
        self.sharedInfo = sharedInfo
        self.symmetricKeySizeInBits = symmetricKeySizeInBits
        self.additionalAuthenticatedData = additionalAuthenticatedData
    }
}

extension AsymmetricKey {
    /// `SecKeyIsAlgorithmSupported`: whether this key can do `operation` with `algorithm` (signing,
    /// decryption and key exchange need the private key; verifying and encryption take either).
    public func supports(_ operation: KeyOperation, _ algorithm: KeyAlgorithm) -> Bool {
        Self.supports(operation, algorithm, type: type, isPrivate: isPrivate)
    }

    /// Whether a key of `type`, private or public, can do `operation` with `algorithm`.
    public static func supports(_ operation: KeyOperation, _ algorithm: KeyAlgorithm, type: KeyType, isPrivate: Bool)
        -> Bool
    {
        guard let spec = algorithm.spec, spec.keyType == type else { return false }
        switch (operation, spec.operation) {
        case (.sign, .sign), (.decrypt, .encrypt), (.keyExchange, .keyExchange): return isPrivate
        case (.verify, .sign), (.encrypt, .encrypt): return true
        default: return false
        }
    }

    private func require(_ operation: KeyOperation, _ algorithm: KeyAlgorithm) throws(KeyError) -> KeyAlgorithm.Spec {
        guard let spec = algorithm.spec, supports(operation, algorithm) else {
            throw KeyError(.param, "\(algorithm.rawValue) is not supported by this \(description) for \(operation)")
        }
        return spec
    }

    /// `SecKeyCreateSignature`: signs `data` (the message, or its digest for the digest algorithms).
    public func sign(_ algorithm: KeyAlgorithm, _ data: Data) throws(KeyError) -> Data {
        let spec = try require(.sign, algorithm)
        if case .rsaRawSignature = spec {
            guard
                let signature = OpenSSL.sign(
                    handle, input: try rawBlock(data), digest: nil, hashed: true, padding: RSAPadding.none)
            else {
                throw KeyError(.param, "\(algorithm.rawValue): the input is not below the modulus")
            }
            return signature
        }
        let plan = try signingPlan(spec, input: data)
        guard
            var signature = OpenSSL.sign(
                handle, input: data, digest: plan.digest, hashed: plan.hashed, padding: plan.padding)
        else {
            throw KeyError(.param, "\(algorithm.rawValue): OpenSSL could not sign")
        }
        if case .ecdsa(_, _, true) = spec {
            guard let raw = OpenSSL.ecdsaRaw(fromDER: signature, size: (sizeInBits + 7) / 8) else {
                throw KeyError(.param, "the signature cannot be put in RFC 4754 form")
            }
            signature = raw
        }
        return signature
    }

    /// `SecKeyVerifySignature`: nothing when `signature` is right, `errSecVerifyFailed` when it is not.
    public func verify(_ algorithm: KeyAlgorithm, _ data: Data, signature: Data) throws(KeyError) {
        let spec = try require(.verify, algorithm)
        if case .rsaRawSignature = spec {
            // As SecKeyAdaptors.m: the public operation on the signature, its leading zero bytes skipped, must
            // be the input exactly.
            guard let opened = OpenSSL.rsaEncrypt(publicKey.handle, try rawBlock(signature), padding: RSAPadding.none)
            else {
                throw KeyError(.param, "\(algorithm.rawValue): the signature is not below the modulus")
            }
            guard Data(opened.drop { $0 == 0 }) == data else {
                throw KeyError(.verifyFailed, "RSA signature verification failed, no match")
            }
            return
        }
        let plan = try signingPlan(spec, input: data)
        var der: Data? = signature
        if case .ecdsa(_, _, true) = spec {
            der = signature.count == 2 * ((sizeInBits + 7) / 8) ? OpenSSL.ecdsaDER(fromRaw: signature) : nil
        }
        guard let der,
            OpenSSL.verify(
                handle, input: data, signature: der, digest: plan.digest, hashed: plan.hashed, padding: plan.padding)
        else { throw KeyError(.verifyFailed, "\(algorithm.rawValue): the signature does not verify") }
    }

    private func signingPlan(_ spec: KeyAlgorithm.Spec, input: Data) throws(KeyError)
        -> (digest: String?, hashed: Bool, padding: RSAPadding?)
    {
        func checkDigest(_ digest: KeyAlgorithm.Digest?) throws(KeyError) {
            if let digest, input.count != digest.length {
                throw KeyError(.param, "a \(digest.rawValue) digest is \(digest.length) bytes, not \(input.count)")
            }
        }
        switch spec {
        case .ecdsa(let message, let digest, _):
            if message { return (digest?.rawValue, false, nil) }
            try checkDigest(digest)
            return (nil, true, nil)
        case .rsaPKCS1Signature(let message, let digest):
            if message { return (digest?.rawValue, false, .pkcs1) }
            try checkDigest(digest)
            return (digest?.rawValue, true, .pkcs1)
        case .rsaPSS(let message, let digest):
            if !message { try checkDigest(digest) }
            return (digest.rawValue, !message, .pss(saltLength: digest.length))
        case .ed25519:
            return (nil, false, nil)
        default:
            throw KeyError(.param, "not a signature algorithm")
        }
    }

    /// `SecKeyCreateEncryptedData`, with the public key (or the public half of a private one).
    public func encrypt(
        _ algorithm: KeyAlgorithm, _ plaintext: Data, parameters: KeyOperationParameters = KeyOperationParameters()
    )
        throws(KeyError) -> Data
    {
        let spec = try require(.encrypt, algorithm)
        let recipient = publicKey
        switch spec {
        case .rsaRawEncryption:
            guard
                let ciphertext = OpenSSL.rsaEncrypt(recipient.handle, try rawBlock(plaintext), padding: RSAPadding.none)
            else {
                throw KeyError(.param, "\(algorithm.rawValue): the plaintext is not below the modulus")
            }
            return ciphertext
        case .rsaPKCS1Encryption, .rsaOAEP:
            let padding: RSAPadding =
                if case .rsaOAEP(let digest) = spec { .oaep(digest: digest.rawValue) } else { .pkcs1 }
            guard let ciphertext = OpenSSL.rsaEncrypt(recipient.handle, plaintext, padding: padding) else {
                throw KeyError(.param, "\(algorithm.rawValue): the plaintext is too long for this key")
            }
            return ciphertext
        case .rsaOAEPAESGCM(let digest):
            let sessionKey = SecureBytes(randomCount: sizeInBits >= 4096 ? 32 : 16, lifetime: .transient)
            guard
                let wrapped = sessionKey.withUnsafeBytes({
                    OpenSSL.rsaEncrypt(recipient.handle, Data($0), padding: .oaep(digest: digest.rawValue))
                }),
                let sealed = OpenSSL.aesGCMSeal(
                    key: sessionKey, iv: Self.zeroIV, aad: recipient.publicKeyData, plaintext: plaintext)
            else { throw KeyError(.param, "RSA-WRAP: failed to encrypt") }
            return wrapped + sealed.ciphertext + sealed.tag
        case .ecies(_, let digest, let variableIV):
            let ephemeral = try AsymmetricKey.generate(.ellipticCurve, bits: sizeInBits)
            let material = try eciesKey(
                digest: digest, variableIV: variableIV, ephemeralPublic: ephemeral.publicKeyData,
                privateKey: ephemeral, peer: recipient, parameters: parameters)
            guard
                let sealed = OpenSSL.aesGCMSeal(
                    key: material.key, iv: material.iv, aad: parameters.additionalAuthenticatedData,
                    plaintext: plaintext)
            else { throw KeyError(.param, "ECIES: Failed to aes-gcm encrypt data") }
            return ephemeral.publicKeyData + sealed.ciphertext + sealed.tag
        default:
            throw KeyError(.param, "not an encryption algorithm")
        }
    }

    /// `SecKeyCreateDecryptedData`, with the private key. A ciphertext that does not authenticate or unpad
    /// is `errSecParam`, as on Apple's platforms.
    public func decrypt(
        _ algorithm: KeyAlgorithm, _ ciphertext: Data, parameters: KeyOperationParameters = KeyOperationParameters()
    )
        throws(KeyError) -> Data
    {
        let spec = try require(.decrypt, algorithm)
        switch spec {
        case .rsaRawEncryption:
            guard let plaintext = OpenSSL.rsaDecrypt(handle, try rawBlock(ciphertext), padding: RSAPadding.none) else {
                throw KeyError(.param, "\(algorithm.rawValue): the ciphertext is not below the modulus")
            }
            return plaintext.withUnsafeBytes { Data($0) }
        case .rsaPKCS1Encryption, .rsaOAEP:
            let padding: RSAPadding =
                if case .rsaOAEP(let digest) = spec { .oaep(digest: digest.rawValue) } else { .pkcs1 }
            guard ciphertext.count == blockSize else {
                throw KeyError(.param, "\(algorithm.rawValue): the ciphertext is not \(blockSize) bytes")
            }
            guard let plaintext = OpenSSL.rsaDecrypt(handle, ciphertext, padding: padding) else {
                // Apple's message (SecKeyAdaptors.m), with corecrypto's CCRSA_PRIVATE_OP_ERROR: the padding
                // check failed, which is all that may be said.
                throw KeyError(.param, "RSAdecrypt wrong input (err -27)")
            }
            return plaintext.withUnsafeBytes { Data($0) }
        case .rsaOAEPAESGCM(let digest):
            guard ciphertext.count >= blockSize + 16 else { throw KeyError(.param, "RSA-WRAP too short input data") }
            guard
                let sessionKey = OpenSSL.rsaDecrypt(
                    handle, Data(ciphertext.prefix(blockSize)), padding: .oaep(digest: digest.rawValue)),
                sessionKey.count == (sizeInBits >= 4096 ? 32 : 16)
            else { throw KeyError(.param, "RSA-WRAP bad ciphertext, unexpected session key size") }
            let body = ciphertext.dropFirst(blockSize)
            guard
                let plaintext = OpenSSL.aesGCMOpen(
                    key: sessionKey, iv: Self.zeroIV, aad: publicKeyData,
                    ciphertext: Data(body.dropLast(16)), tag: Data(body.suffix(16)))
            else { throw KeyError(.param, "RSA-WRAP: Failed to aes-gcm decrypt data") }
            return plaintext
        case .ecies(_, let digest, let variableIV):
            let pointLength = publicKeyData.count
            guard ciphertext.count >= pointLength + 16 else {
                throw KeyError(.param, "too small input packet for ECIES decrypt")
            }
            let ephemeralData = Data(ciphertext.prefix(pointLength))
            let ephemeral: AsymmetricKey
            do {
                ephemeral = try AsymmetricKey(
                    externalRepresentation: ephemeralData, type: .ellipticCurve, isPrivate: false)
            } catch {
                throw KeyError(.param, "ECIES: the ephemeral key is not a point of this curve")
            }
            let material = try eciesKey(
                digest: digest, variableIV: variableIV, ephemeralPublic: ephemeralData,
                privateKey: self, peer: ephemeral, parameters: parameters)
            let body = ciphertext.dropFirst(pointLength)
            guard
                let plaintext = OpenSSL.aesGCMOpen(
                    key: material.key, iv: material.iv, aad: parameters.additionalAuthenticatedData,
                    ciphertext: Data(body.dropLast(16)), tag: Data(body.suffix(16)))
            else { throw KeyError(.param, "ECIES: Failed to aes-gcm decrypt data") }
            return plaintext
        default:
            throw KeyError(.param, "not an encryption algorithm")
        }
    }

    /// `SecKeyCopyKeyExchangeResult`: ECDH of this private key with `peer`'s public key — the shared X
    /// coordinate, or (X9.63 variants) `requestedSize` bytes of X9.63 KDF output with the shared info.
    public func keyExchange(
        _ algorithm: KeyAlgorithm, with peer: AsymmetricKey,
        parameters: KeyOperationParameters = KeyOperationParameters()
    )
        throws(KeyError) -> Data
    {
        guard case .ecdh(_, let digest) = try require(.keyExchange, algorithm) else {
            throw KeyError(.param, "not a key exchange")
        }
        guard peer.type == .ellipticCurve, peer.sizeInBits == sizeInBits else {
            throw KeyError(.param, "the peer's key is not on this key's curve")
        }
        guard let shared = OpenSSL.derive(handle, peer: peer.handle) else { throw KeyError(.param, "ECDH failed") }
        guard let digest else { return shared.withUnsafeBytes { Data($0) } }
        guard let size = parameters.requestedSize else {
            throw KeyError(.param, "kSecKeyKeyExchangeParameterRequestedSize is missing")
        }
        return try Self.x963KDF(digest, secret: shared, sharedInfo: parameters.sharedInfo ?? Data(), count: size)
            .withUnsafeBytes { Data($0) }
    }

    static let zeroIV = [UInt8](repeating: 0, count: 16)

    /// A raw RSA input as a whole block: a big-endian number, shorter input padded with leading zeros (as
    /// SecKeyAdaptors.m reads it into the modulus' units); longer than the modulus is `errSecParam`.
    private func rawBlock(_ input: Data) throws(KeyError) -> Data {
        guard input.count <= blockSize else {
            throw KeyError(.param, "a raw RSA input is at most \(blockSize) bytes for this key, not \(input.count)")
        }
        return Data(count: blockSize - input.count) + input
    }

    /// ECIES's AES key and IV, as Apple derives them: X9.63 KDF over the ECDH secret with the ephemeral
    /// public key (then the caller's shared info) as shared info; 16-byte AES key up to 256-bit curves, 32
    /// beyond (or the requested size); the variable-IV variants take 16 more bytes as the IV, the others a
    /// zero IV.
    private func eciesKey(
        digest: KeyAlgorithm.Digest, variableIV: Bool, ephemeralPublic: Data, privateKey: AsymmetricKey,
        peer: AsymmetricKey,
        parameters: KeyOperationParameters
    ) throws(KeyError) -> (key: SecureBytes, iv: [UInt8]) {
        var keyLength = sizeInBits > 256 ? 32 : 16
        if let bits = parameters.symmetricKeySizeInBits {
            guard [128, 192, 256].contains(bits) else {
                throw KeyError(.param, "Bad requested kSecKeyEncryptionParameterSymmetricKeySizeInBits: \(bits)")
            }
            keyLength = bits / 8
        }
        guard let shared = OpenSSL.derive(privateKey.handle, peer: peer.handle) else {
            throw KeyError(.param, "ECIES: ECDH failed")
        }
        let derived = try Self.x963KDF(
            digest, secret: shared, sharedInfo: ephemeralPublic + (parameters.sharedInfo ?? Data()),
            count: keyLength + (variableIV ? 16 : 0))
        return derived.withUnsafeBytes { raw in
            (
                SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw.prefix(keyLength))),
                variableIV ? Array(raw.suffix(16)) : Self.zeroIV
            )
        }
    }

    /// ANSI X9.63 KDF: Hash(Z ‖ counter ‖ sharedInfo) for counter = 1, 2, … (32-bit big-endian), truncated.
    static func x963KDF(_ digest: KeyAlgorithm.Digest, secret: SecureBytes, sharedInfo: Data, count: Int)
        throws(KeyError) -> SecureBytes
    {
        guard count > 0, count <= digest.length * 1024 else {
            throw KeyError(.param, "ECDHKeyExchange wrong input (requested size \(count))")
        }
        var failed = false
        let output = SecureBytes(count: count, lifetime: .transient) { buffer in
            var filled = 0
            var counter: UInt32 = 1
            while filled < count {
                var big = counter.bigEndian
                let block = secret.withUnsafeBytes { z in
                    withUnsafeBytes(of: &big) { c in
                        sharedInfo.withUnsafeBytes { info in OpenSSL.digest(digest.rawValue, [z, c, info]) }
                    }
                }
                guard let block else {
                    failed = true
                    return
                }
                let take = min(block.count, count - filled)
                block.prefix(take).withUnsafeBytes {
                    buffer.baseAddress!.advanced(by: filled).copyMemory(from: $0.baseAddress!, byteCount: take)
                }
                filled += take
                counter += 1
            }
        }
        guard !failed else { throw KeyError(.param, "the \(digest.rawValue) digest failed") }
        return output
    }
}
