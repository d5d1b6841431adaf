import LatchkeyCrypto

#if !_endian(little)
    #error("Argon2's blocks are read as little-endian words in place")
#endif

/// Argon2's memory: `lanes` × `laneLength` blocks of 128 little-endian 64-bit words, wiped when released.
final class Argon2Memory: @unchecked Sendable {
    // @unchecked: lanes fill disjoint blocks of one slice at a time, and read others' blocks only from slices
    // that `DispatchQueue.concurrentPerform` finished before the current one started.
    let words: UnsafeMutablePointer<UInt64>
    let lanes: Int
    let laneLength: Int
    var blockCount: Int { lanes * laneLength }

    init(lanes: Int, laneLength: Int) {
        self.lanes = lanes
        self.laneLength = laneLength
        let count = lanes * laneLength * Argon2Filler.blockWords
        words = UnsafeMutablePointer<UInt64>.allocate(capacity: count)
        words.initialize(repeating: 0, count: count)
    }

    /// The bytes of one block.
    func blockBytes(lane: Int, column: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(
            start: words + (lane * laneLength + column) * Argon2Filler.blockWords, count: Argon2Filler.blockBytes)
    }

    /// The XOR of every lane's last block, in a new buffer the caller wipes and frees.
    func finalBlockBytes() -> UnsafeMutableRawBufferPointer {
        let final = UnsafeMutablePointer<UInt64>.allocate(capacity: Argon2Filler.blockWords)
        final.initialize(repeating: 0, count: Argon2Filler.blockWords)
        for lane in 0..<lanes {
            let last = words + (lane * laneLength + laneLength - 1) * Argon2Filler.blockWords
            for word in 0..<Argon2Filler.blockWords { final[word] ^= last[word] }
        }
        return UnsafeMutableRawBufferPointer(start: final, count: Argon2Filler.blockBytes)
    }

    /// Wipes and frees the memory.
    func release() {
        wipeBytes(UnsafeMutableRawBufferPointer(start: words, count: blockCount * Argon2Filler.blockBytes))
        words.deallocate()
    }
}

/// Fills Argon2's segments (RFC 9106, section 3.4): each block from the previous one and a reference block
/// chosen by the previous block's first word (Argon2d) or by a counter-driven address block (Argon2i, and
/// Argon2id's first two slices of its first pass).
struct Argon2Filler: @unchecked Sendable {
    // @unchecked: holds the memory's pointer; see `Argon2Memory` for why its lanes may be filled concurrently.
    static let blockWords = 128
    static let blockBytes = 1024

    let memory: Argon2Memory
    let variant: Argon2.Variant
    let version: Argon2.Version
    let iterations: UInt32
    let segmentLength: Int

    private func block(_ index: Int) -> UnsafeMutablePointer<UInt64> { memory.words + index * Self.blockWords }

    /// Fills one lane's segment of one slice of one pass.
    func fillSegment(pass: Int, lane: Int, slice: Int) {
        let laneLength = memory.laneLength
        let lanes = memory.lanes
        let dataIndependent = variant == .i || (variant == .id && pass == 0 && slice < Argon2.syncPoints / 2)
        // Scratch: the compression's two work blocks, and the address generator's input, addresses and zeros.
        let scratch = UnsafeMutablePointer<UInt64>.allocate(capacity: 5 * Self.blockWords)
        scratch.initialize(repeating: 0, count: 5 * Self.blockWords)
        defer {
            wipeBytes(UnsafeMutableRawBufferPointer(start: scratch, count: 5 * Self.blockBytes))
            scratch.deallocate()
        }
        let work = scratch
        let spare = scratch + Self.blockWords
        let input = scratch + 2 * Self.blockWords
        let addresses = scratch + 3 * Self.blockWords
        let zero = scratch + 4 * Self.blockWords
        func nextAddresses() {
            input[6] &+= 1
            Self.compress(previous: zero, reference: input, into: addresses, xor: false, work: work, spare: spare)
            Self.compress(previous: zero, reference: addresses, into: addresses, xor: false, work: work, spare: spare)
        }
        if dataIndependent {
            input[0] = UInt64(pass)
            input[1] = UInt64(lane)
            input[2] = UInt64(slice)
            input[3] = UInt64(memory.blockCount)
            input[4] = UInt64(iterations)
            input[5] = UInt64(variant.rawValue)
        }
        var start = 0
        if pass == 0 && slice == 0 {
            start = 2  // The first two blocks come from H0.
            if dataIndependent { nextAddresses() }
        }
        var current = lane * laneLength + slice * segmentLength + start
        var previous = current % laneLength == 0 ? current + laneLength - 1 : current - 1
        let xor = version == .v13 && pass != 0
        for index in start..<segmentLength {
            if current % laneLength == 1 { previous = current - 1 }
            let pseudoRandom: UInt64
            if dataIndependent {
                if index % Self.blockWords == 0 { nextAddresses() }
                pseudoRandom = addresses[index % Self.blockWords]
            } else {
                pseudoRandom = block(previous)[0]
            }
            let referenceLane = pass == 0 && slice == 0 ? lane : Int((pseudoRandom >> 32) % UInt64(lanes))
            let column = referenceIndex(
                pass: pass, slice: slice, index: index, pseudoRandom: pseudoRandom & 0xFFFF_FFFF,
                sameLane: referenceLane == lane)
            Self.compress(
                previous: block(previous), reference: block(referenceLane * laneLength + column),
                into: block(current), xor: xor, work: work, spare: spare)
            current += 1
            previous += 1
        }
    }

