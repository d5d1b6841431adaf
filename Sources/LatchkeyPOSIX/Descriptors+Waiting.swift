import Glibc

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
