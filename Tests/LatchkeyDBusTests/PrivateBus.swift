import Foundation
import LatchkeyDBus
import LatchkeyTestSupport
import Synchronization

/// A `dbus-daemon` of the test's own on a Unix socket in a private directory, configured with no service
/// directories (nothing is activated behind the test's back), stopped by pid when released; and a server
/// connection on it, answering on a thread of its own until the daemon goes.
final class PrivateBus {
    let directory = TemporaryDirectory()
    let daemon: SpawnedProcess
    var address: String { "unix:path=" + directory.file("bus") }

    init() throws {
        let configuration = directory.file("bus.conf")
        try PrivateBusConfiguration.text(socketPath: directory.file("bus")).write(
            toFile: configuration, atomically: true, encoding: .utf8)
        daemon = try SpawnedProcess(
            "/usr/bin/dbus-daemon", ["--config-file=" + configuration, "--nofork", "--nopidfile"],
            environment: ["PATH": "/usr/bin:/bin"], log: directory.file("bus.log"))
        let socket = directory.file("bus")
        try waitUntil("the private bus") { FileManager.default.fileExists(atPath: socket) }
    }

    deinit { daemon.stop() }

    /// Starts a connection that owns `name` and hands the calls under `path` to `handler` (with the bus, to
    /// answer on) on a thread of its own; returns when the name is owned.
    func serve(_ name: String, under path: String, _ handler: @escaping @Sendable (Bus, BusMessage) -> Bool) throws {
        let start = ServerStart()
        let address = address
        let thread = Thread {
            do throws(BusError) {
                let bus = try Bus(address: address)
                try bus.handleObjects(under: path) { handler(bus, $0) }
                try bus.requestName(name)
                start.outcome.withLock { $0 = "" }
                try bus.run()
            } catch {
                // Before the name is owned: the test hears why; after: the daemon stopped, and the thread ends.
                start.outcome.withLock { if $0 == nil { $0 = error.description } }
            }
        }
        thread.start()
        try waitUntil("the server owning \(name)") { start.outcome.withLock { $0 != nil } }
        let failure = start.outcome.withLock { $0 ?? "" }
        guard failure.isEmpty else { throw ServerStart.Failed(reason: failure) }
    }
}

/// How a server's start ended: nil while it starts, "" once it owns its name, else why it could not.
final class ServerStart: Sendable {
    struct Failed: Error { let reason: String }
    let outcome = Mutex<String?>(nil)
}
