internal import COpenSSL
import FoundationEssentials
import LatchkeyCrypto

/// Every raw OpenSSL (libcrypto) call of Latchkey lives in the files of LatchkeyPKI/OpenSSL/, one concern each:
/// certificates (`+X509`), digests, keys (generation, import, export; `+Ed25519`), signatures, RSA
/// encryption, key agreement, HMAC, AES-GCM (`+AEAD`), AES-CBC and AES-CTR (`+BlockCiphers`), PKCS #12,
/// trust and PEM keys; this file holds what several of them share. The rest of the module calls these.
/// Every failure clears OpenSSL's error queue and returns nil or false; callers give Apple's statuses.
enum OpenSSL {}

// Helpers the concerns share: C strings, zeroizing output buffers, DER encoding.
extension OpenSSL {
    /// A static string as a C string that lives as long as the program.
    static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// A zeroizing buffer of `count` bytes that `fill` writes; nil when `fill` reports a failure (the
    /// partly written bytes are wiped by `SecureBytes`).
    static func secureBytes(
        count: Int, lifetime: SecureBytes.Lifetime = .longLived, _ fill: (UnsafeMutableRawBufferPointer) -> Bool
    ) -> SecureBytes? {
        struct Unfilled: Error {}
        do {
            return try SecureBytes(count: count, lifetime: lifetime) { (buffer) throws(Unfilled) in
                if !fill(buffer) { throw Unfilled() }
            }
        } catch {
            return nil  // `fill` failed; there is nothing more to say than OpenSSL's cleared error queue.
        }
    }

    /// Runs an `i2d_…` function twice — for the length, then into a buffer of that length — and checks that
    /// both agree.
    static func encodeDER(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> Data? {
        let count = encode(nil)
        guard count > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: Int(count))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return encode(&cursor)
        }
        return written == count ? Data(out) : nil
    }
}
