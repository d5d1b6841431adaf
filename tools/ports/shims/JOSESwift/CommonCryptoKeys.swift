// The rest of CommonCrypto JOSESwift calls — CCHmac, PBKDF2 (CCKeyDerivationPBKDF) and the RFC 3394 AES key
// wrap (CCSymmetricKeyWrap) — on Linux, where CommonCrypto does not exist (it is not Security; Latchkey does
// not offer it). OpenSSL's libcrypto, loaded with dlopen, computes them. Test-harness shim only, never part of
// Latchkey; shims/common/CommonCrypto.swift has the digests and CCCrypt.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

public typealias CCHmacAlgorithm = UInt32
public typealias CCPseudoRandomAlgorithm = UInt32
public typealias CCPBKDFAlgorithm = UInt32
public typealias CCWrappingAlgorithm = UInt32

public var kCCHmacAlgSHA1: Int { 0 }
public var kCCHmacAlgSHA256: Int { 2 }
public var kCCHmacAlgSHA384: Int { 3 }
public var kCCHmacAlgSHA512: Int { 4 }
public var kCCPRFHmacAlgSHA1: Int { 1 }
public var kCCPRFHmacAlgSHA256: Int { 3 }
public var kCCPRFHmacAlgSHA384: Int { 4 }
public var kCCPRFHmacAlgSHA512: Int { 5 }
public var kCCPBKDF2: Int { 2 }
public var kCCWRAPAES: Int { 1 }
public var kCCMemoryFailure: Int { -4302 }
public var kCCDecodeError: Int { -4304 }

/// RFC 3394's default initial value, as CommonCrypto exports it.
public let CCrfc3394_iv: UnsafePointer<UInt8> = {
    let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 8)
    bytes.initialize(repeating: 0xA6, count: 8)
    return UnsafePointer(bytes)
}()
public let CCrfc3394_ivLen: Int = 8

private let libcrypto: UnsafeMutableRawPointer? = dlopen("libcrypto.so.3", RTLD_NOW)

private func function<T>(_ name: String, as type: T.Type) -> T {
    guard let address = dlsym(libcrypto, name) else { fatalError("libcrypto has no \(name)") }
    return unsafeBitCast(address, to: type)
}

private typealias DigestByName = @convention(c) (UnsafePointer<CChar>?) -> OpaquePointer?

private func digest(hmac algorithm: UInt32) -> OpaquePointer? {
    let names: [UInt32: String] = [0: "SHA1", 2: "SHA256", 3: "SHA384", 4: "SHA512", 1: "MD5", 5: "SHA224"]
    return function("EVP_get_digestbyname", as: DigestByName.self)(names[algorithm] ?? "")
}

/// `CCHmac`: the one-shot HMAC.
public func CCHmac(
    _ algorithm: CCHmacAlgorithm, _ key: UnsafeRawPointer!, _ keyLength: Int, _ data: UnsafeRawPointer!,
    _ dataLength: Int, _ macOut: UnsafeMutableRawPointer!
) {
    typealias HMAC = @convention(c) (
        OpaquePointer?, UnsafeRawPointer?, Int32, UnsafeRawPointer?, Int, UnsafeMutableRawPointer?,
        UnsafeMutablePointer<UInt32>?
    ) -> UnsafeMutablePointer<UInt8>?
    var length: UInt32 = 0
    _ = function("HMAC", as: HMAC.self)(digest(hmac: algorithm), key, Int32(keyLength), data, dataLength, macOut, &length)
}

/// `CCKeyDerivationPBKDF` (PBKDF2 with HMAC-SHA1/256/384/512).
public func CCKeyDerivationPBKDF(
    _ algorithm: CCPBKDFAlgorithm, _ password: UnsafePointer<CChar>!, _ passwordLen: Int,
    _ salt: UnsafePointer<UInt8>!, _ saltLen: Int, _ prf: CCPseudoRandomAlgorithm, _ rounds: UInt32,
    _ derivedKey: UnsafeMutablePointer<UInt8>!, _ derivedKeyLen: Int
) -> Int32 {
    typealias PBKDF2 = @convention(c) (
        UnsafePointer<CChar>?, Int32, UnsafePointer<UInt8>?, Int32, Int32, OpaquePointer?, Int32,
        UnsafeMutablePointer<UInt8>?
    ) -> Int32
    let names: [UInt32: String] = [1: "SHA1", 2: "SHA224", 3: "SHA256", 4: "SHA384", 5: "SHA512"]
    guard algorithm == 2, let name = names[prf], rounds > 0, derivedKeyLen > 0 else { return Int32(kCCParamError) }
    let md = function("EVP_get_digestbyname", as: DigestByName.self)(name)
    let ok = function("PKCS5_PBKDF2_HMAC", as: PBKDF2.self)(
        password, Int32(passwordLen), salt, Int32(saltLen), Int32(rounds), md, Int32(derivedKeyLen), derivedKey)
    return ok == 1 ? Int32(kCCSuccess) : Int32(kCCParamError)
}

