/// Unkeyed BLAKE2b of a chosen length over several parts (libsodium's `crypto_generichash`): the hash Argon2
/// is built on (LatchkeyFormats' Argon2d for KeePass's KDBX, which libsodium does not offer).
package enum Blake2b {
    /// The digest of `parts`, concatenated, written to `output` (1 to 64 bytes, its length the digest's).
    package static func hash(_ parts: [UnsafeRawBufferPointer], into output: UnsafeMutableRawBufferPointer) {
        Sodium.blake2bStream(output: output) { update in
            for part in parts where part.count > 0 { update(part) }
        }
    }
}
