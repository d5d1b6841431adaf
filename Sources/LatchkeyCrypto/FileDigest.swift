package import FoundationEssentials
import LatchkeyPOSIX

/// The BLAKE2b-256 digest of a file's contents, read through an open descriptor (so `/proc/<pid>/exe`
/// digests the very binary a process runs, even after its path was replaced).
package enum FileDigest {
    /// The digest, or nil when the file cannot be read.
    package static func of(path: String) -> Data? {
        var failure: Errno?
        let digest = Sodium.blake2bStream { update in
            do throws(Errno) {
                try Files.forEachChunk(path, update)
            } catch {
                failure = error
            }
        }
        return failure == nil ? Data(digest) : nil
    }
}
