import FoundationEssentials
import LatchkeyCrypto
import LatchkeyEngine
import LatchkeyPKI

/// A KeePass database's payload opened with its composite key: the blocks checked (KDBX 4: HMAC-SHA-256
/// per block, the header's SHA-256 and HMAC; 3.1: the stream's start bytes and SHA-256 per block), decrypted,
/// decompressed, and (4) its inner header read. What comes out is the XML, the keystream of its protected
/// values, and (4) the attachments of the inner header.
struct KDBXPayload {
    var xml: [UInt8]
    var stream: InnerStream
    var attachments: [[UInt8]]

    static func open(
        _ file: [UInt8], header: KDBXHeader, composite: SecureBytes, limits: KDBXLimits, what: String
    ) throws(KeychainError) -> KDBXPayload {
        try header.keyDerivation.check(limits, what: what)
        let transformed = try header.keyDerivation.transform(composite)
        let finalKey = header.masterSeed.withUnsafeBytes { seed in
            transformed.withUnsafeBytes { FormatPrimitives.sha256([seed, $0]) }
        }
        let wrong = KeychainError(.authFailed, "wrong password or key file for \(what)")
        var reader = FieldReader(file, offset: header.bytes.count, what: what)
        var ciphertext: [UInt8] = []
        if header.major == 4 {
            let digest = try reader.take(32, "the header's SHA-256")
            let mac = try reader.take(32, "the header's HMAC")
            let computed = header.bytes.withUnsafeBytes { FormatPrimitives.sha256([$0]) }
            guard computed.withUnsafeBytes({ Data($0) }) == Data(digest) else {
                throw KeychainError.decode("\(what)'s header fails its SHA-256 check (the file is damaged)")
            }
            let one: [UInt8] = [1]
            let hmacKey = header.masterSeed.withUnsafeBytes { seed in
                transformed.withUnsafeBytes { key in one.withUnsafeBytes { FormatPrimitives.sha512([seed, key, $0]) } }
            }
            guard
                blockMAC(
                    hmacKey, index: UInt64.max, [header.bytes.withUnsafeBytes { Array($0) }], indexInMessage: false)
                    == Data(mac)
            else { throw wrong }
            var index: UInt64 = 0
            while true {
                let mac = try reader.take(32, "block \(index)'s HMAC")
                let size = try reader.uint32LE("block \(index)'s size")
                guard size <= Int32.max else {
                    throw KeychainError.decode("\(what): block \(index) has a negative size")
                }
                let data = try reader.take(Int(size), "block \(index)")
                let sizeBytes = (0..<4).map { UInt8(truncatingIfNeeded: size >> ($0 * 8)) }
                guard blockMAC(hmacKey, index: index, [sizeBytes, Array(data)]) == Data(mac) else {
                    throw KeychainError.decode("\(what): block \(index) fails its HMAC (the file is damaged)")
                }
                if size == 0 { break }
                ciphertext.append(contentsOf: data)
                index += 1
            }
        } else {
            ciphertext = Array(file[reader.offset...])
        }
        let plain: SecureBytes?
        switch header.cipher {
        case .aes256:
            plain = ciphertext.withUnsafeBytes {
                FormatPrimitives.aesCBC(
                    encrypt: false, key: finalKey, iv: Data(header.encryptionIV), input: $0, padding: true)
            }
        case .chacha20:
            ciphertext.withUnsafeMutableBytes {
                StreamCipher.chacha20.xor($0, key: finalKey, nonce: header.encryptionIV)
            }
            plain = SecureBytes(copying: ciphertext)
        }
        ciphertext.withUnsafeMutableBytes { wipeBytes($0) }
        // AES-CBC's padding fails on a wrong key far more often than not: the same answer as a wrong MAC.
        guard let plain else {
            throw header.major == 4 ? KeychainError.decode("\(what)'s payload does not decrypt") : wrong
        }
        var content = plain.withUnsafeBytes { Array($0) }
        defer { content.withUnsafeMutableBytes { wipeBytes($0) } }
        if header.major == 3 {
            guard content.count >= 32, Array(content[0..<32]) == header.streamStartBytes else { throw wrong }
            content = try hashedBlocks(content, what: what)
        }
        let limit = min(1 << 30, max(64 << 20, file.count * 32))
        if header.compressed { content = try Inflate.gunzip(content, limit: limit, what: "\(what)'s payload") }
        if header.major == 3 {
            return KDBXPayload(
                xml: content, stream: try InnerStream(id: header.innerStream, key: header.protectedStreamKey),
                attachments: [])
        }
        var inner = FieldReader(content, what: "\(what)'s inner header")
        var streamID: UInt32?
        var streamKey: [UInt8] = []
        var attachments: [[UInt8]] = []
        defer { streamKey.withUnsafeMutableBytes { wipeBytes($0) } }
        while true {
            let type = try inner.byte("a field's type")
            let length = Int(try inner.uint32LE("a field's length"))
            let value = try inner.take(length, "inner header field \(type)")
            if type == 0 { break }
            switch type {
            case 1:
                guard value.count == 4 else { throw KeychainError.decode("\(what)'s inner stream id is not 4 bytes") }
                streamID = value.enumerated().reduce(0) { $0 | UInt32($1.element) << ($1.offset * 8) }
            case 2: streamKey = Array(value)
            case 3:
                guard !value.isEmpty else { throw KeychainError.decode("\(what) has an empty attachment field") }
                attachments.append(Array(value.dropFirst()))
            default: break
            }
        }
        guard let streamID else { throw KeychainError.decode("\(what) names no inner stream") }
        return KDBXPayload(
            xml: Array(content[inner.offset...]), stream: try InnerStream(id: streamID, key: streamKey),
            attachments: attachments)
    }

