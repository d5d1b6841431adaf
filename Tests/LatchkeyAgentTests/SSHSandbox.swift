import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An agent sandbox used through its SSH agent socket by Debian's OpenSSH programs (`ssh-add`, `ssh-keygen`,
/// `ssh`), with a scripted pinentry (`Tests/Tools/fake-pinentry.py`): its log and answer files, and the
/// environment the OpenSSH programs get (no display, no terminal prompts: `SSH_ASKPASS` answers for them).
final class SSHSandbox: @unchecked Sendable {
    // @unchecked: used by one test at a time.
    let agent: AgentSandbox
    var directory: TemporaryDirectory { agent.directory }
    var socketPath: String { agent.directory.file("run/ssh-agent.sock") }
    var pinentryLog: String { agent.directory.file("pinentry.log") }
    var pinentryAnswer: String { agent.directory.file("pinentry.answer") }
    /// What `SSH_ASKPASS` prints (ssh-add's lock passphrase, a key file's passphrase).
    var askpassAnswer: String { agent.directory.file("askpass.answer") }

    init(start: Bool = true) throws {
        agent = try AgentSandbox()
        agent.agentEnvironment["LATCHKEY_PINENTRY"] = AgentHardeningTests.tools + "/fake-pinentry.py"
        agent.agentEnvironment["FAKE_PINENTRY_LOG"] = pinentryLog
        agent.agentEnvironment["FAKE_PINENTRY_ANSWER"] = pinentryAnswer
        try installScript("#!/bin/sh\nexec cat \"\(askpassAnswer)\"\n", at: directory.file("askpass"))
        try answerPinentry("cancel")
        if start {
            try agent.start()
            try agent.unlock()
            try waitUntil("the SSH agent socket") { FileManager.default.fileExists(atPath: socketPath) }
        }
    }

    /// The environment of the OpenSSH programs.
    var environment: [String: String] {
        [
            "HOME": directory.path, "PATH": "/usr/bin:/bin", "SSH_AUTH_SOCK": socketPath,
            "SSH_ASKPASS": directory.file("askpass"),
            "SSH_ASKPASS_REQUIRE": "force", "LC_ALL": "C",
        ]
    }

    func answerPinentry(_ how: String) throws {
        try (how + "\n").write(toFile: pinentryAnswer, atomically: true, encoding: .utf8)
    }
    func answerAskpass(_ text: String) throws {
        try (text + "\n").write(toFile: askpassAnswer, atomically: true, encoding: .utf8)
    }

    /// Runs an OpenSSH program (`ssh-add`, `ssh-keygen`, `ssh`) with the sandbox's environment.
    @discardableResult
    func run(_ program: String, _ arguments: [String], input: Data? = nil) throws -> HelperProcess.Output {
        try HelperProcess.run("/usr/bin/" + program, arguments, environment: environment, input: input, timeout: 60)
    }

    /// A shell job with the OpenSSH programs' environment: its commands are one process tree.
    func job() throws -> ShellJob {
        try ShellJob(in: directory.file("job-\(UUID().uuidString)"), environment: environment)
    }

    /// `ssh-add` with arguments.
    @discardableResult
    func sshAdd(_ arguments: String...) throws -> HelperProcess.Output { try run("ssh-add", arguments) }

    /// Makes a key pair with `ssh-keygen` (no passphrase) at `name` in the sandbox; returns the private key's path.
    func makeKey(_ name: String, type: String, bits: Int? = nil, comment: String? = nil) throws -> String {
        let path = directory.file(name)
        var arguments = ["-q", "-t", type, "-N", "", "-C", comment ?? name, "-f", path]
        if let bits { arguments += ["-b", String(bits)] }
        let made = try run("ssh-keygen", arguments)
        #expect(made.status == 0, "\(made.stderr)")
        return path
    }

    /// The public key line of a key file (`name.pub`), without its comment.
    func publicKey(_ path: String) throws -> String {
        let line = try String(contentsOfFile: path + ".pub", encoding: .utf8)
        return line.split(separator: " ").prefix(2).joined(separator: " ")
    }

    /// `ssh-keygen -lf`'s line for a key file: what `ssh-add -l` prints for it.
    func fingerprintLine(_ path: String) throws -> String {
        try run("ssh-keygen", ["-lf", path + ".pub"]).stdout
    }

    /// Moves a private key file away, so only the agent can sign with it.
    func hide(_ path: String) throws {
        try FileManager.default.moveItem(atPath: path, toPath: path + ".hidden")
    }

