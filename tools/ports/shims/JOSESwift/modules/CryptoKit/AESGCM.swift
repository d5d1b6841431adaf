// The piece of CryptoKit JOSESwift uses for its A128GCM/A192GCM/A256GCM content encryption — SymmetricKey and
// AES.GCM — on Linux, where CryptoKit does not exist (it is not Security; Latchkey does not offer it). A module
// named CryptoKit, because JOSESwift names its types `CryptoKit.AES.GCM` beside a `SymmetricKey` of its own.
// OpenSSL's libcrypto, loaded with dlopen, computes AES-GCM. Test-harness shim only, never part of Latchkey.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CryptoKit's errors, as far as AES-GCM raises them.
public enum CryptoKitError: Error {
    case incorrectKeySize
    case incorrectParameterSize
    case authenticationFailure
    case underlyingCoreCryptoError(error: Int32)
}

/// CryptoKit's `SymmetricKey`: the key's bytes.
public struct SymmetricKey {
    let bytes: [UInt8]
    public init<D: ContiguousBytes>(data: D) { bytes = data.withUnsafeBytes { Array($0) } }
    public var bitCount: Int { bytes.count * 8 }
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

private let libcrypto: UnsafeMutableRawPointer? = dlopen("libcrypto.so.3", RTLD_NOW)

private func function<T>(_ name: String, as type: T.Type) -> T {
    guard let address = dlsym(libcrypto, name) else { fatalError("libcrypto has no \(name)") }
    return unsafeBitCast(address, to: type)
}

/// CryptoKit's `AES`.
public enum AES {
    /// CryptoKit's `AES.GCM`.
    public enum GCM {
        /// A 12-byte (or longer) nonce.
        public struct Nonce: Sequence {
            let bytes: [UInt8]
            public init<D: DataProtocol>(data: D) throws {
                guard data.count >= 12 else { throw CryptoKitError.incorrectParameterSize }
                bytes = Array(data)
            }
            public init() {
                var random = [UInt8](repeating: 0, count: 12)
                for index in random.indices { random[index] = UInt8.random(in: 0...255) }
                bytes = random
            }
            public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
        }

        /// Nonce, ciphertext and 16-byte tag.
        public struct SealedBox {
            public let nonce: Nonce
            public let ciphertext: Data
            public let tag: Data
            public init<C: DataProtocol, T: DataProtocol>(nonce: Nonce, ciphertext: C, tag: T) throws {
                guard tag.count == 16 else { throw CryptoKitError.incorrectParameterSize }
                self.nonce = nonce
                self.ciphertext = Data(ciphertext)
                self.tag = Data(tag)
            }
            public var combined: Data? { Data(nonce.bytes) + ciphertext + tag }
        }

        public static func seal<Plaintext: DataProtocol, AAD: DataProtocol>(
            _ message: Plaintext, using key: SymmetricKey, nonce: Nonce? = nil, authenticating authenticatedData: AAD
        ) throws -> SealedBox {
            let nonce = nonce ?? Nonce()
            var tag = [UInt8](repeating: 0, count: 16)
            let ciphertext = try crypt(
                encrypt: true, key: key, nonce: nonce, input: Array(message), aad: Array(authenticatedData), tag: &tag)
            return try SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
        }

        public static func open<AAD: DataProtocol>(
            _ sealedBox: SealedBox, using key: SymmetricKey, authenticating authenticatedData: AAD
        ) throws -> Data {
            var tag = Array(sealedBox.tag)
            return Data(
                try crypt(
                    encrypt: false, key: key, nonce: sealedBox.nonce, input: Array(sealedBox.ciphertext),
                    aad: Array(authenticatedData), tag: &tag))
        }

        private static func crypt(
            encrypt: Bool, key: SymmetricKey, nonce: Nonce, input: [UInt8], aad: [UInt8], tag: inout [UInt8]
        ) throws -> [UInt8] {
            typealias Cipher = @convention(c) () -> OpaquePointer?
            typealias New = @convention(c) () -> OpaquePointer?
            typealias Free = @convention(c) (OpaquePointer?) -> Void
            typealias Initialize = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, UnsafeRawPointer?, UnsafeRawPointer?, Int32) -> Int32
            typealias Control = @convention(c) (OpaquePointer?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
            typealias Update = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?, UnsafeRawPointer?, Int32) -> Int32
            typealias Final = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> Int32
            guard [16, 24, 32].contains(key.bytes.count) else { throw CryptoKitError.incorrectKeySize }
            let cipher = function("EVP_aes_\(key.bytes.count * 8)_gcm", as: Cipher.self)()
            let context = function("EVP_CIPHER_CTX_new", as: New.self)()
            defer { function("EVP_CIPHER_CTX_free", as: Free.self)(context) }
            let initialize = function("EVP_CipherInit_ex", as: Initialize.self)
            let control = function("EVP_CIPHER_CTX_ctrl", as: Control.self)
            let update = function("EVP_CipherUpdate", as: Update.self)
            // EVP_CTRL_GCM_SET_IVLEN 0x9, EVP_CTRL_GCM_GET_TAG 0x10, EVP_CTRL_GCM_SET_TAG 0x11.
            guard initialize(context, cipher, nil, nil, nil, encrypt ? 1 : 0) == 1,
                control(context, 0x9, Int32(nonce.bytes.count), nil) == 1,
                initialize(context, nil, nil, key.bytes, nonce.bytes, encrypt ? 1 : 0) == 1
            else { throw CryptoKitError.underlyingCoreCryptoError(error: -1) }
            var length: Int32 = 0
            if !aad.isEmpty {
                guard update(context, nil, &length, aad, Int32(aad.count)) == 1 else {
                    throw CryptoKitError.underlyingCoreCryptoError(error: -1)
                }
            }
            var output = [UInt8](repeating: 0, count: input.count + 16)
            var written: Int32 = 0
            guard update(context, &output, &written, input, Int32(input.count)) == 1 else {
                throw CryptoKitError.underlyingCoreCryptoError(error: -1)
            }
            if !encrypt { _ = control(context, 0x11, 16, &tag) }
            var last: Int32 = 0
            let finished = output.withUnsafeMutableBytes {
                function("EVP_CipherFinal_ex", as: Final.self)(context, $0.baseAddress! + Int(written), &last)
            }
            guard finished == 1 else { throw CryptoKitError.authenticationFailure }
            if encrypt { _ = control(context, 0x10, 16, &tag) }
            return Array(output.prefix(Int(written + last)))
        }
    }
}
