import FoundationEssentials
import LatchkeyPOSIX
import LatchkeyProtocol

/// The agent's accept loop, one for every socket it listens on (its own, the SSH agent's, the waiting room's):
/// each connection accepted is admitted on the accepting thread, then served on a thread of its own, so a
/// slow client stalls only itself. A failed `accept` waits 50 ms; running out of descriptors is logged
/// (connections must close before more are accepted).
enum ConnectionListener {
    /// Accepts on `listener` forever. `admit` runs on the accepting thread for each connection and returns
    /// what serves it on the connection's own thread. `label` starts a failure's log line ("SSH agent: ").
    static func acceptForever(
        _ listener: FileDescriptor, label: String = "", log: @Sendable (String) -> Void,
        admit: (AgentStream) -> @Sendable () -> Void
    ) -> Never {
        while true {
            guard let stream = acceptOne(listener, label: label, log: log) else { continue }
            serveOnItsOwnThread(admit(stream))
        }
    }

    /// One connection accepted on `listener`, or nil after a failure (logged when descriptors ran out) and
    /// its 50 ms wait.
    static func acceptOne(_ listener: FileDescriptor, label: String = "", log: @Sendable (String) -> Void)
        -> AgentStream?
    {
        do {
            return AgentStream(descriptor: try UnixSocket.accept(listener))
        } catch {
            if error.isOutOfDescriptors { log("\(label)accept failed: \(error); waiting for connections to close") }
            CurrentThread.sleep(for: .milliseconds(50))
            return nil
        }
    }

    /// Runs `work` on a thread of its own: one waiting since its last connection closed, else a new one
    /// (`ConnectionThreads`), started with pthread_create itself — Foundation's `Thread` took tens of
    /// microseconds more to start, which a client waits for on every connection.
    static func serveOnItsOwnThread(_ work: @escaping @Sendable () -> Void) {
        ConnectionThreads.shared.run(work)
    }
}
