import Foundation
import LatchkeyPOSIX
import LatchkeySync
import LatchkeyTestSupport
import Testing

/// A NOTIFY that reaches a connection while it runs a query is read off the socket with the query's
/// results and waits in libpq's queue: the sync worker's wait must count it at once. Polling the socket
/// alone missed it, and a change made during a device's round reached it only at the next minute's round
/// (seen as `latchkey-bench --sync`'s "a change did not reach the other device in 10 s").
@Suite("Notifications queued during a round", .serialized)
struct SyncNotificationQueueTests {
    /// A connection LISTENing on `channel` whose notification libpq has already read and queued: the
    /// socket holds nothing more to read.
    private func connectionWithQueuedNotification(_ cluster: SyncTestServer, channel: String) throws
        -> PostgresConnection
    {
        let listener = try PostgresConnection(cluster.conninfo)
        try listener.execute("LISTEN \(channel)")
        let notifier = try PostgresConnection(cluster.conninfo)
        try notifier.execute("NOTIFY \(channel)")
        #expect(listener.socket.waitReadable(milliseconds: 10_000))
        _ = try listener.query("SELECT 1")  // Reads the notification with the result, into libpq's queue.
        #expect(listener.socket.waitReadable(milliseconds: 0) == false)
        return listener
    }

    @Test func aNotificationQueuedDuringAQueryWakesTheWorkerAtOnce() throws {
        let cluster = try SyncTestServer(.direct)
        let listener = try connectionWithQueuedNotification(cluster, channel: "latchkey_queued")
        let doorbell = try Pipes.doorbell()
        let started = ContinuousClock.now
        #expect(SyncWorker.wait(milliseconds: 5_000, doorbell: doorbell.read, connection: listener))
        #expect(ContinuousClock.now - started < .seconds(1))
        // Taken: the next wait has nothing to count and times out.
        #expect(listener.queuedNotifications().isEmpty)
        #expect(SyncWorker.wait(milliseconds: 50, doorbell: doorbell.read, connection: listener) == false)
    }

    @Test func aNotificationOnTheSocketAndTheDoorbellWakeTheWorker() throws {
        let cluster = try SyncTestServer(.direct)
        let listener = try PostgresConnection(cluster.conninfo)
        try listener.execute("LISTEN latchkey_socket")
        let doorbell = try Pipes.doorbell()
        #expect(SyncWorker.wait(milliseconds: 50, doorbell: doorbell.read, connection: listener) == false)
        try PostgresConnection(cluster.conninfo).execute("NOTIFY latchkey_socket")
        #expect(SyncWorker.wait(milliseconds: 10_000, doorbell: doorbell.read, connection: listener))
        #expect(SyncWorker.wait(milliseconds: 50, doorbell: doorbell.read, connection: listener) == false)
        doorbell.write.ring()
        #expect(SyncWorker.wait(milliseconds: 10_000, doorbell: doorbell.read, connection: nil))
        #expect(SyncWorker.wait(milliseconds: 50, doorbell: doorbell.read, connection: nil) == false)
    }
}
