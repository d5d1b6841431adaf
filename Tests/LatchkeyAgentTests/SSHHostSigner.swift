import Foundation
import LatchkeyTestSupport
import Testing

/// What a server (or a host the agent is forwarded to) proves to the agent in `session-bind@openssh.com`: its
/// host key's signature of a session identifier. The test makes those signatures with Debian's own
/// `ssh-agent`, started on a socket of its own and given the host keys' private files, so the bindings a test
/// sends by hand are ones a real host could send.
final class SSHHostSigner {
    let process: SpawnedProcess
    let socketPath: String

    /// An `ssh-agent` holding the private keys at `keys` (files).
    init(in sandbox: SSHSandbox, keys: [String]) throws {
        socketPath = sandbox.directory.file("host-signer-\(UUID().uuidString.prefix(8)).sock")
        process = try SpawnedProcess(
            "/usr/bin/ssh-agent", ["-D", "-a", socketPath], environment: ["PATH": "/usr/bin:/bin"],
            log: sandbox.directory.file("host-signer.log"))
        try waitUntil("ssh-agent's socket") { FileManager.default.fileExists(atPath: socketPath) }
        for key in keys {
            let added = try HelperProcess.run(
                "/usr/bin/ssh-add", ["-q", key], environment: ["PATH": "/usr/bin:/bin", "SSH_AUTH_SOCK": socketPath])
            #expect(added.status == 0, "\(added.stderr)")
        }
    }

    deinit { process.stop() }

    /// The signature blob (`string algorithm, string signature`) of `data` by the key whose public blob is
    /// `hostKey` (a plain key: a certificate's own key signs for it).
    func sign(_ data: [UInt8], by hostKey: [UInt8]) throws -> [UInt8] {
        let wire = try SSHAgentWire(path: socketPath)
        let reply = try #require(
            wire.exchange([13] + SSHAgentWire.string(hostKey) + SSHAgentWire.string(data) + SSHAgentWire.uint32(0)))
        try #require(reply.first == 14, "ssh-agent did not sign: \(reply)")
        return Array(reply.dropFirst(5))  // The type byte and the blob's length.
    }

    /// A `session-bind@openssh.com` request for the session `sessionID` with the host key `shown` (a plain
    /// key or a certificate), signed by `signer` (the plain key that signs for it).
    func binding(shown: [UInt8], signer: [UInt8], sessionID: [UInt8], forwarding: Bool) throws -> [UInt8] {
        SSHAgentWire.sessionBind(
            hostKey: shown, sessionID: sessionID, signature: try sign(sessionID, by: signer), forwarding: forwarding)
    }
}

extension SSHAgentWire {
    /// `session-bind@openssh.com` with these fields, as ssh sends it.
    static func sessionBind(hostKey: [UInt8], sessionID: [UInt8], signature: [UInt8], forwarding: Bool) -> [UInt8] {
        [27] + string("session-bind@openssh.com") + string(hostKey) + string(sessionID) + string(signature)
            + [forwarding ? 1 : 0]
    }

    /// The data ssh signs to log in as `user` with the key `key` (`publickey-hostbound-v00@openssh.com` when
    /// `hostKey` is given, else `publickey`).
    static func login(sessionID: [UInt8], user: [UInt8], key: [UInt8], algorithm: String, hostKey: [UInt8]? = nil)
        -> [UInt8]
    {
        string(sessionID) + [50] + string(user) + string("ssh-connection")
            + string(hostKey == nil ? "publickey" : "publickey-hostbound-v00@openssh.com") + [1] + string(algorithm)
            + string(key) + (hostKey.map { string($0) } ?? [])
    }

    /// A sign request for `key` of `data`.
    static func signRequest(key: [UInt8], data: [UInt8], flags: UInt32 = 0) -> [UInt8] {
        [13] + string(key) + string(data) + uint32(flags)
    }

    /// The blob of an OpenSSH public key line (`type base64 [comment]`) or of a `.pub` file's first line.
    static func blob(ofLine line: String) throws -> [UInt8] {
        let field = line.split(separator: " ")
        try #require(field.count >= 2, "not a public key line: \(line)")
        return Array(try #require(Data(base64Encoded: String(field[1]))))
    }

    /// The blob of the public key in the file `path`.
    static func blob(ofFile path: String) throws -> [UInt8] {
        try blob(ofLine: try String(contentsOfFile: path, encoding: .utf8))
    }
}
