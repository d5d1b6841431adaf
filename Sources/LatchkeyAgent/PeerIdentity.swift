import Foundation
import LatchkeyCrypto
import LatchkeyPOSIX
import Synchronization

/// Who is on the other end of a connection: the user and the process (from the kernel, `SO_PEERCRED`),
/// the process's start time (so a reused pid is told apart), and the program — the executable the process
/// runs, by path and by the digest of its contents, read through `/proc/<pid>/exe` (so a binary replaced
/// after the process started is not the one digested).
///
/// The agent reads this once, after `accept` and before its greeting; every later message must come from
/// the same process (per-message credentials), still running the same program.
struct PeerIdentity: Sendable, Equatable {
    let uid: UInt32
    let pid: Int32
    /// When the process started (clock ticks after boot); nil when it could not be read.
    let startTime: UInt64?
    /// The executable's path; nil when it cannot be read (the process ended, or is not dumpable).
    let executablePath: String?
    /// BLAKE2b-256 of the executable; nil when it cannot be read.
    let executableDigest: Data?

    /// The peer of a connected Unix socket.
    static func of(socket fd: Int32, digests: DigestCache) -> PeerIdentity? {
        guard let peer = UnixSocket.peerCredentials(fd) else { return nil }
        return identify(pid: peer.pid, uid: peer.uid, digests: digests)
    }

    /// Reads a process's identity now.
    static func identify(pid: Int32, uid: UInt32, digests: DigestCache) -> PeerIdentity {
        PeerIdentity(
            uid: uid, pid: pid, startTime: Processes.startTime(of: pid),
            executablePath: Processes.executablePath(of: pid), executableDigest: digests.digest(of: "/proc/\(pid)/exe"))
    }

    /// Why a message from `sender` may not be served as this peer's, or nil when it may: it must come from
    /// this very process (same pid and user — a child that kept the socket is another process), which must
    /// not have been replaced by another with the same pid (start time), nor have turned into another
    /// program (when its executable can still be read, it must be the one identified at connection).
    func mismatch(sender: UnixSocket.Credentials, digests: DigestCache) -> String? {
        guard sender.pid == pid, sender.uid == uid else {
            return "a message came from pid \(sender.pid) (uid \(sender.uid)), not from pid \(pid), which connected"
        }
        guard let startTime, Processes.startTime(of: pid) == startTime else {
            return "pid \(pid) is no longer the process that connected"
        }
        // A process that made itself not dumpable after connecting cannot be looked at again; exec makes a
        // process dumpable again, so an unreadable executable means it has not run another program since.
        guard let now = Processes.executablePath(of: pid) else { return nil }
        guard now == executablePath, digests.digest(of: "/proc/\(pid)/exe") == executableDigest else {
            return "pid \(pid) now runs \(now), not the program that connected"
        }
        return nil
    }

    /// The executable's file name.
    var executableName: String { executablePath.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "" }
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
        guard let info = FileStatus.of(path: path, followingLinks: true) else { return nil }
        let key = Key(device: info.device, inode: info.inode, size: info.size, changed: info.changeSeconds,
                      changedNanoseconds: info.changeNanoseconds)
        if let known = cache.withLock({ $0[key] }) { return known }
        guard let digest = FileDigest.of(path: path) else { return nil }
        cache.withLock { cache in
            if cache.count > 1_024 { cache.removeAll() }
            cache[key] = digest
        }
        return digest
    }
}
