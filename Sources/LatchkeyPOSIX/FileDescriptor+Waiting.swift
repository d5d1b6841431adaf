import Glibc

extension FileDescriptor {
    /// Waits until there is something to read (or the end), at most `milliseconds`; false on timeout.
    package func waitReadable(milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: rawValue, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&entry, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            return ready > 0
        }
    }

    /// Polls without sleeping until there is something to read or `nanoseconds` have passed; false when
    /// the time ran out. For a reply known to come within microseconds: waking a thread that sleeps in
    /// `recv` costs tens of microseconds on a virtual machine (an inter-processor interrupt each way), more
    /// than the work behind most agent requests. The caller blocks afterwards as usual, so the spin only
    /// bounds the CPU spent, never the wait. Yields the processor between polls, so a peer on the same core
    /// still runs.
    package func spinUntilReadable(nanoseconds: Int) -> Bool {
        var entry = pollfd(fd: rawValue, events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + .nanoseconds(nanoseconds)
        repeat {
            if poll(&entry, 1, 0) > 0 { return true }
            sched_yield()
        } while ContinuousClock.now < deadline
        return false
    }

    /// Waits until any of `descriptors` has something to read, at most `milliseconds` (-1: no limit);
    /// returns those that do (empty on timeout).
    package static func waitReadable(_ descriptors: [FileDescriptor], milliseconds: Int32) -> [FileDescriptor] {
        var entries = descriptors.map { pollfd(fd: $0.rawValue, events: Int16(POLLIN), revents: 0) }
        while true {
            let ready = poll(&entries, nfds_t(entries.count), milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return [] }
            return entries.filter { $0.revents != 0 }.map { FileDescriptor(rawValue: $0.fd) }
        }
    }

    /// Reads and drops whatever is waiting on a doorbell's non-blocking read end.
    package func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(rawValue, &buffer, buffer.count) > 0 {}
    }

    /// Writes one byte (a wake-up pipe's doorbell); a full pipe already rings.
    package func ring() {
        var byte: UInt8 = 1
        _ = write(rawValue, &byte, 1)
    }
}