public func CCKeyDerivationPBKDF(
    _ algorithm: CCPBKDFAlgorithm, _ password: UnsafeRawPointer!, _ passwordLen: Int,
    _ salt: UnsafeRawPointer!, _ saltLen: Int, _ prf: CCPseudoRandomAlgorithm, _ rounds: UInt32,
    _ derivedKey: UnsafeMutableRawPointer!, _ derivedKeyLen: Int
) -> Int32 {
    CCKeyDerivationPBKDF(
        algorithm, password?.assumingMemoryBound(to: CChar.self), passwordLen,
        salt?.assumingMemoryBound(to: UInt8.self), saltLen, prf, rounds,
        derivedKey?.assumingMemoryBound(to: UInt8.self), derivedKeyLen)
}

/// `CCSymmetricWrappedSize`: the wrapped length (8 bytes more).
public func CCSymmetricWrappedSize(_ algorithm: CCWrappingAlgorithm, _ rawKeyLen: Int) -> Int { rawKeyLen + 8 }
/// `CCSymmetricUnwrappedSize`: the unwrapped length (8 bytes less).
public func CCSymmetricUnwrappedSize(_ algorithm: CCWrappingAlgorithm, _ wrappedKeyLen: Int) -> Int {
    max(wrappedKeyLen - 8, 0)
}

/// RFC 3394 through OpenSSL's `id-aesNNN-wrap` ciphers.
private func aesWrap(
    encrypt: Bool, iv: UnsafePointer<UInt8>?, kek: UnsafePointer<UInt8>?, kekLen: Int, input: UnsafePointer<UInt8>?,
    inputLen: Int, output: UnsafeMutablePointer<UInt8>?, outputLen: UnsafeMutablePointer<Int>?
) -> Int32 {
    typealias Cipher = @convention(c) () -> OpaquePointer?
    typealias New = @convention(c) () -> OpaquePointer?
    typealias Free = @convention(c) (OpaquePointer?) -> Void
    typealias SetFlags = @convention(c) (OpaquePointer?, Int32) -> Void
    typealias Initialize = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, UnsafeRawPointer?, UnsafeRawPointer?, Int32) -> Int32
    typealias Update = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?, UnsafeRawPointer?, Int32) -> Int32
    typealias Final = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> Int32
    guard [16, 24, 32].contains(kekLen), inputLen >= (encrypt ? 16 : 24), inputLen % 8 == 0, let output, let outputLen
    else { return Int32(kCCParamError) }
    let needed = encrypt ? inputLen + 8 : inputLen - 8
    guard outputLen.pointee >= needed else { return Int32(kCCBufferTooSmall) }
    let cipher = function("EVP_aes_\(kekLen * 8)_wrap", as: Cipher.self)()
    let context = function("EVP_CIPHER_CTX_new", as: New.self)()
    defer { function("EVP_CIPHER_CTX_free", as: Free.self)(context) }
    function("EVP_CIPHER_CTX_set_flags", as: SetFlags.self)(context, 0x1)  // EVP_CIPHER_CTX_FLAG_WRAP_ALLOW
    var written: Int32 = 0
    var last: Int32 = 0
    guard function("EVP_CipherInit_ex", as: Initialize.self)(context, cipher, nil, kek, iv, encrypt ? 1 : 0) == 1,
        function("EVP_CipherUpdate", as: Update.self)(context, output, &written, input, Int32(inputLen)) == 1,
        function("EVP_CipherFinal_ex", as: Final.self)(context, output.advanced(by: Int(written)), &last) == 1
    else { return Int32(kCCDecodeError) }
    outputLen.pointee = Int(written + last)
    return Int32(kCCSuccess)
}

/// `CCSymmetricKeyWrap` (AES, RFC 3394).
public func CCSymmetricKeyWrap(
    _ algorithm: CCWrappingAlgorithm, _ iv: UnsafePointer<UInt8>!, _ ivLen: Int, _ kek: UnsafePointer<UInt8>!,
    _ kekLen: Int, _ rawKey: UnsafePointer<UInt8>!, _ rawKeyLen: Int, _ wrappedKey: UnsafeMutablePointer<UInt8>!,
    _ wrappedKeyLen: UnsafeMutablePointer<Int>!
) -> Int32 {
    guard algorithm == 1, ivLen == 8 else { return Int32(kCCParamError) }
    return aesWrap(
        encrypt: true, iv: iv, kek: kek, kekLen: kekLen, input: rawKey, inputLen: rawKeyLen, output: wrappedKey,
        outputLen: wrappedKeyLen)
}

/// `CCSymmetricKeyUnwrap` (AES, RFC 3394).
public func CCSymmetricKeyUnwrap(
    _ algorithm: CCWrappingAlgorithm, _ iv: UnsafePointer<UInt8>!, _ ivLen: Int, _ kek: UnsafePointer<UInt8>!,
    _ kekLen: Int, _ wrappedKey: UnsafePointer<UInt8>!, _ wrappedKeyLen: Int, _ rawKey: UnsafeMutablePointer<UInt8>!,
    _ rawKeyLen: UnsafeMutablePointer<Int>!
) -> Int32 {
    guard algorithm == 1, ivLen == 8 else { return Int32(kCCParamError) }
    return aesWrap(
        encrypt: false, iv: iv, kek: kek, kekLen: kekLen, input: wrappedKey, inputLen: wrappedKeyLen, output: rawKey,
        outputLen: rawKeyLen)
}
