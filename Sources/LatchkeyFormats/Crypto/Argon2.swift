import Dispatch
package import LatchkeyCrypto
package import LatchkeyEngine

/// Argon2 (RFC 9106) in Swift over libsodium's BLAKE2b: Argon2d, Argon2i and Argon2id, versions 1.0 and 1.3,
/// any number of lanes (filled in parallel, one slice at a time). KeePassXC derives a KDBX 4 database's key
/// with Argon2d by default, which neither libsodium (Argon2i and Argon2id only, one lane) nor Debian 12's
/// OpenSSL 3.0 (Argon2 arrived in 3.2) offers. Checked against RFC 9106's test vectors (Tests/
/// LatchkeyFormatsTests/Argon2Tests.swift) and against KeePassXC, which opens what Latchkey writes.
///
/// The caller bounds the cost: `derive` allocates `memoryKiB` KiB and runs `iterations` passes over it.
package struct Argon2: Sendable, Hashable {
    /// Which blocks a new block depends on: the previous block's contents (d), a counter (i), or i for the
    /// first half of the first pass and d after it (id).
    package enum Variant: UInt32, Sendable {
        case d = 0
        case i = 1
        case id = 2
    }

    /// Version 1.0 overwrites blocks on later passes; 1.3 (the current one) XORs into them.
    package enum Version: UInt32, Sendable {
        case v10 = 0x10
        case v13 = 0x13
    }

    package var variant: Variant
    package var version: Version = .v13
    /// Passes over the memory (t), at least 1.
    package var iterations: UInt32
    /// The memory in KiB (m), at least 8 per lane.
    package var memoryKiB: UInt32
    /// Lanes (p), 1 to 2^24 − 1.
    package var parallelism: UInt32

    package init(variant: Variant, version: Version = .v13, iterations: UInt32, memoryKiB: UInt32, parallelism: UInt32)
    {
        self.variant = variant
        self.version = version
        self.iterations = iterations
        self.memoryKiB = memoryKiB
        self.parallelism = parallelism
    }

    /// The tag of `tagLength` bytes (16 to 1024) for `password` and `salt` (at least 8 bytes), with the optional
    /// secret key and associated data; `errSecParam` for parameters outside the specification's ranges.
    package func derive(
        password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, secret: UnsafeRawBufferPointer? = nil,
        associatedData: UnsafeRawBufferPointer? = nil, tagLength: Int = 32
    ) throws(KeychainError) -> SecureBytes {
        guard (1...0xFF_FFFF).contains(parallelism) else {
            throw KeychainError.param("Argon2's parallelism is 1 to 16777215, not \(parallelism)")
        }
        guard iterations >= 1 else { throw KeychainError.param("Argon2 needs at least one iteration") }
        guard UInt64(memoryKiB) >= 8 * UInt64(parallelism) else {
            throw KeychainError.param("Argon2 needs at least 8 KiB per lane, not \(memoryKiB) KiB for \(parallelism)")
        }
        guard salt.count >= 8 else {
            throw KeychainError.param("Argon2's salt has at least 8 bytes, not \(salt.count)")
        }
        guard (16...1024).contains(tagLength) else {
            throw KeychainError.param("an Argon2 tag of \(tagLength) bytes is not supported (16 to 1024)")
        }
        let lanes = Int(parallelism)
        let segmentLength = Int(memoryKiB) / (lanes * Self.syncPoints)
        let memory = Argon2Memory(lanes: lanes, laneLength: segmentLength * Self.syncPoints)
        defer { memory.release() }

        // H0, then the first two blocks of every lane from it.
        var h0 = [UInt8](repeating: 0, count: 64)
        defer { wipe(&h0) }
        let header = [
            parallelism, UInt32(tagLength), memoryKiB, iterations, version.rawValue, variant.rawValue,
        ]
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        withLittleEndian(header) { header in
            var lengths: [UInt32] = [
                UInt32(password.count), UInt32(salt.count), UInt32(secret?.count ?? 0),
                UInt32(associatedData?.count ?? 0),
            ]
            for index in lengths.indices { lengths[index] = lengths[index].littleEndian }
            lengths.withUnsafeBytes { lengths in
                h0.withUnsafeMutableBytes { h0 in
                    Blake2b.hash(
                        [
                            header, UnsafeRawBufferPointer(rebasing: lengths[0..<4]), password,
                            UnsafeRawBufferPointer(rebasing: lengths[4..<8]), salt,
                            UnsafeRawBufferPointer(rebasing: lengths[8..<12]), secret ?? empty,
                            UnsafeRawBufferPointer(rebasing: lengths[12..<16]), associatedData ?? empty,
                        ], into: h0)
                }
            }
        }
        for lane in 0..<lanes {
            for column in 0..<2 {
                var input = [UInt8](repeating: 0, count: 72)
                defer { wipe(&input) }
                input.withUnsafeMutableBytes { input in
                    h0.withUnsafeBytes { input.copyMemory(from: $0) }
                    withLittleEndian([UInt32(column), UInt32(lane)]) { suffix in
                        UnsafeMutableRawBufferPointer(rebasing: input[64..<72]).copyMemory(from: suffix)
                    }
                    Self.variableHash(
                        UnsafeRawBufferPointer(input), into: memory.blockBytes(lane: lane, column: column))
                }
            }
        }
        let filler = Argon2Filler(
            memory: memory, variant: variant, version: version, iterations: iterations, segmentLength: segmentLength)
        for pass in 0..<Int(iterations) {
            for slice in 0..<Self.syncPoints {
                if lanes == 1 {
                    filler.fillSegment(pass: pass, lane: 0, slice: slice)
                } else {
                    DispatchQueue.concurrentPerform(iterations: lanes) { lane in
                        filler.fillSegment(pass: pass, lane: lane, slice: slice)
                    }
                }
            }
        }
        // The final block: the XOR of each lane's last block, hashed to the tag's length.
        let final = memory.finalBlockBytes()
        defer {
            wipe(final)
            final.deallocate()
        }
        return SecureBytes(count: tagLength, lifetime: .transient) { tag in
            Self.variableHash(UnsafeRawBufferPointer(final), into: tag)
        }
    }

    static let syncPoints = 4

    /// H' of RFC 9106 (section 3.3): BLAKE2b stretched to `output.count` bytes, prefixed with that length.
    static func variableHash(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        withLittleEndian([UInt32(output.count)]) { length in
            if output.count <= 64 {
                Blake2b.hash([length, input], into: output)
                return
            }
            var chain = [UInt8](repeating: 0, count: 64)
            var next = [UInt8](repeating: 0, count: 64)
            defer {
                wipe(&chain)
                wipe(&next)
            }
            chain.withUnsafeMutableBytes { Blake2b.hash([length, input], into: $0) }
            let rounds = (output.count + 31) / 32 - 2
            var offset = 0
            for _ in 1..<rounds {
                chain.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(rebasing: output[offset..<offset + 32])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<32]))
                }
                offset += 32
                chain.withUnsafeBytes { chain in next.withUnsafeMutableBytes { Blake2b.hash([chain], into: $0) } }
                swap(&chain, &next)
            }
            chain.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: output[offset..<offset + 32])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<32]))
            }
            offset += 32
            chain.withUnsafeBytes { chain in
                Blake2b.hash([chain], into: UnsafeMutableRawBufferPointer(rebasing: output[offset...]))
            }
        }
    }
}

/// Runs `body` with `words` in little-endian byte order.
func withLittleEndian<R>(_ words: [UInt32], _ body: (UnsafeRawBufferPointer) -> R) -> R {
    words.map(\.littleEndian).withUnsafeBytes(body)
}

/// Overwrites an array that held key material.
func wipe(_ bytes: inout [UInt8]) { bytes.withUnsafeMutableBytes { wipeBytes($0) } }

/// Overwrites a buffer that held key material.
func wipe(_ buffer: UnsafeMutableRawBufferPointer) { wipeBytes(buffer) }
