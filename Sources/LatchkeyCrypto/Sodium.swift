internal import CSodium

/// Every raw libsodium call of Latchkey lives in this file; the rest of the module calls these wrappers.
enum Sodium {
    /// `sodium_init()`: must succeed once before any other call. It fails only when the kernel's random
    /// source cannot be opened, and then nothing in Latchkey can work safely.
    static let initialized: Bool = latchkey_sodium_init() >= 0

    static func requireInitialized() {
        precondition(initialized, "libsodium could not be initialized (sodium_init failed)")
    }

    // MARK: Memory

    /// `sodium_memzero`: overwrite memory with zeros in a way the compiler cannot elide.
    static func wipe(_ pointer: UnsafeMutableRawPointer, count: Int) {
        latchkey_sodium_memzero(pointer, count)
    }

    /// `sodium_mlock`: keep pages out of swap. Returns false when the limit on locked memory is reached.
    static func lockMemory(_ pointer: UnsafeMutableRawPointer, count: Int) -> Bool {
        latchkey_sodium_mlock(pointer, count) == 0
    }

    /// `sodium_munlock`: wipes and unlocks pages locked by `lockMemory`.
    static func unlockMemory(_ pointer: UnsafeMutableRawPointer, count: Int) {
        _ = latchkey_sodium_munlock(pointer, count)  // Result ignored: failure only means the pages were not locked.
    }

