public import Foundation
import Latchkey

// The SecKey functions of iOS 2 that the SDKs still ship, deprecated: pointers and lengths in, a status
// out. As Apple's SecKey.c implements them today, each is a `SecPadding` looked up in a table and the
// algorithm it names run through the modern functions (`SecKeyPerformLegacyOperation`).

/// `SecPadding`: the padding of the legacy SecKey functions, with Apple's values (`SecKey.h`). No padding is
/// `[]` (`kSecPaddingNone`, 0).
///
/// ```swift
/// var signature = [UInt8](repeating: 0, count: SecKeyGetBlockSize(key))
/// var length = signature.count
/// let status = SecKeyRawSign(key, .PKCS1SHA256, digest, digest.count, &signature, &length)
/// ```
public struct SecPadding: OptionSet, Hashable, Sendable {
    /// Apple's value.
    public let rawValue: UInt32
    /// A padding from Apple's value.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `kSecPaddingPKCS1`: PKCS #1 v1.5 (signatures of a ready digest with no DigestInfo, or encryption).
    public static let PKCS1 = SecPadding(rawValue: 0x0001)
    /// `kSecPaddingOAEP`: RSA OAEP with SHA-1 (encryption).
    public static let OAEP = SecPadding(rawValue: 0x0002)
    /// `kSecPaddingSigRaw`: an ECDSA signature as r‖s (RFC 4754) rather than DER.
    public static let sigRaw = SecPadding(rawValue: 0x4000)
    /// `kSecPaddingPKCS1MD2`: a PKCS #1 v1.5 signature of an MD2 digest (no algorithm runs it).
    public static let PKCS1MD2 = SecPadding(rawValue: 0x8000)
    /// `kSecPaddingPKCS1MD5`: a PKCS #1 v1.5 signature of an MD5 digest (no algorithm runs it).
    public static let PKCS1MD5 = SecPadding(rawValue: 0x8001)
    /// `kSecPaddingPKCS1SHA1`: a PKCS #1 v1.5 signature of a SHA-1 digest.
    public static let PKCS1SHA1 = SecPadding(rawValue: 0x8002)
    /// `kSecPaddingPKCS1SHA224`: a PKCS #1 v1.5 signature of a SHA-224 digest.
    public static let PKCS1SHA224 = SecPadding(rawValue: 0x8003)
    /// `kSecPaddingPKCS1SHA256`: a PKCS #1 v1.5 signature of a SHA-256 digest.
    public static let PKCS1SHA256 = SecPadding(rawValue: 0x8004)
    /// `kSecPaddingPKCS1SHA384`: a PKCS #1 v1.5 signature of a SHA-384 digest.
    public static let PKCS1SHA384 = SecPadding(rawValue: 0x8005)
    /// `kSecPaddingPKCS1SHA512`: a PKCS #1 v1.5 signature of a SHA-512 digest.
    public static let PKCS1SHA512 = SecPadding(rawValue: 0x8006)
}

/// `errSSLCrypto` (−9809, `SecureTransport.h`): what the legacy functions answer for a signature that does not
/// verify, where the modern ones say `errSecVerifyFailed`.
public var errSSLCrypto: OSStatus { -9809 }

extension SecKey {
    /// The signature algorithm of a padding (`SecKeyGetSignatureAlgorithmForPadding`): for RSA none is raw,
    /// PKCS #1 signs a ready digest without DigestInfo and PKCS1SHA… a SHA digest with its DigestInfo; for EC
    /// `sigRaw` is RFC 4754 and every other padding (none included) an X9.62 signature of a ready digest.
    func legacySignatureAlgorithm(_ padding: SecPadding) -> SecKeyAlgorithm? {
        switch publicHalf.type {
        case .rsa:
            switch padding {
            case []: .rsaSignatureRaw
            case .PKCS1: .rsaSignatureDigestPKCS1v15Raw
            case .PKCS1SHA1: .rsaSignatureDigestPKCS1v15SHA1
            case .PKCS1SHA224: .rsaSignatureDigestPKCS1v15SHA224
            case .PKCS1SHA256: .rsaSignatureDigestPKCS1v15SHA256
            case .PKCS1SHA384: .rsaSignatureDigestPKCS1v15SHA384
            case .PKCS1SHA512: .rsaSignatureDigestPKCS1v15SHA512
            default: nil
            }
        case .ellipticCurve:
            padding == .sigRaw ? .ecdsaSignatureRFC4754 : .ecdsaSignatureDigestX962
        case .ed25519:
            nil  // Apple's legacy paddings name RSA and ECDSA signatures only.
        }
    }

    /// The encryption algorithm of a padding (`SecKeyGetEncryptionAlgorithmForPadding`): RSA only; none is
    /// raw, PKCS #1 is v1.5, OAEP is OAEP with SHA-1.
    func legacyEncryptionAlgorithm(_ padding: SecPadding) -> SecKeyAlgorithm? {
        guard publicHalf.type == .rsa else { return nil }
        switch padding {
        case []: return .rsaEncryptionRaw
        case .PKCS1: return .rsaEncryptionPKCS1
        case .OAEP: return .rsaEncryptionOAEPSHA1
        default: return nil
        }
    }
}