    /// HMAC-SHA-256 of `parts` (after the block's index, for blocks), under SHA-512(index ‖ the HMAC key); the
    /// header's is the block index 2^64 − 1's, without the index in the message.
    static func blockMAC(_ hmacKey: SecureBytes, index: UInt64, _ parts: [[UInt8]], indexInMessage: Bool = true) -> Data
    {
        let indexBytes = (0..<8).map { UInt8(truncatingIfNeeded: index >> ($0 * 8)) }
        let key = indexBytes.withUnsafeBytes { index in
            hmacKey.withUnsafeBytes { FormatPrimitives.sha512([index, $0]) }
        }
        let message = (indexInMessage ? indexBytes : []) + parts.joined()
        return key.withUnsafeBytes { key in
            message.withUnsafeBytes { FormatPrimitives.hmacSHA256(key: key, [$0]) }.withUnsafeBytes { Data($0) }
        }
    }

    /// KDBX 3.1's hashed blocks after the start bytes: index, SHA-256, size, data, to a block of size 0.
    static func hashedBlocks(_ content: [UInt8], what: String) throws(KeychainError) -> [UInt8] {
        var reader = FieldReader(content, offset: 32, what: what)
        var output: [UInt8] = []
        var expected: UInt32 = 0
        while true {
            let index = try reader.uint32LE("a block's index")
            let hash = try reader.take(32, "block \(index)'s hash")
            let size = Int(try reader.uint32LE("block \(index)'s size"))
            guard index == expected else {
                throw KeychainError.decode("\(what): block \(index) comes where \(expected) should")
            }
            if size == 0 {
                guard hash.allSatisfy({ $0 == 0 }) else {
                    throw KeychainError.decode("\(what): the last block's hash is not zero")
                }
                return output
            }
            let data = try reader.take(size, "block \(index)")
            let digest = data.withUnsafeBytes { FormatPrimitives.sha256([$0]) }.withUnsafeBytes { Array($0) }
            guard digest == Array(hash) else {
                throw KeychainError.decode("\(what): block \(index) fails its SHA-256 (damaged)")
            }
            output.append(contentsOf: data)
            expected += 1
        }
    }
}
