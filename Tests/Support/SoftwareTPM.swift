import Foundation
import LatchkeyTPM

#if canImport(Glibc)
    import Glibc
#endif

/// A TPM 2.0 of the test's own: Debian's `swtpm` in socket mode on a private state directory, listening on
/// Unix sockets in that directory (no ports to collide between tests run in parallel), started and stopped
/// by pid. Another
/// `SoftwareTPM` is another machine's TPM (its own seeds); `clear()` is a TPM clear.
///
/// `stop()` shuts the TPM down in order (TPM2_Shutdown, then SIGTERM): a TPM that loses power unorderly
/// counts a dictionary-attack failure on its next start, which would make tests of the lockout flaky. Only
/// tests of a TPM vanishing mid-call use `kill()`.
public final class SoftwareTPM: @unchecked Sendable {
    // @unchecked: the process changes only in start/stop/clear, which a test calls from one thread.
    /// The state directory (`--tpmstate dir=`), kept across `stop()`/`start()`.
    public let directory: String
    private var server: SpawnedProcess?

    /// The command socket (`<socketPath>.ctrl` is the control socket).
    public var socketPath: String { directory + "/swtpm.sock" }

    /// The TCTI string Latchkey reads from LATCHKEY_TPM_TCTI.
    public var tcti: String { "swtpm:path=\(socketPath)" }

    /// The environment a child needs to use this TPM.
    public var environment: [String: String] { ["LATCHKEY_TPM_TCTI": tcti] }

    /// Starts a fresh TPM in a new temporary directory, with a small lockout budget (`maxTries` wrong
    /// authorizations; one forgiven every `recoveryInterval` seconds) so tests reach lockout quickly.
    public init(maxTries: Int = 5, recoveryInterval: Int = 1000) throws {
        var template = Array("/tmp/latchkey-swtpm-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw CocoaError(.fileWriteUnknown) }
        directory = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
        try start()
        let connection = try TPMConnection(address: tcti)
        defer { connection.close() }
        try connection.setDictionaryAttackParameters(
            maxTries: maxTries, recoveryInterval: recoveryInterval, lockoutRecovery: recoveryInterval)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Lets another user's programs reach this TPM (a PAM test's throwaway user): its directory and the
    /// sockets swtpm listens on now become that user's. A `start()` after this makes root's sockets again.
    public func share(withUser uid: uid_t, group gid: gid_t) throws {
        for path in [directory, socketPath, socketPath + ".ctrl"] {
            guard chown(path, uid, gid) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPERM) }
        }
    }

    /// Starts swtpm on its Unix sockets and waits until it answers.
    public func start() throws {
        for path in [socketPath, socketPath + ".ctrl"] where FileManager.default.fileExists(atPath: path) {
            try FileManager.default.removeItem(atPath: path)  // A stopped swtpm's socket files.
        }
        let process = try SpawnedProcess(
            "/usr/bin/swtpm",
            [
                "socket", "--tpm2", "--tpmstate", "dir=\(directory)", "--server", "type=unixio,path=\(socketPath)",
                "--ctrl", "type=unixio,path=\(socketPath).ctrl", "--flags", "not-need-init,startup-clear",
            ],
            environment: ["PATH": "/usr/bin:/bin"], log: directory + "/swtpm.log")
        do {
            try waitUntil("swtpm answers on \(socketPath)", seconds: 30) {
                guard process.isRunning else { throw CocoaError(.executableLoad) }  // See swtpm.log.
                return (try? TPMConnection(address: tcti))?.primaryName.isEmpty == false
            }
        } catch {
            process.stop(signal: SIGKILL)
            throw error
        }
        server = process
    }

    /// An orderly shutdown (TPM2_Shutdown(CLEAR)), then SIGTERM, waiting for the process to end.
    public func stop() {
        guard let server else { return }
        if let connection = try? TPMConnection(address: tcti) {
            try? connection.shutdown()  // Best effort: a TPM already gone has nothing to save.
            connection.close()
        }
        server.stop()
        self.server = nil
    }

    /// SIGKILL: the TPM vanishes at once (a power cut, unorderly).
    public func kill() {
        server?.stop(signal: SIGKILL)
        server = nil
    }

    /// A TPM clear: stops it, wipes its state (new seeds: nothing sealed before loads again) and starts it.
    public func clear() throws {
        stop()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        where !name.hasPrefix("swtpm.") {
            try FileManager.default.removeItem(atPath: directory + "/" + name)
        }
        try start()
    }

    /// The TPM's lockout state (failed tries counted, whether it is locked out).
    package func lockoutState() throws -> TPMLockoutState {
        let connection = try TPMConnection(address: tcti)
        defer { connection.close() }
        return try connection.lockoutState()
    }

    /// Extends PCR `index` (SHA-256 bank) with `digest` (a measured-boot step).
    public func extendPCR(_ index: Int, with digest: Data) throws {
        let connection = try TPMConnection(address: tcti)
        defer { connection.close() }
        try connection.extendPCR(index, with: digest)
    }
}
