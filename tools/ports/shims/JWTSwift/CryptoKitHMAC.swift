// The piece of CryptoKit JWTSwift uses for its HS256/384/512 tokens — SymmetricKey and HMAC<SHA256/384/512> —
// on Linux, where CryptoKit does not exist (it is not Security; Latchkey does not offer it). OpenSSL's
// libcrypto, loaded with dlopen, computes the HMAC. Test-harness shim only, never part of Latchkey.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A CryptoKit hash function, by OpenSSL's name for it.
public protocol ShimHashFunction { static var opensslName: String { get } }
public enum SHA256: ShimHashFunction { public static var opensslName: String { "SHA256" } }
public enum SHA384: ShimHashFunction { public static var opensslName: String { "SHA384" } }
public enum SHA512: ShimHashFunction { public static var opensslName: String { "SHA512" } }

/// CryptoKit's `SymmetricKey`: the key's bytes.
public struct SymmetricKey {
    let bytes: [UInt8]
    public init<D: ContiguousBytes>(data: D) { bytes = data.withUnsafeBytes { Array($0) } }
}

/// CryptoKit's `HashedAuthenticationCode`: the MAC's bytes, a sequence of them.
public struct HashedAuthenticationCode<H: ShimHashFunction>: Sequence {
    let bytes: [UInt8]
    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
}

/// CryptoKit's `HMAC`.
public enum HMAC<H: ShimHashFunction> {
    public static func authenticationCode<D: DataProtocol>(for data: D, using key: SymmetricKey) -> HashedAuthenticationCode<H> {
        typealias Named = @convention(c) (UnsafePointer<CChar>?) -> OpaquePointer?
        typealias Compute = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32, UnsafePointer<UInt8>?, Int,
                                            UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<UInt8>?
        let library = dlopen("libcrypto.so.3", RTLD_NOW)
        let named = unsafeBitCast(dlsym(library, "EVP_get_digestbyname"), to: Named.self)
        let compute = unsafeBitCast(dlsym(library, "HMAC"), to: Compute.self)
        var output = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        let message = Array(data)
        _ = key.bytes.withUnsafeBytes { keyBytes in
            compute(named(H.opensslName), keyBytes.baseAddress, Int32(key.bytes.count), message, message.count, &output, &length)
        }
        return HashedAuthenticationCode(bytes: Array(output.prefix(Int(length))))
    }
}
