import Foundation
import LatchkeyTPM

#if canImport(Glibc)
import Glibc
#endif

/// A TPM 2.0 of the test's own: Debian's `swtpm` in socket mode on a private state directory, on two free
/// local TCP ports (commands on `port`, control on `port + 1`), started and stopped by pid. Another
/// `SoftwareTPM` is another machine's TPM (its own seeds); `clear()` is a TPM clear.
///
/// `stop()` shuts the TPM down in order (TPM2_Shutdown, then SIGTERM): a TPM that loses power unorderly
/// counts a dictionary-attack failure on its next start, which would make tests of the lockout flaky. Only
/// tests of a TPM vanishing mid-call use `kill()`.
public final class SoftwareTPM: @unchecked Sendable {
    // @unchecked: the process and the port change only in start/stop/clear, which a test calls from one thread.
    /// The state directory (`--tpmstate dir=`), kept across `stop()`/`start()`.
    public let directory: String
    public private(set) var port: UInt16 = 0
    private var server: SpawnedProcess?

    /// The TCTI string Latchkey reads from LATCHKEY_TPM_TCTI.
    public var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

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
        try connection.setDictionaryAttackParameters(maxTries: maxTries, recoveryInterval: recoveryInterval, lockoutRecovery: recoveryInterval)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts swtpm on two free ports and waits until it answers.
    public func start() throws {
        var lastError: (any Error)?
        for _ in 0..<20 {
            let candidate = try Self.freePortPair()
            let process = try SpawnedProcess(
                "/usr/bin/swtpm",
                ["socket", "--tpm2", "--tpmstate", "dir=\(directory)", "--server", "type=tcp,port=\(candidate),bindaddr=127.0.0.1",
                 "--ctrl", "type=tcp,port=\(candidate + 1),bindaddr=127.0.0.1", "--flags", "not-need-init,startup-clear"],
                environment: ["PATH": "/usr/bin:/bin"], log: directory + "/swtpm.log")
            port = candidate
            do {
                try waitUntil("swtpm answers on port \(candidate)", seconds: 10) {
                    guard process.isRunning else { return true }
                    return (try? TPMConnection(address: tcti))?.primaryName.isEmpty == false
                }
                if process.isRunning {
                    server = process
                    return
                }
                lastError = CocoaError(.featureUnsupported)  // The ports were taken meanwhile: try others.
            } catch {
                process.stop(signal: SIGKILL)
                lastError = error
            }
        }
        throw lastError ?? CocoaError(.featureUnsupported)
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
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name != "swtpm.log" {
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

    /// Two consecutive TCP ports on 127.0.0.1 that nothing listens on now.
    public static func freePortPair() throws -> UInt16 {
        for _ in 0..<200 {
            let candidate = UInt16.random(in: 20_000...60_000)
            if isFree(candidate) && isFree(candidate + 1) { return candidate }
        }
        throw CocoaError(.featureUnsupported)
    }

    private static func isFree(_ port: UInt16) -> Bool {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { return false }
        defer { close(socketDescriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
