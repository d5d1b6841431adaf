import Foundation
import LatchkeySecurity
import Testing

/// The deprecated pointer-and-length SecKey functions, run as Apple's SecKey.c runs them: a `SecPadding` is
/// looked up in its table (`SecKeyGetSignatureAlgorithmForPadding`, `SecKeyGetEncryptionAlgorithmForPadding`)
/// and the algorithm found goes through the modern functions (`SecKeyPerformLegacyOperation`).
@Suite struct SecKeyLegacyAPITests {
    static let rsa: SecKey = {
        var error: Unmanaged<CFError>?
        // One RSA key for the suite: generating one costs more than every test here together.
        return SecKeyCreateRandomKey(
            [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits: 1024] as CFDictionary, &error)!
    }()

    func ecKey(bits: Int = 256) throws -> SecKey {
        var error: Unmanaged<CFError>?
        return try #require(
            SecKeyCreateRandomKey(
                [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits: bits] as CFDictionary, &error)
        )
    }

    /// `SecKeyRawSign` into a buffer of `capacity` bytes: its status and the signature.
    func rawSign(_ key: SecKey, _ padding: SecPadding, _ input: [UInt8], capacity: Int = 512) -> (OSStatus, [UInt8]) {
        var signature = [UInt8](repeating: 0, count: capacity)
        var length = capacity
        let status = SecKeyRawSign(key, padding, input, input.count, &signature, &length)
        return (status, Array(signature.prefix(length)))
    }

    func modern(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ input: [UInt8]) throws -> [UInt8] {
        var error: Unmanaged<CFError>?
        return [UInt8](try #require(SecKeyCreateSignature(key, algorithm, Data(input) as CFData, &error)) as Data)
    }

    static let digest = [UInt8](repeating: 0xA5, count: 32)

    /// RSA's rows of the padding table: `PKCS1SHA…` sign a digest with its DigestInfo
    /// (`rsaSignatureDigestPKCS1v15SHA…`), `PKCS1` a digest without (`…DigestPKCS1v15Raw`): the same
    /// deterministic PKCS #1 v1.5 signatures the modern function makes.
    @Test func rsaPaddingsNameApplesAlgorithms() throws {
        let key = Self.rsa
        let rows: [(SecPadding, SecKeyAlgorithm, Int)] = [
            (.PKCS1SHA1, .rsaSignatureDigestPKCS1v15SHA1, 20), (.PKCS1SHA224, .rsaSignatureDigestPKCS1v15SHA224, 28),
            (.PKCS1SHA256, .rsaSignatureDigestPKCS1v15SHA256, 32),
            (.PKCS1SHA384, .rsaSignatureDigestPKCS1v15SHA384, 48),
            (.PKCS1SHA512, .rsaSignatureDigestPKCS1v15SHA512, 64), (.PKCS1, .rsaSignatureDigestPKCS1v15Raw, 35),
        ]
        let publicKey = try #require(SecKeyCopyPublicKey(key))
        for (padding, algorithm, length) in rows {
            let input = [UInt8](repeating: 0x3C, count: length)
            let (status, signature) = rawSign(key, padding, input)
            #expect(status == errSecSuccess)
            #expect(signature == (try modern(key, algorithm, input)))
            #expect(
                SecKeyRawVerify(publicKey, padding, input, input.count, signature, signature.count) == errSecSuccess)
        }
        #expect(SecKeyGetBlockSize(key) == 128)
    }

    /// No padding is `rsaSignatureRaw`: the input as a big-endian number raised to the private exponent, a
    /// whole block; verifying skips the leading zeros of the public result and compares the rest.
    @Test func noPaddingIsRawRSA() throws {
        let key = Self.rsa
        let publicKey = try #require(SecKeyCopyPublicKey(key))
        let input: [UInt8] = [0x01] + [UInt8](repeating: 0x77, count: 40)
        let (status, signature) = rawSign(key, [], input)
        #expect(status == errSecSuccess)
        #expect(signature.count == 128)
        #expect(SecKeyRawVerify(publicKey, [], input, input.count, signature, signature.count) == errSecSuccess)
        // The public operation gives the input back, in a block (SecKeyEncrypt with no padding).
        var block = [UInt8](repeating: 0, count: 128)
        var length = block.count
        #expect(SecKeyEncrypt(publicKey, [], signature, signature.count, &block, &length) == errSecSuccess)
        #expect(Array(block.prefix(length)) == [UInt8](repeating: 0, count: 128 - input.count) + input)
        // Longer than the modulus: errSecParam.
        #expect(rawSign(key, [], [UInt8](repeating: 1, count: 129)).0 == errSecParam)
    }

    /// `SecKeyPerformLegacyOperation` refuses an output buffer shorter than the result: errSecParam
    /// ("buffer too small"); a buffer larger gets the length written back.
    @Test func aBufferTooSmallIsParam() throws {
        let key = Self.rsa
        #expect(rawSign(key, .PKCS1SHA256, Self.digest, capacity: 127).0 == errSecParam)
        let (status, signature) = rawSign(key, .PKCS1SHA256, Self.digest, capacity: 1000)
        #expect(status == errSecSuccess && signature.count == 128)
    }

    /// A signature that does not verify: the modern functions' errSecVerifyFailed becomes the legacy
    /// errSSLCrypto (−9809), as `SecKeyPerformLegacyOperation` turns it ("Legacy functions used
    /// errSSLCrypto").
    @Test func aFailedVerificationIsErrSSLCrypto() throws {
        let key = Self.rsa
        let publicKey = try #require(SecKeyCopyPublicKey(key))
        var signature = rawSign(key, .PKCS1SHA256, Self.digest).1
        signature[5] ^= 0x01
        #expect(errSSLCrypto == -9809)
        #expect(
            SecKeyRawVerify(publicKey, .PKCS1SHA256, Self.digest, Self.digest.count, signature, signature.count)
                == errSSLCrypto)
        let ec = try ecKey()
        let ecSigned = rawSign(ec, .sigRaw, Self.digest)
        var ecSignature = ecSigned.1
        #expect(ecSigned.0 == errSecSuccess)
        ecSignature[0] ^= 0x80
        #expect(
            SecKeyRawVerify(
                SecKeyCopyPublicKey(ec)!, .sigRaw, Self.digest, Self.digest.count, ecSignature, ecSignature.count)
                == errSSLCrypto)
    }

    /// Paddings the table has no row for are errSecParam before anything runs: MD2 and MD5, OAEP and
    /// `sigRaw` for RSA signatures; any encryption with an EC key.
    @Test func paddingsWithoutAnAlgorithmAreParam() throws {
        for padding: SecPadding in [.PKCS1MD2, .PKCS1MD5, .OAEP, .sigRaw, SecPadding(rawValue: 0x1234)] {
            #expect(rawSign(Self.rsa, padding, Self.digest).0 == errSecParam)
        }
        let ec = try ecKey()
        var out = [UInt8](repeating: 0, count: 256)
        var length = out.count
        for padding: SecPadding in [[], .PKCS1, .OAEP] {
            #expect(
                SecKeyEncrypt(SecKeyCopyPublicKey(ec)!, padding, Self.digest, Self.digest.count, &out, &length)
                    == errSecParam)
            #expect(SecKeyDecrypt(ec, padding, Self.digest, Self.digest.count, &out, &length) == errSecParam)
        }
        #expect(SecKeyEncrypt(Self.rsa, .PKCS1SHA256, Self.digest, Self.digest.count, &out, &length) == errSecParam)
    }

    /// EC's rows: `sigRaw` is RFC 4754 (r‖s), every other padding — none included, as the old SecECKey did
    /// — an X9.62 DER signature of a ready digest.
    @Test func ecPaddingsNameApplesAlgorithms() throws {
        for bits in [256, 384, 521] {
            let key = try ecKey(bits: bits)
            let publicKey = try #require(SecKeyCopyPublicKey(key))
            var error: Unmanaged<CFError>?
            let (rawStatus, raw) = rawSign(key, .sigRaw, Self.digest)
            #expect(rawStatus == errSecSuccess)
            #expect(raw.count == 2 * SecKeyGetBlockSize(key))
            #expect(
                SecKeyVerifySignature(
                    publicKey, .ecdsaSignatureRFC4754, Data(Self.digest) as CFData, Data(raw) as CFData, &error))
            for padding: SecPadding in [[], .PKCS1, .PKCS1SHA256] {
                let (status, der) = rawSign(key, padding, Self.digest)
                #expect(status == errSecSuccess)
                #expect(der.first == 0x30)
                #expect(
                    SecKeyVerifySignature(
                        publicKey, .ecdsaSignatureDigestX962, Data(Self.digest) as CFData, Data(der) as CFData, &error))
                #expect(
                    SecKeyRawVerify(publicKey, padding, Self.digest, Self.digest.count, der, der.count) == errSecSuccess
                )
            }
        }
    }

    /// `SecKeyGetBlockSize`: the RSA modulus in bytes; for EC the field size (`ccec_ctx_size`), which
    /// `SecKeyGetSize` turns into 256/384/521 bits and signatures of 8 + 2 × it.
    @Test func blockSizesAreApples() throws {
        #expect(SecKeyGetBlockSize(Self.rsa) == 128)
        #expect(try [256, 384, 521].map { SecKeyGetBlockSize(try ecKey(bits: $0)) } == [32, 48, 66])
    }

    /// Encryption rows: none is raw RSA, `PKCS1` is v1.5, `OAEP` is OAEP with SHA-1 — readable by the modern
    /// functions; `SecKeyDecrypt` with no padding strips the block's leading zeros, as its contract says.
    @Test func encryptionPaddingsNameApplesAlgorithms() throws {
        let key = Self.rsa
        let publicKey = try #require(SecKeyCopyPublicKey(key))
        let message = [UInt8]("pin 0000".utf8)
        for (padding, algorithm) in [
            (SecPadding.PKCS1, SecKeyAlgorithm.rsaEncryptionPKCS1), (.OAEP, .rsaEncryptionOAEPSHA1),
            ([], .rsaEncryptionRaw),
        ] {
            var cipher = [UInt8](repeating: 0, count: 128)
            var cipherLength = cipher.count
            #expect(SecKeyEncrypt(publicKey, padding, message, message.count, &cipher, &cipherLength) == errSecSuccess)
            #expect(cipherLength == 128)
            var error: Unmanaged<CFError>?
            let modern = SecKeyCreateDecryptedData(key, algorithm, Data(cipher) as CFData, &error) as Data?
            #expect(modern.map { [UInt8]($0.drop { $0 == 0 }) } == message)
            var plain = [UInt8](repeating: 0, count: 128)
            var plainLength = plain.count
            #expect(SecKeyDecrypt(key, padding, cipher, cipherLength, &plain, &plainLength) == errSecSuccess)
            #expect(Array(plain.prefix(plainLength)) == message)
            // A plaintext buffer too small for the result.
            var small = [UInt8](repeating: 0, count: 4)
            var smallLength = small.count
            #expect(SecKeyDecrypt(key, padding, cipher, cipherLength, &small, &smallLength) == errSecParam)
        }
    }
}

