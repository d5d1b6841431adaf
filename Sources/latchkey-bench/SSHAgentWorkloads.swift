import Foundation
import LatchkeyPOSIX
import LatchkeyProtocol
import Synchronization

/// An SSH signature through latchkeyd's SSH agent beside OpenSSH's `ssh-agent` and gpg-agent's SSH support
/// (`--peers`, or alone with `--ssh`): the same key (made by ssh-keygen, added with ssh-add to each agent),
/// the same client — a connection per signature, as `ssh` makes one per session, then
/// SSH2_AGENTC_SIGN_REQUEST of 256 bytes and its reply — one client at a time, then 16 at once. Issue 34's
/// goal: p95 under 20 ms with 16 clients at once.
struct SSHAgentWorkloads {
    let samples: Int
    let binDirectory: String
    /// Clients at once in the concurrent run.
    static let clients = 16

    /// One agent's figures for one key type.
    struct Result {
        let agent: String
        let keyType: String
        let single: Samples
        let concurrent: Samples
    }

    func run() throws -> [Result] {
        let root = NSTemporaryDirectory() + "latchkey-bench-ssh-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(
            atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: root) }  // Scratch files; a leftover only costs disk.
        var started: [Int32] = []
        var gnupgHome: String?
        defer {
            for pid in started {
                Spawn.signal(pid, SIGTERM)
                _ = Spawn.wait(pid)
            }
            if let gnupgHome {
                _ = try? command("/usr/bin/gpgconf", ["--homedir", gnupgHome, "--kill", "gpg-agent"], environment: [:])
            }  // Stopping: nothing to report.
        }
        let base = ["PATH": "/usr/bin:/bin", "HOME": root, "LANG": "C.UTF-8"]

        // latchkeyd, on a keychain of its own, unlocked.
        let keychain = root + "/ssh.keychain"
        let agentSocket = root + "/latchkey/agent.sock"
        let latchkeySSH = root + "/latchkey/ssh-agent.sock"
        var latchkeyEnvironment = base.merging([
            "LATCHKEY_KEYCHAIN": keychain, "LATCHKEY_AGENT_SOCKET": agentSocket,
            "LATCHKEY_PASSPHRASE": ToolComparison.passphrase, "LATCHKEY_PINENTRY": root + "/no-pinentry",
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + root + "/no-bus",
        ]) { $1 }
        try command(binDirectory + "/latchkey", ["create-keychain"], environment: latchkeyEnvironment)
        latchkeyEnvironment["LATCHKEY_PASSPHRASE"] = nil
        started.append(try Spawn.start(binDirectory + "/latchkeyd", ["--no-sync"], environment: latchkeyEnvironment))
        try waitFor(latchkeySSH)
        latchkeyEnvironment["LATCHKEY_PASSPHRASE"] = ToolComparison.passphrase
        try command(binDirectory + "/latchkey", ["unlock-keychain"], environment: latchkeyEnvironment)

        // OpenSSH's ssh-agent.
        let openSSH = root + "/openssh-agent.sock"
        started.append(try Spawn.start("/usr/bin/ssh-agent", ["-D", "-a", openSSH], environment: base))
        try waitFor(openSSH)

        // gpg-agent with SSH support; its pinentry accepts an empty passphrase, so keys are stored unprotected.
        let home = root + "/gnupg"
        try FileManager.default.createDirectory(
            atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let pinentry = root + "/empty-pinentry"
        try "#!/bin/sh\necho OK\nwhile read -r line; do echo OK; [ \"$line\" = BYE ] && exit 0; done\n".write(
            toFile: pinentry, atomically: true, encoding: .utf8)
        chmod(pinentry, 0o755)
        try "pinentry-program \(pinentry)\nenable-ssh-support\n".write(
            toFile: home + "/gpg-agent.conf", atomically: true, encoding: .utf8)
        gnupgHome = home
        let gpgEnvironment = base.merging(["GNUPGHOME": home]) { $1 }
        try command("/usr/bin/gpgconf", ["--homedir", home, "--launch", "gpg-agent"], environment: gpgEnvironment)
        let gpgSSH = String(
            decoding: try command(
                "/usr/bin/gpgconf", ["--homedir", home, "--list-dirs", "agent-ssh-socket"],
                environment: gpgEnvironment), as: UTF8.self
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        try waitFor(gpgSSH)

        var results: [Result] = []
        for (type, keygen) in [("Ed25519", ["-t", "ed25519"]), ("ECDSA P-256", ["-t", "ecdsa", "-b", "256"])] {
            let key = root + "/id_" + (keygen[1] == "ed25519" ? "ed25519" : "ecdsa")
            try command(
                "/usr/bin/ssh-keygen", ["-q", "-N", "", "-C", "bench"] + keygen + ["-f", key], environment: base)
            let blob = try publicBlob(key + ".pub")
            for (agent, socket, environment) in [
                ("latchkeyd", latchkeySSH, base), ("ssh-agent (OpenSSH)", openSSH, base),
                ("gpg-agent (GnuPG)", gpgSSH, gpgEnvironment),
            ] {
                try command(
                    "/usr/bin/ssh-add", ["-q", key], environment: environment.merging(["SSH_AUTH_SOCK": socket]) { $1 })
                FileHandle.standardError.write(Data("latchkey-bench: ssh: \(agent), \(type)...\n".utf8))
                _ = try sign(socket, blob)  // Warm: the agent's first use of the key.
                var single: [Double] = []
                for _ in 0..<samples { single.append(try sign(socket, blob)) }
                results.append(
                    Result(
                        agent: agent, keyType: type, single: Samples(single),
                        concurrent: Samples(try concurrent(socket, blob))))
            }
        }
        return results
    }

    /// One signature on a fresh connection; its duration in nanoseconds.
    func sign(_ socket: String, _ blob: Data) throws -> Double {
        var request = Data([13])
        request.append(Self.string(blob))
        request.append(Self.string(Data((0..<256).map { UInt8($0 & 0xFF) })))
        request.append(contentsOf: [0, 0, 0, 0])
        var reply = Data()
        let duration = try time {
            guard let stream = AgentStream.connect(path: socket) else { throw CocoaError(.fileReadNoSuchFile) }
            do {
                try stream.send(request)
                reply = try stream.receive(limit: 1 << 20)
            } catch {
                throw CocoaError(.fileReadUnknown)
            }
        }
        guard reply.first == 14 else {
            fail("the agent at \(socket) did not sign (reply \(reply.first.map(String.init) ?? "none"))")
        }
        return duration
    }

    /// `samples` signatures by 16 clients at once (each its share, on its own thread); every duration.
    func concurrent(_ socket: String, _ blob: Data) throws -> [Double] {
        let collected = Mutex<[Double]>([])
        let failures = Mutex(0)
        let share = max(1, samples / Self.clients)
        let group = DispatchGroup()
        for _ in 0..<Self.clients {
            group.enter()
            let thread = Thread {
                var mine: [Double] = []
                for _ in 0..<share {
                    do {
                        mine.append(try sign(socket, blob))
                    } catch {
                        failures.withLock { $0 += 1 }
                    }
                }
                collected.withLock { $0.append(contentsOf: mine) }
                group.leave()
            }
            thread.start()
        }
        group.wait()
        guard failures.withLock({ $0 }) == 0 else {
            fail("\(failures.withLock { $0 }) signatures through \(socket) failed")
        }
        return collected.withLock { $0 }
    }

    static func string(_ bytes: Data) -> Data {
        let count = UInt32(bytes.count)
        return Data([UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)])
            + bytes
    }

    func publicBlob(_ path: String) throws -> Data {
        let line = try String(contentsOfFile: path, encoding: .utf8)
        let fields = line.split(separator: " ")
        guard fields.count >= 2, let blob = Data(base64Encoded: String(fields[1])) else {
            fail("\(path) is not a public key line")
        }
        return blob
    }

    func waitFor(_ socket: String) throws {
        let deadline = Date().addingTimeInterval(10)
        while AgentStream.connect(path: socket) == nil {
            guard Date() < deadline else { fail("nothing listens on \(socket)") }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// Runs a program to its end; its standard output. A failure ends the benchmark.
    @discardableResult
    func command(_ path: String, _ arguments: [String], environment: [String: String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let problems = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            fail(
                "\(URL(fileURLWithPath: path).lastPathComponent) \(arguments.first ?? "") failed: \(String(decoding: problems, as: UTF8.self).suffix(300))"
            )
        }
        return data
    }

    /// The report's section.
    static func render(_ results: [Result], command: String) -> String {
        var lines = [
            "### An SSH signature through the agent (a connection per signature, as ssh makes one per session)", "",
            "`\(command)`; one client at a time, then \(clients) at once (issue 34's goal: p95 under 20 ms with \(clients)).",
            "",
            "| agent | key | median | p95 | median, \(clients) clients | p95, \(clients) clients |",
            "|---|---|---|---|---|---|",
        ]
        for result in results {
            lines.append(
                "| \(result.agent) | \(result.keyType) | \(formatDuration(result.single.median)) | \(formatDuration(result.single.percentile(0.95))) | \(formatDuration(result.concurrent.median)) | \(formatDuration(result.concurrent.percentile(0.95))) |"
            )
        }
        let worst = results.filter { $0.agent == "latchkeyd" }.map { $0.concurrent.percentile(0.95) }.max()
        if let worst {
            lines += [
                "",
                "latchkeyd's p95 with \(clients) clients: \(formatDuration(worst)) — goal under 20 ms: \(worst < 20e6 ? "met" : "not met").",
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
