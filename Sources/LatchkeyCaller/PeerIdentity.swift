package import FoundationEssentials
package import LatchkeyPOSIX

/// Who is on the other end of a connection: the user and the process (from the kernel: `SO_PEERCRED`, and
/// `SO_PEERPIDFD` where the kernel has it), the process's start time (so a reused pid is told apart), the
/// namespaces it runs in, and the program — the executable the process runs, by path (its exact bytes) and by
/// the digest of its contents, read through `/proc/<pid>/exe` (so a binary replaced after the process started
/// is not the one digested).
///
/// The agent reads this once, after `accept` and before its greeting; every later message must come from
/// the same process (per-message credentials), still running the same program.
///
/// A peer the agent cannot trust to be who the kernel says is `untrusted`, with the reason, and is never
/// identified as a registered program (docs/LATCHKEY-SECURITY.md, "Who is calling"):
/// - one in another user or pid namespace than the agent's: there, the namespace's root (any user, after
///   `unshare -Urpf`) may send messages naming any pid of the namespace, and may trace every process in it,
///   so neither the per-message credentials nor the program a process runs say who is sending;
/// - one whose namespaces cannot be read (it ended, or made itself not dumpable);
/// - one that runs a deleted executable (`<path> (deleted)`: an upgrade replaced it, and the path now names
///   another file, or none).
package struct PeerIdentity: Sendable {
    package let uid: UInt32
    package let pid: Int32
    /// When the process started (clock ticks after boot); nil when it could not be read, or when the pid
    /// was reused while the agent looked (the process that connected is gone).
    package let startTime: UInt64?
    /// A pidfd on the process: from `SO_PEERPIDFD` (the very process that connected), else opened at
    /// identification and checked against the start time. "Still the process that connected" is then one
    /// `poll` per request instead of a read of `/proc/<pid>/stat`. Nil where the kernel has no pidfds.
    package let handle: ProcessHandle?
    /// The executable's path as text (`PeerIdentity.text(ofPath:)`: exact, never lossy); nil when it cannot
    /// be read (the process ended, or is not dumpable).
    package let executablePath: String?
    /// BLAKE2b-256 of the executable; nil when it cannot be read.
    package let executableDigest: Data?
    /// The executable file (device, inode, change time) at identification: a later request checks that the
    /// process still runs this very file with one `stat`.
    package let executableFile: FileIdentity?
    /// Why the agent cannot trust who this peer is, or nil when it can.
    package let untrusted: String?

    /// The peer of a connected Unix socket: pinned with `SO_PEERPIDFD` where the kernel has it (Linux 6.5),
    /// else by its pid and start time.
    package static func of(socket fd: FileDescriptor, digests: DigestCache) -> PeerIdentity? {
        guard let peer = UnixSocket.peerCredentials(fd) else { return nil }
        if let handle = UnixSocket.peerProcess(fd) {
            return identify(handle: handle, uid: peer.uid, digests: digests)
        }
        return identify(pid: peer.pid, uid: peer.uid, digests: digests)
    }

    /// Reads a process's identity now, from its pid (older kernels, and D-Bus peers, whose pid is all the bus
    /// gives): the pidfd opened now names the process that had the pid only if its start time is still the
    /// one read before.
    package static func identify(pid: Int32, uid: UInt32, digests: DigestCache?) -> PeerIdentity {
        let started = Processes.startTime(of: pid)
        let handle = ProcessHandle(pid: pid)
        let stillSame = started != nil && handle?.startTime == started
        guard let handle, stillSame else {
            return PeerIdentity(
                uid: uid, pid: pid, startTime: nil, handle: nil, executablePath: nil, executableDigest: nil,
                executableFile: nil, untrusted: "pid \(pid) is no longer the process that connected")
        }
        return identify(handle: handle, uid: uid, digests: digests)
    }

    /// Reads the identity of the process `handle` pins; without `digests`, all of it but the executable's
    /// digest (which reading a large executable makes the costly part).
    static func identify(handle: ProcessHandle, uid: UInt32, digests: DigestCache?) -> PeerIdentity {
        let pid = handle.pid
        let exe = "/proc/\(pid)/exe"
        let status = handle.executableStatus
        let pathBytes = handle.executablePathBytes
        let digest = digests?.digest(of: exe)
        let started = handle.startTime
        var untrusted = NamespaceCheck.reason(for: handle)
        if untrusted == nil, let status, status.linkCount == 0 {
            let path = pathBytes.map { Self.text(ofPath: $0) } ?? "its executable"
            untrusted = "pid \(pid) runs a deleted executable (\(path)): a replaced program is nobody's identity"
        }
        // Every read above went through the pidfd's process, or by its pid while it was alive: it did not end
        // (and lend its pid to another) before the last one.
        if handle.hasExited { untrusted = "pid \(pid) is no longer the process that connected" }
        return PeerIdentity(
            uid: uid, pid: pid, startTime: started, handle: handle,
            executablePath: pathBytes.map { Self.text(ofPath: $0) },
            executableDigest: digest, executableFile: status.map(FileIdentity.init), untrusted: untrusted)
    }

    /// A path's bytes as text that names no other path: UTF-8 without a backslash as it is; any other path
    /// with every backslash and every byte outside printable ASCII as `\xHH` (so `/opt/\xff/tool` and
    /// `/opt/\xfe/tool`, which a lossy decoding makes one name, stay two).
    package static func text(ofPath bytes: [UInt8]) -> String {
        if !bytes.contains(UInt8(ascii: "\\")), let text = String(validating: bytes, as: UTF8.self) { return text }
        var escaped = ""
        for byte in bytes {
            if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") {
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                escaped += "\\x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return escaped
    }

    /// Why a message from `sender` may not be served as this peer's, or nil when it may: it must come from
    /// this very process (same pid and user — a child that kept the socket is another process), which must
    /// not have been replaced by another with the same pid (its pidfd, else its start time), nor have turned
    /// into another program (when its executable can still be looked at, it must be the file identified at
    /// connection).
    package func mismatch(sender: UnixSocket.Credentials, digests: DigestCache) -> String? {
        guard sender.pid == pid, sender.uid == uid else {
            return "a message came from pid \(sender.pid) (uid \(sender.uid)), not from pid \(pid), which connected"
        }
        guard !hasEnded() else { return "pid \(pid) is no longer the process that connected" }
        // A process that made itself not dumpable after connecting cannot be looked at again; exec makes a
        // process dumpable again, so an executable that cannot be looked at means it has not run another
        // program since.
        guard let now = handle.map(\.executableStatus) ?? FileStatus.of(path: "/proc/\(pid)/exe", followingLinks: true)
        else { return nil }
        guard let executableFile, FileIdentity(now) == executableFile else {
            return
                "pid \(pid) now runs \(Processes.executablePath(of: pid) ?? "another program"), not the program that connected"
        }
        return nil
    }

    /// Whether the process that connected has ended (its pidfd, else its start time; a process whose start
    /// time could not be read counts as ended). Also what an ephemeral key made for it lives as long as.
    @Sendable package func hasEnded() -> Bool {
        guard let startTime else { return true }
        if let handle { return handle.hasExited }
        return Processes.startTime(of: pid) != startTime
    }

    /// The executable's file name.
    package var executableName: String { executablePath.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "" }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
