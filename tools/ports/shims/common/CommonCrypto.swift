// The CommonCrypto functions the ported libraries call, on Linux, where Apple's CommonCrypto does not exist
// (it is not Security; Latchkey does not offer it). OpenSSL's libcrypto, loaded with dlopen, computes them.
// Test-harness shim only: compiled into the LatchkeyShims module of a port, never into Latchkey.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

public typealias CC_LONG = UInt32
public typealias CCCryptorStatus = Int32
public typealias CCOperation = UInt32
public typealias CCAlgorithm = UInt32
public typealias CCOptions = UInt32

public var CC_SHA1_DIGEST_LENGTH: Int32 { 20 }
public var CC_SHA224_DIGEST_LENGTH: Int32 { 28 }
public var CC_SHA256_DIGEST_LENGTH: Int32 { 32 }
public var CC_SHA384_DIGEST_LENGTH: Int32 { 48 }
public var CC_SHA512_DIGEST_LENGTH: Int32 { 64 }
public var kCCSuccess: Int { 0 }
public var kCCParamError: Int { -4300 }
public var kCCBufferTooSmall: Int { -4301 }
public var kCCEncrypt: Int { 0 }
public var kCCDecrypt: Int { 1 }
public var kCCAlgorithmAES128: Int { 0 }
public var kCCAlgorithmAES: Int { 0 }
public var kCCOptionPKCS7Padding: Int { 1 }
public var kCCOptionECBMode: Int { 2 }
public var kCCKeySizeAES128: Int { 16 }
public var kCCKeySizeAES192: Int { 24 }
public var kCCKeySizeAES256: Int { 32 }
public var kCCBlockSizeAES128: Int { 16 }
// Named by Heimdall's table of algorithms; only AES runs.
public var kCCAlgorithmDES: Int { 1 }
public var kCCAlgorithm3DES: Int { 2 }
public var kCCAlgorithmCAST: Int { 3 }
public var kCCAlgorithmRC4: Int { 4 }
public var kCCAlgorithmRC2: Int { 5 }
public var kCCAlgorithmBlowfish: Int { 6 }
public var kCCBlockSizeDES: Int { 8 }
public var kCCBlockSize3DES: Int { 8 }
public var kCCBlockSizeCAST: Int { 8 }
public var kCCBlockSizeRC2: Int { 8 }
public var kCCBlockSizeBlowfish: Int { 8 }

/// libcrypto, opened once.
private let libcrypto: UnsafeMutableRawPointer? = dlopen("libcrypto.so.3", RTLD_NOW)

private func symbol<T>(_ name: String, as type: T.Type) -> T {
    guard let address = dlsym(libcrypto, name) else { fatalError("libcrypto has no \(name)") }
    return unsafeBitCast(address, to: type)
}

private typealias Digest = @convention(c) (UnsafeRawPointer?, Int, UnsafeMutablePointer<UInt8>?) -> UnsafeMutablePointer<UInt8>?

@discardableResult public func CC_SHA1(_ data: UnsafeRawPointer!, _ len: CC_LONG, _ md: UnsafeMutablePointer<UInt8>!) -> UnsafeMutablePointer<UInt8>! {
    symbol("SHA1", as: Digest.self)(data, Int(len), md)
}
@discardableResult public func CC_SHA224(_ data: UnsafeRawPointer!, _ len: CC_LONG, _ md: UnsafeMutablePointer<UInt8>!) -> UnsafeMutablePointer<UInt8>! {
    symbol("SHA224", as: Digest.self)(data, Int(len), md)
}
@discardableResult public func CC_SHA256(_ data: UnsafeRawPointer!, _ len: CC_LONG, _ md: UnsafeMutablePointer<UInt8>!) -> UnsafeMutablePointer<UInt8>! {
    symbol("SHA256", as: Digest.self)(data, Int(len), md)
}
@discardableResult public func CC_SHA384(_ data: UnsafeRawPointer!, _ len: CC_LONG, _ md: UnsafeMutablePointer<UInt8>!) -> UnsafeMutablePointer<UInt8>! {
    symbol("SHA384", as: Digest.self)(data, Int(len), md)
}
@discardableResult public func CC_SHA512(_ data: UnsafeRawPointer!, _ len: CC_LONG, _ md: UnsafeMutablePointer<UInt8>!) -> UnsafeMutablePointer<UInt8>! {
    symbol("SHA512", as: Digest.self)(data, Int(len), md)
}

/// `CCCrypt` for AES (CBC, or ECB with kCCOptionECBMode; PKCS #7 padding with kCCOptionPKCS7Padding), the
/// one algorithm the ported libraries use.
public func CCCrypt(
    _ op: CCOperation, _ alg: CCAlgorithm, _ options: CCOptions, _ key: UnsafeRawPointer!, _ keyLength: Int,
    _ iv: UnsafeRawPointer!, _ dataIn: UnsafeRawPointer!, _ dataInLength: Int, _ dataOut: UnsafeMutableRawPointer!,
    _ dataOutAvailable: Int, _ dataOutMoved: UnsafeMutablePointer<Int>!
) -> CCCryptorStatus {
    typealias Cipher = @convention(c) () -> OpaquePointer?
    typealias New = @convention(c) () -> OpaquePointer?
    typealias Free = @convention(c) (OpaquePointer?) -> Void
    typealias Initialize = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, UnsafeRawPointer?, UnsafeRawPointer?, Int32) -> Int32
    typealias Padding = @convention(c) (OpaquePointer?, Int32) -> Int32
    typealias Update = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?, UnsafeRawPointer?, Int32) -> Int32
    typealias Final = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> Int32
    guard alg == 0, [16, 24, 32].contains(keyLength) else { return CCCryptorStatus(kCCParamError) }
    let mode = options & 2 != 0 ? "ecb" : "cbc"
    let cipher = symbol("EVP_aes_\(keyLength * 8)_\(mode)", as: Cipher.self)()
    // CommonCrypto's output bound: a decryption never grows; a padded encryption rounds up to the next block.
    let needed = op == 0 && options & 1 != 0 ? (dataInLength / 16 + 1) * 16 : dataInLength
    guard dataOutAvailable >= needed else { return CCCryptorStatus(kCCBufferTooSmall) }
    let context = symbol("EVP_CIPHER_CTX_new", as: New.self)()
    defer { symbol("EVP_CIPHER_CTX_free", as: Free.self)(context) }
    var zeroIV = [UInt8](repeating: 0, count: 16)
    let ivPointer = iv ?? UnsafeRawPointer(&zeroIV)
    guard symbol("EVP_CipherInit_ex", as: Initialize.self)(context, cipher, nil, key, mode == "ecb" ? nil : ivPointer, op == 0 ? 1 : 0) == 1,
        symbol("EVP_CIPHER_CTX_set_padding", as: Padding.self)(context, options & 1 != 0 ? 1 : 0) == 1
    else { return CCCryptorStatus(kCCParamError) }
    var written: Int32 = 0
    var last: Int32 = 0
    guard symbol("EVP_CipherUpdate", as: Update.self)(context, dataOut, &written, dataIn, Int32(dataInLength)) == 1,
        symbol("EVP_CipherFinal_ex", as: Final.self)(context, dataOut.advanced(by: Int(written)), &last) == 1
    else { return -4304 }  // kCCDecodeError
    dataOutMoved?.pointee = Int(written + last)
    return CCCryptorStatus(kCCSuccess)
}
