package import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The BLAKE2b-256 digest of a file's contents, read through an open descriptor (so `/proc/<pid>/exe`
/// digests the very binary a process runs, even after its path was replaced).
package enum FileDigest {
    /// The digest, or nil when the file cannot be read.
    package static func of(path: String) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var failed = false
        let digest = Sodium.blake2bStream { update in
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count < 0 { failed = true }
                if count <= 0 { return }
                buffer.withUnsafeBytes { update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            }
        }
        return failed ? nil : Data(digest)
    }
}
