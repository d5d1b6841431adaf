import Glibc

/// The calling thread.
package enum CurrentThread {
    /// A number that tells the calling thread from the others alive now (`pthread_self`).
    package static var id: UInt64 { UInt64(pthread_self()) }

    /// Blocks the calling thread for `duration` (`nanosleep`, resumed after a signal until the time is up);
    /// a zero or negative duration returns at once. Foundation's `Thread.sleep` would do the same, at the
    /// price of linking swift-corelibs-foundation into every program (docs/DESIGN-NOTES.md, "The CLI's start").
    package static func sleep(for duration: Duration) {
        guard duration > .zero else { return }
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }
}
