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
struct PeerIdentity: Sendable {
    let uid: UInt32
    let pid: Int32
    /// When the process started (clock ticks after boot); nil when it could not be read, or when the pid
    /// was reused while the agent looked (the process that connected is gone).
    let startTime: UInt64?
    /// A pidfd on the process, opened at identification: "still the process that connected" is then one
    /// `poll` per request instead of a read of `/proc/<pid>/stat`. Nil where the kernel has no pidfds.
    let handle: ProcessHandle?
    /// The executable's path; nil when it cannot be read (the process ended, or is not dumpable).
    let executablePath: String?
    /// BLAKE2b-256 of the executable; nil when it cannot be read.
    let executableDigest: Data?
    /// The executable file (device, inode, change time) at identification: a later request checks that the
    /// process still runs this very file with one `stat`.
    let executableFile: FileIdentity?

    /// The peer of a connected Unix socket.
    static func of(socket fd: Int32, digests: DigestCache) -> PeerIdentity? {
        guard let peer = UnixSocket.peerCredentials(fd) else { return nil }
        return identify(pid: peer.pid, uid: peer.uid, digests: digests)
    }

    /// Reads a process's identity now.
    static func identify(pid: Int32, uid: UInt32, digests: DigestCache) -> PeerIdentity {
        let started = Processes.startTime(of: pid)
        let handle = ProcessHandle(pid: pid)
        // The pidfd names whatever process has the pid now: it is the one that connected only if the start
        // time is still the one read before it was opened.
        let stillSame = started != nil && Processes.startTime(of: pid) == started
        let exe = "/proc/\(pid)/exe"
        return PeerIdentity(
            uid: uid, pid: pid, startTime: stillSame ? started : nil, handle: stillSame ? handle : nil,
            executablePath: Processes.executablePath(of: pid), executableDigest: digests.digest(of: exe),
            executableFile: FileStatus.of(path: exe, followingLinks: true).map(FileIdentity.init))
    }

    /// Why a message from `sender` may not be served as this peer's, or nil when it may: it must come from
    /// this very process (same pid and user — a child that kept the socket is another process), which must
    /// not have been replaced by another with the same pid (its pidfd, else its start time), nor have turned
    /// into another program (when its executable can still be looked at, it must be the file identified at
    /// connection).
    func mismatch(sender: UnixSocket.Credentials, digests: DigestCache) -> String? {
        guard sender.pid == pid, sender.uid == uid else {
            return "a message came from pid \(sender.pid) (uid \(sender.uid)), not from pid \(pid), which connected"
        }
        guard !hasEnded() else { return "pid \(pid) is no longer the process that connected" }
        // A process that made itself not dumpable after connecting cannot be looked at again; exec makes a
        // process dumpable again, so an executable that cannot be looked at means it has not run another
        // program since.
        guard let now = handle.map(\.executableStatus) ?? FileStatus.of(path: "/proc/\(pid)/exe", followingLinks: true) else { return nil }
        guard let executableFile, FileIdentity(now) == executableFile else {
            return "pid \(pid) now runs \(Processes.executablePath(of: pid) ?? "another program"), not the program that connected"
        }
        return nil
    }

    /// Whether the process that connected has ended (its pidfd, else its start time; a process whose start
    /// time could not be read counts as ended). Also what an ephemeral key made for it lives as long as.
    @Sendable func hasEnded() -> Bool {
        guard let startTime else { return true }
        if let handle { return handle.hasExited }
        return Processes.startTime(of: pid) != startTime
    }

    /// The executable's file name.
    var executableName: String { executablePath.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "" }
}

/// A file as the kernel names it: device, inode and change time (which no program can set, and which changes
/// whenever the file is replaced or written).
struct FileIdentity: Hashable, Sendable {
    let device: UInt64, inode: UInt64, size: Int64, changed: Int64, changedNanoseconds: Int64

    init(_ status: FileStatus) {
        device = status.device
        inode = status.inode
        size = status.size
        changed = status.changeSeconds
        changedNanoseconds = status.changeNanoseconds
    }
}

/// Digests of executables, keyed by device, inode, size and change time, so a program that connects a
/// thousand times is read once — and a rebuilt one is read again.
final class DigestCache: Sendable {
    /// The inode's change time (which no program can set) changes whenever the file is replaced or
    /// written, even when the size and the modification time are kept.
    private let cache = Mutex<[FileIdentity: Data]>([:])

    func digest(of path: String) -> Data? {
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
