package import FoundationEssentials
import LatchkeyCrypto
package import LatchkeyPOSIX
import Synchronization

/// A file as the kernel names it: device, inode and change time (which no program can set, and which changes
/// whenever the file is replaced or written).
package struct FileIdentity: Hashable, Sendable {
    package let device: UInt64, inode: UInt64, size: Int64, changed: Int64, changedNanoseconds: Int64

    package init(_ status: FileStatus) {
        device = status.device
        inode = status.inode
        size = status.size
        changed = status.changeSeconds
        changedNanoseconds = status.changeNanoseconds
    }
}

/// Digests of executables, keyed by device, inode, size and change time, so a program that connects a
/// thousand times is read once — and a rebuilt one is read again.
package final class DigestCache: Sendable {
    /// An empty cache.
    package init() {}

    /// The inode's change time (which no program can set) changes whenever the file is replaced or
    /// written, even when the size and the modification time are kept.
    private let cache = Mutex<[FileIdentity: Data]>([:])

    package func digest(of path: String) -> Data? {
        guard let info = FileStatus.of(path: path, followingLinks: true) else { return nil }
        let key = FileIdentity(info)
        if let known = cache.withLock({ $0[key] }) { return known }
        guard let digest = FileDigest.of(path: path) else { return nil }
        cache.withLock { cache in
            if cache.count > 1_024 { cache.removeAll() }
            cache[key] = digest
        }
        return digest
    }
}
