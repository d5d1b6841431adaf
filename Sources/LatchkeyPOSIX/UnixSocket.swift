import CPOSIX
import Glibc

/// Unix stream sockets: connect, listen and accept with close-on-exec descriptors, the kernel's word on who
/// is at the other end (`SO_PEERCRED`), and per-message sender credentials (`SO_PASSCRED`).
package enum UnixSocket {
    /// What the kernel says about a process at the other end of a socket, or about a message's sender.
    package struct Credentials: Equatable, Hashable, Sendable {
        /// The process id (in this process's pid namespace).
        package let pid: Int32
        /// The user id.
        package let uid: UInt32
        /// The group id.
        package let gid: UInt32

        /// Creates credentials.
        package init(pid: Int32, uid: UInt32, gid: UInt32) {
            self.pid = pid
            self.uid = uid
            self.gid = gid
        }
    }

    /// The longest socket path the kernel takes (`sun_path` less its terminating zero).
    package static var maximumPathLength: Int { MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1 }

    private static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) throws(Errno)
        -> T
    {
        let bytes = Array(path.utf8)
        guard bytes.count <= maximumPathLength, !bytes.contains(0) else { throw Errno.nameTooLong }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// A new stream socket, close-on-exec.
    private static func makeSocket() throws(Errno) -> FileDescriptor {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Errno.current }
        return FileDescriptor(rawValue: fd)
    }

    /// Connects to the socket at `path`; the descriptor is close-on-exec and the caller closes it.
    package static func connect(to path: String) throws(Errno) -> FileDescriptor {
        let fd = try makeSocket()
        let result = try withAddress(path) { address, length in Glibc.connect(fd.rawValue, address, length) }
        guard result == 0 else {
            let failure = Errno.current
            fd.close()
            throw failure
        }
        return fd
    }

    /// Binds a socket at `path` with mode 0600 (no moment with a wider mode) and listens on it.
    package static func listen(at path: String, backlog: Int32 = 128) throws(Errno) -> FileDescriptor {
        let fd = try makeSocket()
        let previous = umask(0o177)
        let bound = try withAddress(path) { address, length in bind(fd.rawValue, address, length) }
        umask(previous)
        guard bound == 0, chmod(path, 0o600) == 0, Glibc.listen(fd.rawValue, backlog) == 0 else {
            let failure = Errno.current
            fd.close()
            throw failure
        }
        return fd
    }

    /// Accepts a connection (close-on-exec).
    package static func accept(_ listener: FileDescriptor) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try retryingInterrupts { latchkey_accept_close_on_exec(listener.rawValue) })
    }

    /// The credentials of the process at the other end, as they were when it connected (`SO_PEERCRED`).
    package static func peerCredentials(_ fd: FileDescriptor) -> Credentials? {
        var credentials = latchkey_credentials()
        guard latchkey_peer_credentials(fd.rawValue, &credentials) == 0 else { return nil }
        return Credentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }

    /// A handle on the very process that connected (`SO_PEERPIDFD`, Linux 6.5): unlike the pid in
    /// `peerCredentials`, it cannot come to name another process. Nil on older kernels, or when that process
    /// has exited already.
    package static func peerProcess(_ fd: FileDescriptor) -> ProcessHandle? {
        let pidfd = latchkey_peer_pidfd(fd.rawValue)
        guard pidfd >= 0 else { return nil }
        return ProcessHandle(adopting: FileDescriptor(rawValue: pidfd))
    }

    /// The LSM label of the process at the other end, as it was when it connected (`SO_PEERSEC`): an AppArmor
    /// profile and mode (`name (enforce)`) or an SELinux context; nil when no LSM labels sockets.
    package static func peerSecurityLabel(_ fd: FileDescriptor) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        var length = socklen_t(buffer.count)
        let status = buffer.withUnsafeMutableBytes {
            getsockopt(fd.rawValue, SOL_SOCKET, SO_PEERSEC, $0.baseAddress, &length)
        }
        guard status == 0, length > 0 else { return nil }
        var label = Array(buffer.prefix(Int(min(length, socklen_t(buffer.count)))))
        while label.last == 0 { label.removeLast() }
        return label.isEmpty ? nil : label
    }

    /// From now on every message received on `fd` carries its sender's credentials (`SO_PASSCRED`); the
    /// kernel fills them in and an unprivileged sender cannot forge them.
    package static func enableSenderCredentials(_ fd: FileDescriptor) throws(Errno) {
        guard latchkey_enable_credential_passing(fd.rawValue) == 0 else { throw Errno.current }
    }

    /// Receives up to `buffer.count` bytes and the sender's credentials, when the kernel attached them.
    /// Never joins the bytes of two different senders in one call. Count 0 means end of stream.
    package static func receive(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(Errno)
        -> (count: Int, sender: Credentials?)
    {
        var credentials = latchkey_credentials()
        var has: Int32 = 0
        let count = latchkey_receive_with_credentials(fd.rawValue, buffer.baseAddress, buffer.count, &credentials, &has)
        guard count >= 0 else { throw Errno.current }
        return (count, has == 1 ? Credentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid) : nil)
    }

    /// Receives up to `buffer.count` bytes; 0 means end of stream.
    package static func receive(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryingInterrupts { recv(fd.rawValue, buffer.baseAddress, buffer.count, 0) }
    }

    /// Sends every byte (no SIGPIPE when the peer is gone: `EPIPE` instead).
    package static func sendAll(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            offset += try retryingInterrupts {
                send(fd.rawValue, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
        }
    }

    /// Writes `header` then `body` as one stream of bytes: both in one `sendmsg` when the socket takes them
    /// (so a framed message is sent without first being copied behind its header), what is left by `sendAll`.
    package static func sendAll(_ fd: FileDescriptor, _ header: UnsafeRawBufferPointer, _ body: UnsafeRawBufferPointer)
        throws(Errno)
    {
        var parts = (
            iovec(iov_base: UnsafeMutableRawPointer(mutating: header.baseAddress), iov_len: header.count),
            iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress), iov_len: body.count)
        )
        let sent = try withUnsafeMutablePointer(to: &parts) { (vectors) throws(Errno) -> Int in
            var message = msghdr()
            message.msg_iov = UnsafeMutableRawPointer(vectors).assumingMemoryBound(to: iovec.self)
            message.msg_iovlen = 2
            return try retryingInterrupts { sendmsg(fd.rawValue, &message, Int32(MSG_NOSIGNAL)) }
        }
        if sent < header.count {
            try sendAll(fd, UnsafeRawBufferPointer(rebasing: header[sent...]))
            try sendAll(fd, body)
        } else {
            try sendAll(fd, UnsafeRawBufferPointer(rebasing: body[(sent - header.count)...]))
        }
    }

    /// Bounds how long one read or one write may block (`SO_RCVTIMEO`, `SO_SNDTIMEO`).
    package static func setTimeouts(_ fd: FileDescriptor, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        // Best effort: a socket without a timeout still works, it only waits longer on a stuck peer.
        _ = setsockopt(fd.rawValue, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd.rawValue, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Ends both directions of a connection now: a thread blocked reading it wakes up with end of stream.
    package static func shutDown(_ fd: FileDescriptor) { _ = shutdown(fd.rawValue, Int32(SHUT_RDWR)) }
}