    /// The SSH keys' items in the keychain, read with the passphrase in this process (what the agent stored).
    func storedKeys() throws -> [ItemResult] {
        let database = try KeychainDatabase.open(at: agent.keychainPath)
        try database.unlock(with: Passphrase(AgentSandbox.passphrase))
        do {
            return try database.copyMatching(
                ItemQuery(
                    .key, matching: [.accessGroup: .string("com.latchkey.ssh")], synchronizable: .any, limit: .all,
                    returning: [.attributes]),
                caller: CallerIdentity(applicationIdentifier: "test", accessGroups: ["*"]))
        } catch KeychainError.itemNotFound {
            return []
        }
    }
}

/// A raw client of the SSH agent protocol, for what the OpenSSH programs never send (bad frames, chosen
/// flags).
final class SSHAgentWire {
    let descriptor: Int32

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(descriptor) }

    /// Sends raw bytes (a frame or part of one).
    func send(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { return }
            sent += count
        }
    }

    /// Sends one framed message.
    func request(_ body: [UInt8]) { send(Self.uint32(UInt32(body.count)) + body) }

    /// Reads one framed reply; nil when the agent closed the connection.
    func reply() -> [UInt8]? {
        guard let header = read(4) else { return nil }
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        return read(length)
    }

    /// A request, then its reply.
    func exchange(_ body: [UInt8]) -> [UInt8]? {
        request(body)
        return reply()
    }

    private func read(_ count: Int) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + filled, count - filled, 0) }
            guard got > 0 else { return nil }
            filled += got
        }
        return buffer
    }

    static func uint32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
    static func string(_ bytes: [UInt8]) -> [UInt8] { uint32(UInt32(bytes.count)) + bytes }
    static func string(_ text: String) -> [UInt8] { string(Array(text.utf8)) }

    /// The strings of a reply after its type byte (an identities answer: count, then blob and comment pairs).
    static func identities(_ reply: [UInt8]) -> [(blob: [UInt8], comment: String)]? {
        guard reply.first == 12, reply.count >= 5 else { return nil }
        let count = Int(reply[1]) << 24 | Int(reply[2]) << 16 | Int(reply[3]) << 8 | Int(reply[4])
        var position = 5
        func next() -> [UInt8]? {
            guard position + 4 <= reply.count else { return nil }
            let length =
                Int(reply[position]) << 24 | Int(reply[position + 1]) << 16 | Int(reply[position + 2]) << 8
                | Int(reply[position + 3])
            guard position + 4 + length <= reply.count else { return nil }
            defer { position += 4 + length }
            return Array(reply[(position + 4)..<(position + 4 + length)])
        }
        var keys: [(blob: [UInt8], comment: String)] = []
        for _ in 0..<count {
            guard let blob = next(), let comment = next() else { return nil }
            keys.append((blob, String(decoding: comment, as: UTF8.self)))
        }
        return keys
    }

    /// The algorithm name a sign response's signature blob starts with.
    static func signatureAlgorithm(_ reply: [UInt8]) -> String? {
        guard reply.first == 14, reply.count >= 13 else { return nil }
        let nameLength = Int(reply[5]) << 24 | Int(reply[6]) << 16 | Int(reply[7]) << 8 | Int(reply[8])
        guard 9 + nameLength <= reply.count else { return nil }
        return String(decoding: reply[9..<(9 + nameLength)], as: UTF8.self)
    }
}

/// An `sshd` of Debian's OpenSSH on 127.0.0.1 with a throwaway configuration: its own Ed25519 host key, a free
/// high port, and one `authorized_keys` file — started by the test and stopped by its pid. It runs as the
/// test's user: as root, sshd needs its privilege separation directory (`/run/sshd`, which Debian's service
/// makes at start and nothing else does), so it is made when missing; as another user sshd runs without it
/// and lets only that user in.
final class SSHServer {
    let process: SpawnedProcess
    let port: Int
    let directory: String
    var log: String { (try? String(contentsOfFile: directory + "/sshd.log", encoding: .utf8)) ?? "" }
    /// The user to log in as: the test's own.
    let user = String(cString: getpwuid(getuid()).pointee.pw_name)
    /// The host key's public line.
    let hostKey: String
    /// The host certificate's public line, when the server shows one (`hostCertificatePrincipal`).
    let hostCertificate: String?