    /// The reference block's column within its lane (RFC 9106, section 3.4.1.2).
    private func referenceIndex(pass: Int, slice: Int, index: Int, pseudoRandom: UInt64, sameLane: Bool) -> Int {
        let laneLength = memory.laneLength
        let area: Int
        if pass == 0 {
            if slice == 0 {
                area = index - 1
            } else {
                area = slice * segmentLength + (sameLane ? index - 1 : (index == 0 ? -1 : 0))
            }
        } else {
            area = laneLength - segmentLength + (sameLane ? index - 1 : (index == 0 ? -1 : 0))
        }
        let squared = (pseudoRandom &* pseudoRandom) >> 32
        let relative = UInt64(area) - 1 - ((UInt64(area) &* squared) >> 32)
        let first = pass == 0 || slice == Argon2.syncPoints - 1 ? 0 : (slice + 1) * segmentLength
        return (first + Int(relative)) % laneLength
    }

    /// G: `into` = P(previous ⊕ reference) ⊕ (previous ⊕ reference), also ⊕ the old `into` when `xor`.
    @inline(__always)
    static func compress(
        previous: UnsafePointer<UInt64>, reference: UnsafePointer<UInt64>, into next: UnsafeMutablePointer<UInt64>,
        xor: Bool, work r: UnsafeMutablePointer<UInt64>, spare t: UnsafeMutablePointer<UInt64>
    ) {
        for k in 0..<blockWords {
            let x = reference[k] ^ previous[k]
            r[k] = x
            t[k] = xor ? x ^ next[k] : x
        }
        for row in 0..<8 {
            let b = 16 * row
            permute(
                r, b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7, b + 8, b + 9, b + 10, b + 11, b + 12, b + 13,
                b + 14, b + 15)
        }
        for column in 0..<8 {
            let b = 2 * column
            permute(
                r, b, b + 1, b + 16, b + 17, b + 32, b + 33, b + 48, b + 49, b + 64, b + 65, b + 80, b + 81, b + 96,
                b + 97, b + 112, b + 113)
        }
        for k in 0..<blockWords { next[k] = t[k] ^ r[k] }
    }

    /// BLAKE2b's round without message words, with Argon2's multiplication (BlaMka), on sixteen words of `v`.
    @inline(__always)
    static func permute(
        _ v: UnsafeMutablePointer<UInt64>, _ i0: Int, _ i1: Int, _ i2: Int, _ i3: Int, _ i4: Int, _ i5: Int,
        _ i6: Int, _ i7: Int, _ i8: Int, _ i9: Int, _ i10: Int, _ i11: Int, _ i12: Int, _ i13: Int, _ i14: Int,
        _ i15: Int
    ) {
        var v0 = v[i0]
        var v1 = v[i1]
        var v2 = v[i2]
        var v3 = v[i3]
        var v4 = v[i4]
        var v5 = v[i5]
        var v6 = v[i6]
        var v7 = v[i7]
        var v8 = v[i8]
        var v9 = v[i9]
        var v10 = v[i10]
        var v11 = v[i11]
        var v12 = v[i12]
        var v13 = v[i13]
        var v14 = v[i14]
        var v15 = v[i15]
        mix(&v0, &v4, &v8, &v12)
        mix(&v1, &v5, &v9, &v13)
        mix(&v2, &v6, &v10, &v14)
        mix(&v3, &v7, &v11, &v15)
        mix(&v0, &v5, &v10, &v15)
        mix(&v1, &v6, &v11, &v12)
        mix(&v2, &v7, &v8, &v13)
        mix(&v3, &v4, &v9, &v14)
        v[i0] = v0
        v[i1] = v1
        v[i2] = v2
        v[i3] = v3
        v[i4] = v4
        v[i5] = v5
        v[i6] = v6
        v[i7] = v7
        v[i8] = v8
        v[i9] = v9
        v[i10] = v10
        v[i11] = v11
        v[i12] = v12
        v[i13] = v13
        v[i14] = v14
        v[i15] = v15
    }

    /// GB of RFC 9106, section 3.6.
    @inline(__always)
    static func mix(_ a: inout UInt64, _ b: inout UInt64, _ c: inout UInt64, _ d: inout UInt64) {
        a = blaMka(a, b)
        d = rotateRight(d ^ a, 32)
        c = blaMka(c, d)
        b = rotateRight(b ^ c, 24)
        a = blaMka(a, b)
        d = rotateRight(d ^ a, 16)
        c = blaMka(c, d)
        b = rotateRight(b ^ c, 63)
    }

    @inline(__always)
    static func blaMka(_ x: UInt64, _ y: UInt64) -> UInt64 {
        x &+ y &+ 2 &* ((x & 0xFFFF_FFFF) &* (y & 0xFFFF_FFFF))
    }

    @inline(__always)
    static func rotateRight(_ word: UInt64, _ count: UInt64) -> UInt64 { (word >> count) | (word << (64 - count)) }
}
