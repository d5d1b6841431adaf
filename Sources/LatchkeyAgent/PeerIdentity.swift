import Foundation
import Latchkey
import LatchkeyCrypto
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a connection: the user (from the kernel, `SO_PEERCRED`), and the program —
/// the executable the peer process runs, by path and by the digest of its contents (read through
/// `/proc/<pid>/exe`, so a binary replaced after the process started is not the one digested).
struct PeerIdentity: Sendable, Equatable {
    let uid: uid_t
    let pid: pid_t
    /// The executable's path ("" when it cannot be read).
    let executablePath: String
    /// BLAKE2b-256 of the executable (nil when it cannot be read).
    let executableDigest: Data?

    /// The peer of a connected Unix socket.
    static func of(socket fd: Int32, digests: DigestCache) -> PeerIdentity? {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
            length == socklen_t(MemoryLayout<PeerCredentials>.size)
        else { return nil }
        let exe = "/proc/\(credentials.pid)/exe"
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: exe)) ?? ""  // Unreadable: no path.
        return PeerIdentity(uid: credentials.uid, pid: credentials.pid, executablePath: path,
                            executableDigest: digests.digest(of: exe))
    }

    /// The executable's file name: the group an unregistered program gets, as in embedded mode.
    var executableName: String { URL(fileURLWithPath: executablePath).lastPathComponent }
}

/// Digests of executables, keyed by device, inode, size and change time, so a program that connects a
/// thousand times is read once — and a rebuilt one is read again.
final class DigestCache: Sendable {
    /// The inode's change time (which no program can set) changes whenever the file is replaced or
    /// written, even when the size and the modification time are kept.
    private struct Key: Hashable {
        let device: UInt64, inode: UInt64, size: Int64, changed: Int64, changedNanoseconds: Int64
    }
    private let cache = Mutex<[Key: Data]>([:])

    func digest(of path: String) -> Data? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let key = Key(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                      changed: Int64(info.st_ctim.tv_sec), changedNanoseconds: Int64(info.st_ctim.tv_nsec))
        if let known = cache.withLock({ $0[key] }) { return known }
        guard let digest = FileDigest.of(path: path) else { return nil }
        cache.withLock { cache in
            if cache.count > 1_024 { cache.removeAll() }
            cache[key] = digest
        }
        return digest
    }
}

/// Linux's `struct ucred` (pid, uid, gid), which Swift's Glibc module does not export without _GNU_SOURCE.
private struct PeerCredentials {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
}