extension SecKeyLegacyAPITests {
    /// `SecKeyGeneratePair` gives both halves (SecKey.c: `SecKeyCreateRandomKey` is this function keeping
    /// the private half); its failure is a status, the one `SecKeyCreateRandomKey`'s error carries.
    @Test func generatePairGivesBothHalves() throws {
        var publicKey: SecKey?
        var privateKey: SecKey?
        let parameters = [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits: 256] as CFDictionary
        #expect(SecKeyGeneratePair(parameters, &publicKey, &privateKey) == errSecSuccess)
        let pair = try (#require(publicKey), #require(privateKey))
        #expect(SecKeyCopyPublicKey(pair.1) == pair.0)
        let (status, signature) = rawSign(pair.1, .sigRaw, Self.digest)
        #expect(status == errSecSuccess)
        #expect(
            SecKeyRawVerify(pair.0, .sigRaw, Self.digest, Self.digest.count, signature, signature.count)
                == errSecSuccess)
        // SecRSAKey.c generates RSA keys of 512 bits up (CertificateSigningRequest's suite makes such keys);
        // below is errSecKeySizeNotAllowed.
        #expect(
            SecKeyGeneratePair(
                [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits: 512] as CFDictionary, &publicKey,
                &privateKey)
                == errSecSuccess)
        #expect(publicKey.map(SecKeyGetBlockSize) == 64)
        #expect(
            SecKeyGeneratePair(
                [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits: 256] as CFDictionary, &publicKey,
                &privateKey)
                == errSecKeySizeNotAllowed)
        #expect(
            SecKeyGeneratePair([kSecAttrKeySizeInBits: 256] as CFDictionary, &publicKey, &privateKey) == errSecParam)
    }
}
