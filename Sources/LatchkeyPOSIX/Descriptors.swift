import CPOSIX
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

/// Pipes.
package enum Pipes {
    /// A close-on-exec pipe: `read` reads what is written to `write`.
    package static func make() throws(Errno) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard latchkey_pipe(&fds) == 0 else { throw Errno.current }
        return (fds[0], fds[1])
    }

    /// A close-on-exec, non-blocking pipe for waking a thread: `Descriptors.ring` on `write` never blocks,
    /// `Descriptors.drain` on `read` empties it.
    package static func doorbell() throws(Errno) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard latchkey_doorbell_pipe(&fds) == 0 else { throw Errno.current }
        return (fds[0], fds[1])
    }
}

/// Signals, for programs that handle them with Dispatch.
package enum Signals {
    /// The signals that ask a service to stop: `SIGTERM`, `SIGINT`, `SIGHUP`.
    package static let termination: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// Sets `signal`'s disposition to ignore (so a Dispatch source sees it instead of the default action).
    package static func ignore(_ signal: Int32) { _ = Glibc.signal(signal, SIG_IGN) }

    /// Ignores `SIGPIPE`: a write to a closed socket then fails with `EPIPE` instead of ending the process.
    package static func ignoreBrokenPipes() { ignore(SIGPIPE) }

    /// A crash ends the process at once with `<name>: fatal signal <n>` on standard error and status 128+n:
    /// no backtrace (Swift's prints the memory registers point at — a passphrase, a secret), no core file.
    /// Call it first thing in `main`, after the runtime has installed its own handlers.
    package static func exitQuietlyOnCrash(name: String) throws(Errno) {
        guard latchkey_exit_on_fatal_signals(name) == 0 else { throw Errno.current }
    }
}

/// Pages of memory mapped for one purpose (the random pools).
package enum Memory {
    /// `size` bytes of private, anonymous, zeroed memory (a whole number of pages), or nil.
    package static func mapPages(_ size: Int) -> UnsafeMutableRawPointer? {
        let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let mapped, mapped != MAP_FAILED else { return nil }
        return mapped
    }

    /// `munmap`: gives pages from `mapPages` back to the kernel (their memory is no longer the process's).
    package static func unmapPages(_ pages: UnsafeMutableRawPointer, size: Int) { _ = munmap(pages, size) }

    /// `MADV_WIPEONFORK`: a forked child finds these pages zeroed. False where the kernel refuses it.
    package static func wipeOnFork(_ pages: UnsafeMutableRawPointer, size: Int) -> Bool {
        madvise(pages, size, MADV_WIPEONFORK) == 0
    }

    /// `MADV_DONTDUMP`: the pages stay out of core dumps. False where the kernel refuses it.
    package static func excludeFromCoreDumps(_ pages: UnsafeMutableRawPointer, size: Int) -> Bool {
        madvise(pages, size, MADV_DONTDUMP) == 0
    }
}

/// The calling thread.
package enum CurrentThread {
    /// A number that tells the calling thread from the others alive now (`pthread_self`).
    package static var id: UInt64 { UInt64(pthread_self()) }
}

extension Descriptors {
    /// Waits until `fd` has something to read (or its end), at most `milliseconds`; false on timeout.
    package static func waitReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&entry, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            return ready > 0
        }
    }

    /// Polls `fd` without sleeping until it has something to read or `nanoseconds` have passed; false when
    /// the time ran out. For a reply known to come within microseconds: waking a thread that sleeps in
    /// `recv` costs tens of microseconds on a virtual machine (an inter-processor interrupt each way), more
    /// than the work behind most agent requests. The caller blocks afterwards as usual, so the spin only
    /// bounds the CPU spent, never the wait. Yields the processor between polls, so a peer on the same core
    /// still runs.
    package static func spinUntilReadable(_ fd: Int32, nanoseconds: Int) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + .nanoseconds(nanoseconds)
        repeat {
            if poll(&entry, 1, 0) > 0 { return true }
            sched_yield()
        } while ContinuousClock.now < deadline
        return false
    }

    /// Waits until any of `fds` has something to read, at most `milliseconds` (-1: no limit); returns those
    /// that do (empty on timeout).
    package static func waitReadable(_ fds: [Int32], milliseconds: Int32) -> [Int32] {
        var entries = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while true {
            let ready = poll(&entries, nfds_t(entries.count), milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return [] }
            return entries.filter { $0.revents != 0 }.map(\.fd)
        }
    }

    /// Reads and drops whatever is waiting on a doorbell's non-blocking read end.
    package static func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(fd, &buffer, buffer.count) > 0 {}
    }

    /// Writes one byte (a wake-up pipe's doorbell); a full pipe already rings.
    package static func ring(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)
    }
}