/// `SecKeyPerformLegacyOperation`: runs a modern operation on pointer-and-length input and copies its result
/// out — `errSecParam` when the output buffer is shorter than the result ("buffer too small") — and turns
/// the operation's error into its status, `errSecVerifyFailed` becoming the legacy `errSSLCrypto`.
private func performLegacyOperation(
    _ output: UnsafeMutablePointer<UInt8>?, _ outputLength: UnsafeMutablePointer<Int>?,
    _ operation: (UnsafeMutablePointer<Unmanaged<CFError>?>) -> Data?
) -> OSStatus {
    var failure: Unmanaged<CFError>?
    guard let result = operation(&failure) else {
        let status = failure.map { OSStatus(truncatingIfNeeded: $0.takeRetainedValue().code) } ?? errSecInternal
        return status == errSecVerifyFailed ? errSSLCrypto : status
    }
    guard let output, let outputLength else { return errSecSuccess }
    guard result.count <= outputLength.pointee else { return errSecParam }
    outputLength.pointee = result.count
    result.copyBytes(to: output, count: result.count)
    return errSecSuccess
}

/// Bytes at a pointer as `CFData`, not copied (the caller's buffer outlives the call).
private func borrowed(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CFData {
    NSData(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes), length: max(count, 0), freeWhenDone: false)
}

/// `SecKeyRawSign` (deprecated): signs `dataToSign` (a digest, or for no padding the raw block) with a
/// private key under the algorithm its padding names (see `SecPadding`); `sigLen` holds the buffer's size
/// on entry and the signature's on return. A padding with no algorithm for the key is `errSecParam`, as is a
/// buffer too small for the signature.
public func SecKeyRawSign(
    _ key: SecKey, _ padding: SecPadding, _ dataToSign: UnsafePointer<UInt8>, _ dataToSignLen: Int,
    _ sig: UnsafeMutablePointer<UInt8>, _ sigLen: UnsafeMutablePointer<Int>
) -> OSStatus {
    guard let algorithm = key.legacySignatureAlgorithm(padding) else { return errSecParam }
    let input = borrowed(dataToSign, dataToSignLen)
    return performLegacyOperation(sig, sigLen) { error in
        SecKeyCreateSignature(key, algorithm, input, error).map { Data(referencing: $0) }
    }
}

/// `SecKeyRawVerify` (deprecated): `errSecSuccess` when `sig` is a signature of `signedData` under the
/// padding's algorithm; a signature that does not verify is `errSSLCrypto`, as the legacy functions always
/// answered; a padding with no algorithm for the key is `errSecParam`.
public func SecKeyRawVerify(
    _ key: SecKey, _ padding: SecPadding, _ signedData: UnsafePointer<UInt8>, _ signedDataLen: Int,
    _ sig: UnsafePointer<UInt8>, _ sigLen: Int
) -> OSStatus {
    guard let algorithm = key.legacySignatureAlgorithm(padding) else { return errSecParam }
    let input = borrowed(signedData, signedDataLen)
    let signature = borrowed(sig, sigLen)
    return performLegacyOperation(nil, nil) { error in
        SecKeyVerifySignature(key, algorithm, input, signature, error) ? Data() : nil
    }
}

/// `SecKeyEncrypt` (deprecated): RSA encryption under the padding's algorithm (none: raw, `.PKCS1`,
/// `.OAEP` with SHA-1); `cipherTextLen` holds the buffer's size on entry and the ciphertext's on return.
/// EC keys and other paddings are `errSecParam`, as is a buffer too small.
public func SecKeyEncrypt(
    _ key: SecKey, _ padding: SecPadding, _ plainText: UnsafePointer<UInt8>, _ plainTextLen: Int,
    _ cipherText: UnsafeMutablePointer<UInt8>, _ cipherTextLen: UnsafeMutablePointer<Int>
) -> OSStatus {
    guard let algorithm = key.legacyEncryptionAlgorithm(padding) else { return errSecParam }
    let input = borrowed(plainText, plainTextLen)
    return performLegacyOperation(cipherText, cipherTextLen) { error in
        SecKeyCreateEncryptedData(key, algorithm, input, error).map { Data(referencing: $0) }
    }
}

/// `SecKeyDecrypt` (deprecated): RSA decryption with the private key under the padding's algorithm; with no
/// padding the leading zero bytes of the block are stripped, as the function's contract says.
/// `plainTextLen` holds the buffer's size on entry and the plaintext's on return.
public func SecKeyDecrypt(
    _ key: SecKey, _ padding: SecPadding, _ cipherText: UnsafePointer<UInt8>, _ cipherTextLen: Int,
    _ plainText: UnsafeMutablePointer<UInt8>, _ plainTextLen: UnsafeMutablePointer<Int>
) -> OSStatus {
    guard let algorithm = key.legacyEncryptionAlgorithm(padding) else { return errSecParam }
    let input = borrowed(cipherText, cipherTextLen)
    return performLegacyOperation(plainText, plainTextLen) { error in
        guard let decrypted = SecKeyCreateDecryptedData(key, algorithm, input, error).map({ Data(referencing: $0) })
        else { return nil }
        return algorithm == .rsaEncryptionRaw ? Data(decrypted.drop { $0 == 0 }) : decrypted
    }
}

/// `SecKeyGeneratePair` (deprecated): a new key pair, as `SecKeyCreateRandomKey` makes it (SecKey.c makes
/// `SecKeyCreateRandomKey` of this very function): the public and private attribute dictionaries merged over
/// the parameters, each half stored when its `kSecAttrIsPermanent` is true. The failure's status is
/// returned (`errSecParam` for parameters Latchkey cannot make a key of).
public func SecKeyGeneratePair(
    _ parameters: CFDictionary, _ publicKey: UnsafeMutablePointer<SecKey?>?,
    _ privateKey: UnsafeMutablePointer<SecKey?>?
) -> OSStatus {
    var failure: Unmanaged<CFError>?
    guard let key = SecKeyCreateRandomKey(parameters, &failure) else {
        return failure.map { OSStatus(truncatingIfNeeded: $0.takeRetainedValue().code) } ?? errSecParam
    }
    privateKey?.pointee = key
    publicKey?.pointee = SecKeyCopyPublicKey(key)
    return errSecSuccess
}
