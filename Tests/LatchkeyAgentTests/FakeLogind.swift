import Foundation
import LatchkeyTestSupport
import Testing

/// A private D-Bus daemon standing in for the system bus, with `Tests/Tools/fake-logind.py` on it owning
/// `org.freedesktop.login1`. Both are started here and stopped by their pids.
final class FakeLogind: @unchecked Sendable {
    // @unchecked: used by one test at a time; every stored property is set in init.
    let address: String
    private let daemon: SpawnedProcess
    private let logind: SpawnedProcess
    private let logPath: String

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tools/fake-logind.py").path

    init(in directory: TemporaryDirectory) throws {
        let socket = directory.file("system_bus_socket")
        address = "unix:path=" + socket
        let configuration = directory.file("system-bus.conf")
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_destination="*"/>
            <allow receive_sender="*"/>
          </policy>
        </busconfig>
        """.write(toFile: configuration, atomically: true, encoding: .utf8)
        daemon = try SpawnedProcess(
            "/usr/bin/dbus-daemon", ["--config-file=" + configuration, "--nofork", "--nopidfile"],
            environment: ["PATH": "/usr/bin:/bin"], log: directory.file("dbus-daemon.log"))
        try Self.wait("the private bus", until: { FileManager.default.fileExists(atPath: socket) })
        logPath = directory.file("fake-logind.log")
        logind = try SpawnedProcess(
            "/usr/bin/python3", [Self.script, address], environment: ["PATH": "/usr/bin:/bin"],
            log: logPath)
        let log = logPath
        try Self.wait(
            "fake-logind",
            until: {
                ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("ready\n")
            })
    }

    deinit {
        logind.stop()
        daemon.stop()
    }

    /// What fake-logind printed (its Inhibit calls).
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Emits logind's PrepareForSleep(`start`) from the owner of `org.freedesktop.login1`.
    func prepareForSleep(_ start: Bool) throws {
        let output = try send([
            "--print-reply", "--dest=org.freedesktop.login1", "/org/freedesktop/login1",
            "org.latchkey.FakeLogind.Sleep", "boolean:\(start)",
        ])
        #expect(output.status == 0, "\(output.stderr)")
    }

    /// Emits the session's Lock signal (`loginctl lock-session`): "c1" is this user's session, "c2" another's.
    func lockSession(_ id: String) throws {
        let output = try send([
            "--print-reply", "--dest=org.freedesktop.login1", "/org/freedesktop/login1",
            "org.latchkey.FakeLogind.LockSession", "string:\(id)",
        ])
        #expect(output.status == 0, "\(output.stderr)")
    }

    /// Emits PropertiesChanged with the session's LockedHint, as when a screen locker calls SetLockedHint.
    func setLockedHint(_ id: String, _ locked: Bool) throws {
        let output = try send([
            "--print-reply", "--dest=org.freedesktop.login1", "/org/freedesktop/login1",
            "org.latchkey.FakeLogind.SetLockedHint", "string:\(id)", "boolean:\(locked)",
        ])
        #expect(output.status == 0, "\(output.stderr)")
    }

    /// Emits a session's Lock signal from a peer that does not own `org.freedesktop.login1`.
    func spoofLockSession(_ id: String) throws {
        let output = try send([
            "--type=signal", "/org/freedesktop/login1/session/\(id)", "org.freedesktop.login1.Session.Lock",
        ])
        #expect(output.status == 0, "\(output.stderr)")
    }

    /// Emits the same signal from a peer that does not own `org.freedesktop.login1`.
    func spoofPrepareForSleep() throws {
        let output = try send([
            "--type=signal", "/org/freedesktop/login1",
            "org.freedesktop.login1.Manager.PrepareForSleep", "boolean:true",
        ])
        #expect(output.status == 0, "\(output.stderr)")
    }

    /// The inhibitors still held, "what who mode" each.
    func inhibitors() throws -> [String] {
        let output = try send([
            "--print-reply", "--dest=org.freedesktop.login1", "/org/freedesktop/login1",
            "org.latchkey.FakeLogind.Inhibitors",
        ])
        #expect(output.status == 0, "\(output.stderr)")
        return output.stdout.split(separator: "\n").compactMap { line in
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix("string \""), text.hasSuffix("\"") else { return nil }
            return String(text.dropFirst(8).dropLast())
        }
    }

    private func send(_ arguments: [String]) throws -> HelperProcess.Output {
        try HelperProcess.run(
            "/usr/bin/dbus-send", ["--bus=" + address] + arguments, environment: ["PATH": "/usr/bin:/bin"])
    }

    /// Polls `condition` every 20 ms for up to ten seconds.
    static func wait(_ what: String, until condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(10)
        while try !condition() {
            guard Date() < deadline else { throw WaitTimedOut(what: what) }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    struct WaitTimedOut: Error, CustomStringConvertible {
        let what: String
        var description: String { "timed out waiting for \(what)" }
    }
}
