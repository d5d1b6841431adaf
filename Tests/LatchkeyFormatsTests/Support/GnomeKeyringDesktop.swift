import Foundation
import LatchkeyTestSupport

/// A session bus of the test's own (a `dbus-daemon` configured with no service directories, so nothing else
/// is activated on it) and gnome-keyring-daemon on it, its keyrings in `home`, unlocked with `password`;
/// `secret-tool` talks to it. Every child runs in a session of its own, away from the terminal.
final class GnomeKeyringDesktop {
    let sandbox: FormatsSandbox
    let bus: SpawnedProcess
    var daemon: SpawnedProcess?
    let password: String
    var socketPath: String { sandbox.directory.file("session-bus") }
    var address: String { "unix:path=" + socketPath }
    var keyrings: String { sandbox.home + "/.local/share/keyrings" }

    var environment: [String: String] {
        [
            "PATH": "/usr/bin:/bin", "HOME": sandbox.home, "XDG_DATA_HOME": sandbox.home + "/.local/share",
            "XDG_RUNTIME_DIR": sandbox.directory.file("run"), "DBUS_SESSION_BUS_ADDRESS": address, "LANG": "C.UTF-8",
        ]
    }

    init(sandbox: FormatsSandbox, password: String = "gnome password") throws {
        self.sandbox = sandbox
        self.password = password
        let configuration = sandbox.directory.file("session-bus.conf")
        try PrivateBusConfiguration.text(socketPath: sandbox.directory.file("session-bus")).write(
            toFile: configuration, atomically: true, encoding: .utf8)
        bus = try SpawnedProcess(
            "/usr/bin/dbus-daemon", ["--config-file=" + configuration, "--nofork", "--nopidfile"],
            environment: ["PATH": "/usr/bin:/bin"], log: sandbox.directory.file("session-bus.log"))
        let socket = sandbox.directory.file("session-bus")
        try waitUntil("the session bus") { FileManager.default.fileExists(atPath: socket) }
        try (password).write(toFile: sandbox.directory.file("gnome-password"), atomically: true, encoding: .utf8)
    }

    deinit {
        daemon?.stop()
        bus.stop()
    }

    /// Starts gnome-keyring-daemon (unlocking the login keyring with the password, creating it when missing)
    /// and waits until it owns org.freedesktop.secrets.
    func start() throws {
        daemon = try SpawnedProcess(
            "/bin/sh",
            [
                "-c",
                "exec /usr/bin/gnome-keyring-daemon --foreground --unlock --components=secrets < \"$1\"", "sh",
                sandbox.directory.file("gnome-password"),
            ],
            environment: environment, log: sandbox.directory.file("gnome-keyring.log"))
        try waitUntil("GNOME Keyring to take the name") { try owner() }
    }

    /// Stops the daemon and waits until the name is free.
    func stop() throws {
        daemon?.stop()
        daemon = nil
        try waitUntil("GNOME Keyring to leave the bus") { try !owner() }
    }

    func owner() throws -> Bool {
        let output = try HelperProcess.run(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets",
            ], environment: environment)
        return output.stdout.contains("boolean true")
    }

    func secretTool(_ arguments: String..., input: Data? = nil) throws -> HelperProcess.Output {
        try HelperProcess.run("/usr/bin/secret-tool", arguments, environment: environment, input: input)
    }
}
