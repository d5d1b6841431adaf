import Glibc

/// File descriptors in general (sockets have `UnixSocket`, files `Files`).
package enum Descriptors {
    /// `close`; the descriptor is gone whatever it returns (Linux never leaves it open on `EINTR`).
    package static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// A close-on-exec duplicate of `fd`, numbered 3 or above (never a standard stream).
    package static func duplicate(_ fd: Int32) throws(Errno) -> Int32 {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw Errno.current }
        return copy
    }

    /// Sets close-on-exec on `fd` (one a C library opened without it), so no child started later keeps it.
    package static func setCloseOnExec(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFD)
        if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
    }

    /// Whether `fd` is open for writing (its access mode is write-only or read-write).
    package static func isOpenForWriting(_ fd: Int32) -> Bool {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0 else { return false }
        let mode = flags & O_ACCMODE
        return mode == O_WRONLY || mode == O_RDWR
    }
}
