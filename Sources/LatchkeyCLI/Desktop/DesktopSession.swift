import FoundationEssentials
import LatchkeyDBus
import LatchkeyPOSIX

/// The running session: who owns org.freedesktop.secrets on the user's bus, and the systemd user manager
/// (when one answers) that starts and stops units.
struct DesktopSession {
    static let busName = "org.freedesktop.secrets"

    /// The process that owns the name.
    struct Owner: Equatable {
        let pid: Int32
        /// Its executable's path ("?" when it cannot be read).
        let program: String
        /// The systemd user unit it runs in, when it runs in one.
        let unit: String?

        var peer: DesktopPeer? { DesktopPeer.providing(program: program) }
        var isLatchkey: Bool { program.hasSuffix("/latchkeyd") || program == "latchkeyd" }
        /// "pid 123, /usr/bin/gnome-keyring-daemon".
        var description: String { "pid \(pid), \(program)" + (unit.map { ", unit \($0)" } ?? "") }
    }

    let paths: DesktopPaths
    let environment: [String: String]

    /// Whether a systemd user manager answers for this user (its private socket is there).
    var hasUserManager: Bool {
        guard let runtime = paths.runtimeDirectory, paths.systemRoot.isEmpty else { return false }
        return FileManager.default.fileExists(atPath: runtime + "/systemd/private")
    }

    /// The name's owner now; nil when no one holds it. Throws when the bus cannot be reached.
    func owner() throws(BusError) -> Owner? {
        let bus = try Bus(.session)
        let reply: BusMessage
        do {
            reply = try bus.call(
                "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameHasOwner"
            ) { (message) throws(BusError) in try message.append(Self.busName) }
        }
        guard try reply.readBool() else { return nil }
        let pid = try bus.processID(of: Self.busName)
        return Owner(pid: pid, program: Self.program(of: pid), unit: Self.unit(of: pid))
    }

    /// A process's program: its executable, else — for a process that is not dumpable, such as latchkeyd, whose
    /// `/proc/<pid>/exe` only root may read — the first word of its command line, else its name ("?" when gone).
    static func program(of pid: Int32) -> String {
        if let executable = Processes.executablePath(of: pid) { return executable }
        if let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
            let first = data.split(separator: 0).first, !first.isEmpty
        {
            return String(decoding: first, as: UTF8.self)
        }
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/comm") else { return "?" }
        return String(decoding: data, as: UTF8.self).trimmingSpaces.split(separator: "\n").first.map(String.init) ?? "?"
    }

    /// The systemd user unit (`….service`) a process runs in, from its cgroup.
    static func unit(of pid: Int32) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cgroup") else { return nil }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: "/").map(String.init)
            guard let manager = parts.firstIndex(where: { $0.hasPrefix("user@") && $0.hasSuffix(".service") }) else {
                continue
            }
            return parts[(manager + 1)...].last { $0.hasSuffix(".service") }
        }
        return nil
    }

    /// Waits up to `seconds` for the owner to satisfy `condition`.
    func waitForOwner(seconds: Int, _ condition: (Owner?) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        repeat {
            do {
                if condition(try owner()) { return true }
            } catch {
                // The bus went away for a moment (a daemon restarting): asked again until the deadline.
            }
            CurrentThread.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        return false
    }

    /// Stops the owner: through its unit when the user manager runs it, else by SIGTERM (it is the user's own
    /// process: the bus refuses other users' connections). Waits until it has let go of the name.
    func stop(_ owner: Owner) throws -> String {
        if let unit = owner.unit, hasUserManager {
            try systemctl(["stop", unit])
            guard waitForOwner(seconds: 15, { $0?.pid != owner.pid }) else {
                throw CommandFailure(
                    message: "\(owner.description) still holds \(Self.busName) after `systemctl --user stop \(unit)`")
            }
            return "stopped \(unit) (\(owner.description))"
        }
        Spawn.terminate(owner.pid)
        guard waitForOwner(seconds: 15, { $0?.pid != owner.pid }) else {
            throw CommandFailure(message: "\(owner.description) still holds \(Self.busName) 15 seconds after SIGTERM")
        }
        return "stopped \(owner.description) (SIGTERM)"
    }

    /// Asks the session bus to read its activation files again (`ReloadConfig`): a user directory of services
    /// made after the bus started is not watched, so without it the bus would go on starting the provider it
    /// read at its start.
    func reloadBus() throws(BusError) {
        let bus = try Bus(.session)
        _ = try bus.call(
            "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ReloadConfig")
    }

    /// Asks the bus to start whoever its activation files name now (`StartServiceByName`).
    func activate() throws(BusError) {
        let bus = try Bus(.session)
        _ = try bus.call(
            "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "StartServiceByName", timeoutSeconds: 30
        ) { (message) throws(BusError) in
            try message.append(Self.busName)
            try message.append(UInt32(0))
        }
    }

    /// Runs `systemctl --user` with `arguments`; a failure is thrown with what it printed.
    func systemctl(_ arguments: [String]) throws {
        let (status, output) = try Self.run("/usr/bin/systemctl", ["--user"] + arguments, environment: environment)
        guard status == 0 else {
            throw CommandFailure(
                message: "`systemctl --user \(arguments.joined(separator: " "))` failed (status \(status)): \(output)")
        }
    }

    /// Runs a program to its end, with no input; its exit status and what it printed on standard output, and on
    /// standard error unless `errors` is false (then discarded).
    static func run(_ executable: String, _ arguments: [String], environment: [String: String], errors: Bool = true)
        throws -> (Int32, String)
    {
        let pipe = try Pipes.make()
        var options = Spawn.Options(newSession: true, closeInheritedDescriptors: true)
        options.standardOutput = .descriptor(pipe.write)
        if !errors { options.standardError = .null }
        let pid: Int32
        do {
            pid = try Spawn.start(executable, arguments, environment: environment, options: options)
        } catch {
            pipe.write.close()
            pipe.read.close()
            throw CommandFailure(message: "cannot run \(executable): \(error)")
        }
        pipe.write.close()
        defer { pipe.read.close() }
        let output: [UInt8]
        do {
            output = try pipe.read.readAll(limit: 1 << 20)
        } catch {
            output = Array("(its output could not be read: \(error))".utf8)
        }
        let status: Int32
        switch Spawn.wait(pid) {
        case .exited(let code)?: status = code
        case .signaled(let signal)?: status = 128 + signal
        case nil: status = -1
        }
        var text = Substring(String(decoding: output, as: UTF8.self))
        while text.last?.isWhitespace == true { text.removeLast() }
        return (status, String(text))
    }
}
