package import FoundationEssentials
import LatchkeyCrypto
package import LatchkeyEngine
import LatchkeyPKI

/// Writes a KDBX 4.0 database that KeePassXC opens: AES-256-CBC (or ChaCha20) over the inner header and the
/// XML, uncompressed, in HMAC-SHA-256 blocks of 1 MiB, the key from the password and/or key file through
/// `keyDerivation` (Argon2d by default, as KeePassXC's), protected values under ChaCha20.
package enum KDBXWriter {
    /// KeePassXC's defaults for a new database: Argon2d, 64 MiB, 10 iterations, 2 lanes.
    package static func defaultKeyDerivation(memoryKiB: UInt32 = 64 << 10, iterations: UInt32 = 10) -> KDBXKeyDerivation
    {
        .argon2(
            Argon2(variant: .d, iterations: iterations, memoryKiB: memoryKiB, parallelism: 2),
            salt: Array(SecureRandom.bytes(32)))
    }

    /// The database's bytes, and how many secrets that are not text went into attachments.
    package static func write(
        name: String, entries: [PasswordEntry], password: Passphrase?, keyFile: [UInt8]?,
        keyDerivation: KDBXKeyDerivation = defaultKeyDerivation(), cipher: KDBXHeader.Cipher = .aes256,
        now: Date = Date()
    ) throws(KeychainError) -> (bytes: [UInt8], binarySecrets: Int) {
        let composite = try KDBXCompositeKey.make(password: password, keyFile: keyFile)
        let masterSeed = Array(SecureRandom.bytes(32))
        let iv = Array(SecureRandom.bytes(cipher == .chacha20 ? 12 : 16))
        var header = FieldWriter()
        header.append(KDBXHeader.signature)
        header.uint16LE(0)
        header.uint16LE(4)
        func field(_ type: UInt8, _ value: [UInt8]) {
            header.append(type)
            header.uint32LE(UInt32(value.count))
            header.append(value)
        }
        field(2, cipher == .chacha20 ? KDBXHeader.chacha20 : KDBXHeader.aes256)
        field(3, [0, 0, 0, 0])
        field(4, masterSeed)
        field(7, iv)
        field(11, keyDerivation.variantMap.written())
        field(0, [0x0D, 0x0A, 0x0D, 0x0A])
        let transformed = try keyDerivation.transform(composite)
        let finalKey = masterSeed.withUnsafeBytes { seed in
            transformed.withUnsafeBytes { FormatPrimitives.sha256([seed, $0]) }
        }
        let one: [UInt8] = [1]
        let hmacKey = masterSeed.withUnsafeBytes { seed in
            transformed.withUnsafeBytes { key in one.withUnsafeBytes { FormatPrimitives.sha512([seed, key, $0]) } }
        }

        // The inner header and the XML.
        var streamKey = Array(SecureRandom.bytes(64))
        defer { streamKey.withUnsafeMutableBytes { wipeBytes($0) } }
        var xml = KDBXXMLWriter(stream: try InnerStream(id: 3, key: streamKey))
        defer { xml.wipe() }
        xml.document(name: name, entries: entries, now: now)
        var inner = FieldWriter()
        defer { inner.wipe() }
        func innerField(_ type: UInt8, _ value: some Collection<UInt8>) {
            inner.append(type)
            inner.uint32LE(UInt32(value.count))
            inner.append(value)
        }
        innerField(1, [3, 0, 0, 0])
        innerField(2, streamKey)
        for attachment in xml.attachments { innerField(3, [1] + Array(attachment)) }
        innerField(0, [])
        inner.append(xml.output)
        let encrypted: [UInt8]
        switch cipher {
        case .aes256:
            guard
                let sealed = inner.bytes.withUnsafeBytes({
                    FormatPrimitives.aesCBC(encrypt: true, key: finalKey, iv: Data(iv), input: $0, padding: true)
                })
            else { throw KeychainError(.internal, "AES-256-CBC failed in OpenSSL") }
            encrypted = sealed.withUnsafeBytes { Array($0) }
        case .chacha20:
            var bytes = inner.bytes
            bytes.withUnsafeMutableBytes { StreamCipher.chacha20.xor($0, key: finalKey, nonce: iv) }
            encrypted = bytes
        }

        var file = header.bytes
        let headerBytes = header.bytes
        file.append(
            contentsOf: headerBytes.withUnsafeBytes { FormatPrimitives.sha256([$0]) }.withUnsafeBytes { Array($0) })
        file.append(contentsOf: KDBXPayload.blockMAC(hmacKey, index: UInt64.max, [headerBytes], indexInMessage: false))
        var index: UInt64 = 0
        var offset = 0
        while true {
            let end = min(offset + (1 << 20), encrypted.count)
            let block = Array(encrypted[offset..<end])
            let size = (0..<4).map { UInt8(truncatingIfNeeded: UInt32(block.count) >> ($0 * 8)) }
            file.append(contentsOf: KDBXPayload.blockMAC(hmacKey, index: index, [size, block]))
            file.append(contentsOf: size)
            file.append(contentsOf: block)
            index += 1
            offset = end
            if block.isEmpty { break }
        }
        return (file, xml.attachments.count)
    }
}