    /// `sodium_memcmp`: constant-time comparison of equal-length buffers.
    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        if a.count == 0 { return true }
        return latchkey_sodium_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
    }

    // MARK: Random

    /// Fills memory with random bytes: small requests come from `RandomPool` (one `getrandom` system call
    /// per 4 KiB instead of one per nonce), large ones straight from `randombytes_buf`.
    static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) {
        requireInitialized()
        guard buffer.baseAddress != nil, buffer.count > 0 else { return }
        if buffer.count <= RandomPool.largestRequest {
            RandomPool.fill(buffer)
        } else {
            systemRandom(buffer)
        }
    }

    /// `randombytes_buf`: the operating system's CSPRNG (getrandom on Linux).
    static func systemRandom(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        latchkey_randombytes_buf(base, buffer.count)
    }

    // MARK: AEAD (XChaCha20-Poly1305, IETF construction)

    static let aeadKeyBytes = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    static let aeadNonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    static let aeadTagBytes = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    /// `crypto_aead_xchacha20poly1305_ietf_encrypt`: writes ciphertext followed by the tag into `output`,
    /// which must hold `plaintext.count + aeadTagBytes` bytes.
    static func aeadEncrypt(
        output: UnsafeMutableRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
    ) {
        requireInitialized()
        precondition(key.count == aeadKeyBytes && nonce.count == aeadNonceBytes)
        precondition(output.count == plaintext.count + aeadTagBytes)
        var written: UInt64 = 0
        let status = latchkey_crypto_aead_xchacha20poly1305_ietf_encrypt(
            output.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
            plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
            associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
            nil, nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
            key.baseAddress!.assumingMemoryBound(to: UInt8.self))
        precondition(status == 0 && Int(written) == output.count, "XChaCha20-Poly1305 encryption cannot fail")
    }

    /// `crypto_aead_xchacha20poly1305_ietf_decrypt`: returns false when the tag does not verify.
    static func aeadDecrypt(
        output: UnsafeMutableRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
    ) -> Bool {
        requireInitialized()
        precondition(key.count == aeadKeyBytes && nonce.count == aeadNonceBytes)
        precondition(ciphertext.count >= aeadTagBytes && output.count == ciphertext.count - aeadTagBytes)
        var written: UInt64 = 0
        let status = latchkey_crypto_aead_xchacha20poly1305_ietf_decrypt(
            output.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, nil,
            ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count),
            associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
            nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
            key.baseAddress!.assumingMemoryBound(to: UInt8.self))
        return status == 0 && Int(written) == output.count
    }

    // MARK: Argon2id

    static let pwhashSaltBytes = Int(crypto_pwhash_SALTBYTES)
    static let pwhashOpsLimitMin = UInt64(crypto_pwhash_OPSLIMIT_MIN)
    static let pwhashMemLimitMin = UInt64(crypto_pwhash_MEMLIMIT_MIN)

    /// `crypto_pwhash` with `crypto_pwhash_ALG_ARGON2ID13`. Returns false when the parameters are refused
    /// or memory cannot be allocated.
    static func argon2id(
        output: UnsafeMutableRawBufferPointer, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
        opsLimit: UInt64, memLimit: UInt64
    ) -> Bool {
        requireInitialized()
        precondition(salt.count == pwhashSaltBytes)
        func run(_ passwordPointer: UnsafePointer<CChar>) -> Int32 {
            latchkey_crypto_pwhash(
                output.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(output.count),
                passwordPointer, UInt64(password.count),
                salt.baseAddress!.assumingMemoryBound(to: UInt8.self),
                opsLimit, Int(memLimit), crypto_pwhash_ALG_ARGON2ID13)
        }
        let status: Int32
        if let base = password.baseAddress {
            status = run(base.assumingMemoryBound(to: CChar.self))
        } else {
            var empty: CChar = 0  // libsodium wants a valid pointer even for an empty password.
            status = withUnsafePointer(to: &empty) { run($0) }
        }
        return status == 0
    }

    // MARK: BLAKE2b

    /// `crypto_generichash_init/update/final`: an unkeyed 32-byte BLAKE2b digest of what `feed` provides.
    static func blake2bStream(_ feed: ((UnsafeRawBufferPointer) -> Void) -> Void) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        out.withUnsafeMutableBytes { blake2bStream(output: $0, feed) }
        return out
    }

    /// `crypto_generichash_init/update/final`: an unkeyed BLAKE2b digest of `output.count` bytes (1...64) of
    /// what `feed` provides, written to `output`.
    static func blake2bStream(
        output: UnsafeMutableRawBufferPointer, _ feed: ((UnsafeRawBufferPointer) -> Void) -> Void
    ) {
        requireInitialized()
        precondition((1...64).contains(output.count))
        // The state is an over-aligned C struct Swift imports as opaque: allocate it by its size.
        let memory = UnsafeMutableRawPointer.allocate(
            byteCount: latchkey_crypto_generichash_statebytes(), alignment: 64)
        defer { memory.deallocate() }
        let state = OpaquePointer(memory)
        latchkey_crypto_generichash_init(state, nil, 0, output.count)
        feed { chunk in
            _ = latchkey_crypto_generichash_update(
                state, chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(chunk.count))
        }
        latchkey_crypto_generichash_final(state, output.baseAddress!.assumingMemoryBound(to: UInt8.self), output.count)
        latchkey_sodium_memzero(memory, latchkey_crypto_generichash_statebytes())
    }

    static let genericHashKeyBytes = Int(crypto_generichash_KEYBYTES)

    /// `crypto_generichash` (BLAKE2b) keyed with `key`, writing `output.count` bytes (16...64).
    static func blake2b(
        output: UnsafeMutableRawBufferPointer, message: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
    ) {
        requireInitialized()
        let status = latchkey_crypto_generichash(
            output.baseAddress!.assumingMemoryBound(to: UInt8.self), output.count,
            message.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
            key.baseAddress?.assumingMemoryBound(to: UInt8.self), key.count)
        precondition(status == 0, "BLAKE2b with valid lengths cannot fail")
    }

    static let boxPublicKeyBytes = Int(crypto_box_PUBLICKEYBYTES)
    static let boxSecretKeyBytes = Int(crypto_box_SECRETKEYBYTES)
    static let boxSealBytes = latchkey_crypto_box_sealbytes()

    /// `crypto_box_seed_keypair`: the X25519 key pair derived from a 32-byte seed.
    static func boxKeyPair(
        seed: UnsafeRawBufferPointer, publicKey: UnsafeMutableRawBufferPointer, secretKey: UnsafeMutableRawBufferPointer
    ) {
        requireInitialized()
        let status = latchkey_crypto_box_seed_keypair(
            publicKey.baseAddress!.assumingMemoryBound(to: UInt8.self),
            secretKey.baseAddress!.assumingMemoryBound(to: UInt8.self),
            seed.baseAddress!.assumingMemoryBound(to: UInt8.self))
        precondition(status == 0, "crypto_box_seed_keypair with valid lengths cannot fail")
    }

    /// `crypto_box_seal`: encrypts to a public key anonymously (output: plaintext + `boxSealBytes`).
    static func boxSeal(
        output: UnsafeMutableRawBufferPointer, plaintext: UnsafeRawBufferPointer, publicKey: UnsafeRawBufferPointer
    ) -> Bool {
        requireInitialized()
        return latchkey_crypto_box_seal(
            output.baseAddress!.assumingMemoryBound(to: UInt8.self),
            plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self),
            UInt64(plaintext.count), publicKey.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
    }

    /// `crypto_box_seal_open`: false when the box was not sealed to this key pair or was altered.
    static func boxSealOpen(
        output: UnsafeMutableRawBufferPointer, box: UnsafeRawBufferPointer, publicKey: UnsafeRawBufferPointer,
        secretKey: UnsafeRawBufferPointer
    ) -> Bool {
        requireInitialized()
        return latchkey_crypto_box_seal_open(
            output.baseAddress!.assumingMemoryBound(to: UInt8.self),
            box.baseAddress!.assumingMemoryBound(to: UInt8.self),
            UInt64(box.count), publicKey.baseAddress!.assumingMemoryBound(to: UInt8.self),
            secretKey.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
    }

    // MARK: Stream ciphers (other programs' files: KeePass's KDBX)

    /// `crypto_stream_chacha20_ietf_xor_ic`: XORs `buffer` in place with ChaCha20's keystream (RFC 8439: a
    /// 32-byte key, a 12-byte nonce, a 32-bit block counter starting at `counter`).
    static func chacha20Xor(
        _ buffer: UnsafeMutableRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        counter: UInt32
    ) {
        requireInitialized()
        precondition(key.count == 32 && nonce.count == 12)
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        _ = latchkey_crypto_stream_chacha20_ietf_xor_ic(
            bytes, bytes, UInt64(buffer.count), nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), counter,
            key.baseAddress!.assumingMemoryBound(to: UInt8.self))  // Fails only for lengths checked above.
    }

    /// `crypto_stream_salsa20_xor_ic`: XORs `buffer` in place with Salsa20's keystream (a 32-byte key, an
    /// 8-byte nonce, a 64-bit block counter starting at `counter`).
    static func salsa20Xor(
        _ buffer: UnsafeMutableRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        counter: UInt64
    ) {
        requireInitialized()
        precondition(key.count == 32 && nonce.count == 8)
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        _ = latchkey_crypto_stream_salsa20_xor_ic(
            bytes, bytes, UInt64(buffer.count), nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), counter,
            key.baseAddress!.assumingMemoryBound(to: UInt8.self))  // Fails only for lengths checked above.
    }
}
