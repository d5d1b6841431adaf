package import FoundationEssentials

/// Random bytes from the operating system's CSPRNG (libsodium's `randombytes_buf`).
package enum SecureRandom {
    /// `count` random bytes.
    package static func bytes(_ count: Int) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { Sodium.fillRandom($0) }
        return data
    }

    /// Fills `buffer` with random bytes.
    package static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard buffer.count > 0 else { return }
        Sodium.fillRandom(buffer)
    }
}
