import Glibc

/// An open file descriptor of this process: the kernel's number for a file, a pipe's end or a socket,
/// typed, as swift-system's `FileDescriptor` is, so that it is never taken for a pid, a count or a status.
/// A value names the descriptor and owns nothing: whoever opened it closes it, once. Sockets have
/// `UnixSocket`, paths `Files`.
package struct FileDescriptor: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kernel's number.
    package let rawValue: Int32

    /// The descriptor numbered `rawValue` (one a C library or the kernel handed over).
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// Standard input (0).
    package static let standardInput = FileDescriptor(rawValue: 0)
    /// Standard output (1).
    package static let standardOutput = FileDescriptor(rawValue: 1)
    /// Standard error (2).
    package static let standardError = FileDescriptor(rawValue: 2)

    /// "fd N".
    package var description: String { "fd \(rawValue)" }

    /// `close`; the descriptor is gone whatever it returns (Linux never leaves it open on `EINTR`).
    package func close() { _ = Glibc.close(rawValue) }

    /// A close-on-exec duplicate, numbered 3 or above (never a standard stream).
    package func duplicate() throws(Errno) -> FileDescriptor {
        let copy = fcntl(rawValue, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw Errno.current }
        return FileDescriptor(rawValue: copy)
    }

    /// Sets close-on-exec (on one a C library opened without it), so no child started later keeps it.
    package func setCloseOnExec() {
        let flags = fcntl(rawValue, F_GETFD)
        if flags >= 0 { _ = fcntl(rawValue, F_SETFD, flags | FD_CLOEXEC) }
    }

    /// Whether it is open for writing (its access mode is write-only or read-write).
    package var isOpenForWriting: Bool {
        let flags = fcntl(rawValue, F_GETFL)
        guard flags >= 0 else { return false }
        let mode = flags & O_ACCMODE
        return mode == O_WRONLY || mode == O_RDWR
    }
}
