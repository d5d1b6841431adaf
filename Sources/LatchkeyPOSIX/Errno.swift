import Glibc

/// A failed system call's `errno`, with the C library's text for it (swift-system's `Errno`, in small).
package struct Errno: RawRepresentable, Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value (named as `FileDescriptor.rawValue` is: the C value a Swift type wraps).
    package let rawValue: Int32

    /// Wraps an `errno` value.
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// Wraps an `errno` value.
    package init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno` now.
    package static var current: Errno { Errno(errno) }

    /// `strerror`'s text, such as "Permission denied".
    package var description: String { String(cString: strerror(rawValue)) }

    /// `ENOENT`.
    package static let noSuchFile = Errno(ENOENT)
    /// `EEXIST`.
    package static let fileExists = Errno(EEXIST)
    /// `EINTR`.
    package static let interrupted = Errno(EINTR)
    /// `EAGAIN` (also a socket read or write that timed out).
    package static let wouldBlock = Errno(EAGAIN)
    /// `ENOSPC`.
    package static let noSpace = Errno(ENOSPC)
    /// `EACCES`.
    package static let accessDenied = Errno(EACCES)
    /// `EPERM`.
    package static let notPermitted = Errno(EPERM)
    /// `ESRCH`.
    package static let noSuchProcess = Errno(ESRCH)
    /// `EWOULDBLOCK` from `flock`: another process holds the lock.
    package static let locked = Errno(EWOULDBLOCK)
    /// `ENAMETOOLONG`.
    package static let nameTooLong = Errno(ENAMETOOLONG)
    /// `EBADMSG`.
    package static let badMessage = Errno(EBADMSG)
    /// `ECONNREFUSED`.
    package static let connectionRefused = Errno(ECONNREFUSED)
    /// `EMFILE` / `ENFILE`: out of descriptors.
    package var isOutOfDescriptors: Bool { rawValue == EMFILE || rawValue == ENFILE }
}

/// Retries a call that failed with `EINTR`; returns its result, or throws the `errno` of a failure.
@inline(__always)
func retryingInterrupts<T: SignedInteger>(_ call: () -> T) throws(Errno) -> T {
    while true {
        let result = call()
        if result >= 0 { return result }
        if errno != EINTR { throw Errno.current }
    }
}