    /// With `hostCertificatePrincipal`, the server also shows a host certificate of its key for that one
    /// principal (any bytes but NUL), signed by an authority of its own (`host_ca`) that no known_hosts names:
    /// ssh, finding no authority for it, checks the plain key instead and connects.
    init(
        in sandbox: SSHSandbox, authorizedKeys: [String], name: String = "sshd",
        hostCertificatePrincipal: [UInt8]? = nil
    ) throws {
        directory = sandbox.directory.file(name)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let made = try sandbox.run(
            "ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "host", "-f", directory + "/host_ed25519"])
        #expect(made.status == 0, "\(made.stderr)")
        hostKey = try sandbox.publicKey(directory + "/host_ed25519")
        var certificate: String?
        if let principal = hostCertificatePrincipal {
            let authority = try sandbox.run(
                "ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "host-ca", "-f", directory + "/host_ca"])
            #expect(authority.status == 0, "\(authority.stderr)")
            // The principal through printf's octal escapes: an argument of any bytes, UTF-8 or not.
            let escaped = principal.map { "\\" + String($0, radix: 8) }.joined()
            let signed = try sandbox.run(
                "sh",
                [
                    "-c",
                    "exec ssh-keygen -q -s \"$0/host_ca\" -I host -h -n \"$(printf '\(escaped)')\" \"$0/host_ed25519.pub\"",
                    directory,
                ])
            #expect(signed.status == 0, "\(signed.stderr)")
            certificate = try sandbox.publicKey(directory + "/host_ed25519-cert")
        }
        hostCertificate = certificate
        try (authorizedKeys.joined(separator: "\n") + "\n").write(
            toFile: directory + "/authorized_keys", atomically: true, encoding: .utf8)
        if getuid() == 0, !FileManager.default.fileExists(atPath: "/run/sshd") {
            try FileManager.default.createDirectory(
                atPath: "/run/sshd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        port = Self.freePort()
        let configuration = """
            Port \(port)
            ListenAddress 127.0.0.1
            HostKey \(directory)/host_ed25519
            \(hostCertificatePrincipal == nil ? "" : "HostCertificate \(directory)/host_ed25519-cert.pub")
            AuthorizedKeysFile \(directory)/authorized_keys
            StrictModes no
            UsePAM no
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            PermitRootLogin prohibit-password
            PidFile none
            LogLevel VERBOSE

            """
        try configuration.write(toFile: directory + "/sshd_config", atomically: true, encoding: .utf8)
        process = try SpawnedProcess(
            "/usr/sbin/sshd", ["-D", "-e", "-f", directory + "/sshd_config"], environment: ["PATH": "/usr/bin:/bin"],
            log: directory + "/sshd.log")
        try waitUntil("sshd to listen") {
            log.contains("Server listening on 127.0.0.1 port \(port)") || !process.isRunning
        }
        // The host key as known_hosts knows it, so ssh checks it strictly.
        try "[127.0.0.1]:\(port) \(hostKey)\n".write(
            toFile: directory + "/known_hosts", atomically: true, encoding: .utf8)
    }

    deinit { process.stop() }

    /// A port nothing listens on now (the kernel's pick of a free one).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// `ssh` through the agent with the key of `identity` (its `.pub`: the private key may be gone), running
    /// `command` on the server.
    func ssh(_ sandbox: SSHSandbox, identity: String, command: String = "echo logged in", extra: [String] = []) throws
        -> HelperProcess.Output
    {
        try sandbox.run("ssh", sshArguments(identity: identity, command: command, extra: extra))
    }

    /// The same login run in `job`: one of a run of logins by one process tree.
    func ssh(in job: ShellJob, identity: String) throws -> ShellJob.Output {
        try job.run("/usr/bin/ssh", sshArguments(identity: identity))
    }

    /// The same login as one shell command line, for a session on another server to run (a hop).
    func commandLine(identity: String, command: String = "echo logged in") -> String {
        (["/usr/bin/ssh"] + sshArguments(identity: identity, command: command)).map { "'" + $0 + "'" }.joined(
            separator: " ")
    }

    private func sshArguments(identity: String, command: String = "echo logged in", extra: [String] = []) -> [String] {
        [
            "-F", "/dev/null", "-o", "IdentityFile=\(identity).pub", "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=\(directory)/known_hosts",
            "-o", "ConnectTimeout=20", "-p", String(port),
        ] + extra + ["\(user)@127.0.0.1", command]
    }
}
