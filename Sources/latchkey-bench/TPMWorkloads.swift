import Foundation
import Latchkey
import LatchkeyPOSIX
import LatchkeyTPM

/// `latchkey-bench --tpm`: unlocking a keychain with the passphrase alone and with the passphrase entangled
/// with a TPM (a swtpm the bench starts on a private directory and stops in order), the TPM's own part, the
/// unattended (PCR) unlock, what one offline guess against a stolen file costs before and after enrolling,
/// and a P-256 signature by a `kSecAttrTokenIDSecureEnclave` key made inside the TPM beside one by a key held in
/// software (in memory where the keychain runs), the engine's own calls both.
struct TPMWorkloads {
    let samples: Int

    struct Row {
        let name: String
        let samples: Samples
    }

    /// A swtpm on Unix sockets in a private directory, stopped with TPM2_Shutdown then SIGTERM.
    final class SoftwareTPMServer {
        let directory: String
        var pid: Int32?
        var tcti: String { "swtpm:path=\(directory)/swtpm.sock" }

        init() throws {
            directory = NSTemporaryDirectory() + "/latchkey-bench-swtpm-\(ProcessInfo.processInfo.processIdentifier)"
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let started = try Spawn.start(
                "/usr/bin/swtpm",
                [
                    "socket", "--tpm2", "--tpmstate", "dir=\(directory)", "--server",
                    "type=unixio,path=\(directory)/swtpm.sock",
                    "--ctrl", "type=unixio,path=\(directory)/swtpm.sock.ctrl", "--flags", "not-need-init,startup-clear",
                ],
                environment: ["PATH": "/usr/bin:/bin"], options: Spawn.Options(outputPath: directory + "/swtpm.log"))
            let deadline = Date().addingTimeInterval(30)
            while Spawn.poll(started) == nil, Date() < deadline {
                // Not answering yet is the answer to wait for, not an error.
                if (try? TPMConnection(address: tcti)) != nil {
                    pid = started
                    return
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
            Spawn.signal(started, SIGKILL)
            _ = Spawn.wait(started)
            throw BenchError("swtpm did not start (\(directory)/swtpm.log)")
        }

        func stop() {
            guard let pid else { return }
            if let connection = try? TPMConnection(address: tcti) {
                try? connection.shutdown()  // Best effort: an orderly stop keeps the lockout counter as it is.
                connection.close()
            }
            Spawn.signal(pid, SIGTERM)
            _ = Spawn.wait(pid)
            self.pid = nil
            try? FileManager.default.removeItem(atPath: directory)  // Scratch files; a leftover only costs disk.
        }
    }

    func measure(_ body: () throws -> Void) rethrows -> Samples {
        var result = Samples()
        for _ in 0..<samples { result.nanoseconds.append(try time(body)) }
        return result
    }

    func run() throws -> (rows: [Row], lockout: TPMLockoutState) {
        let server = try SoftwareTPMServer()
        defer { server.stop() }
        // The bench is its own process and single-threaded here: the engine reads the TPM's address from it.
        Environment.setDefault(TPMAddress.environmentVariable, server.tcti)
        let directory = server.directory + "/keychains"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let passphrase = Passphrase("bench passphrase")
        let plain = try KeychainDatabase.create(at: directory + "/plain.keychain", passphrase: passphrase)
        let enrolled = try KeychainDatabase.create(at: directory + "/enrolled.keychain", passphrase: passphrase)
        _ = try enrolled.enrollTPM(passphrase: passphrase)
        let unattended = try KeychainDatabase.create(at: directory + "/unattended.keychain", passphrase: passphrase)
        _ = try unattended.enrollUnattended(passphrase: passphrase, pcrs: [7])
        var rows: [Row] = []
        rows.append(
            Row(
                name: "unlock, passphrase only (Argon2id, 64 MiB, 3 passes) = one offline guess before enrolling",
                samples: try measure { try plain.unlock(with: passphrase) }))
        rows.append(
            Row(
                name: "unlock, passphrase entangled with the TPM (Argon2id + TPM unseal)",
                samples: try measure { try enrolled.unlock(with: passphrase) }))
        rows.append(
            Row(
                name: "the TPM's part: connect, primary (ECC P-256), salted session, close",
                samples: try measure {
                    let connection = try TPMConnection(address: server.tcti)
                    connection.close()
                }))
        rows.append(
            Row(
                name: "unlock unattended (PCR 7 policy, no passphrase)",
                samples: try measure { try unattended.unlockUnattended() }))
        rows.append(
            Row(
                name: "open an enrolled keychain (the device key unsealed by the TPM)",
                samples: try measure {
                    _ = try KeychainDatabase.open(at: directory + "/enrolled.keychain")
                }))
        rows += try signatureRows(plain)
        let connection = try TPMConnection(address: server.tcti)
        defer { connection.close() }
        return (rows, try connection.lockoutState())
    }

    /// The names of the two signature rows, whose ratio `render` prints.
    static let softwareSign = "P-256 sign (ECDSA, SHA-256), key held in software (in memory)"
    static let tpmSign = "P-256 sign (ECDSA, SHA-256), key made inside the TPM (connect, load, sign, flush)"

    /// A signature of a short message by a Secure Enclave key the TPM made, and by one held in software.
    private func signatureRows(_ keychain: KeychainDatabase) throws -> [Row] {
        let caller = CallerIdentity(applicationIdentifier: "latchkey-bench", accessGroups: ["latchkey-bench"])
        let algorithm = KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")
        let message = Data("a message to sign".utf8)
        func make(_ token: String, tag: String) throws -> Data {
            let request = HeldKeyRequest(
                type: .ellipticCurve, bits: 256,
                attributes: [.tokenID: .string(token), .applicationTag: .data(Data(tag.utf8))])
            guard let made = try keychain.createHeldKey(request, caller: caller, returning: [.attributes]),
                made.attributes[.keyStorage] == .string(token == HeldKeyRequest.latchkeyTokenID ? "software" : "tpm")
            else { throw BenchError("the \(tag) key was not made where it should be") }
            return made.persistentReference
        }
        let software = try make(HeldKeyRequest.latchkeyTokenID, tag: "bench.software")
        let tpm = try make(HeldKeyRequest.secureEnclaveTokenID, tag: "bench.tpm")
        _ = try keychain.useHeldKey(software, for: .sign(algorithm, message), caller: caller)  // Loads it once.
        return [
            Row(
                name: Self.softwareSign,
                samples: try measure {
                    _ = try keychain.useHeldKey(software, for: .sign(algorithm, message), caller: caller)
                }),
            Row(
                name: Self.tpmSign,
                samples: try measure {
                    _ = try keychain.useHeldKey(tpm, for: .sign(algorithm, message), caller: caller)
                }),
        ]
    }

    static func render(_ result: (rows: [Row], lockout: TPMLockoutState), samples: Int, command: String) -> String {
        var lines = [
            "TPM (swtpm, socket TCTI, on this machine): median of \(samples) runs each (`\(command)`)", "",
            "| operation | median | p10 | p90 |", "|---|---|---|---|",
        ]
        for row in result.rows {
            lines.append(
                "| \(row.name) | \(formatDuration(row.samples.median)) | \(formatDuration(row.samples.p10)) | \(formatDuration(row.samples.p90)) |"
            )
        }
        let guess = result.rows.first.map { formatDuration($0.samples.median) } ?? "?"
        if let software = result.rows.first(where: { $0.name == softwareSign }),
            let tpm = result.rows.first(where: { $0.name == tpmSign }), software.samples.median > 0
        {
            lines += [
                "",
                "A P-256 signature by a key made inside the TPM takes \(String(format: "%.0f", tpm.samples.median / software.samples.median))× one by a key held in software (TPM ÷ software, medians of the same run).",
            ]
        }
        lines += [
            "",
            "One offline guess against a stolen file: before enrolling, one Argon2id (\(guess) here, as many in parallel as the attacker's hardware runs);",
            "after enrolling, none can be checked off the machine (the key check needs the TPM's secret), and on it each guess is a TPM unseal that the",
            "TPM counts: \(result.lockout.maxTries) failures lock it out, one is forgiven every \(result.lockout.recoveryInterval) s (this swtpm's settings).",
        ]
        return lines.joined(separator: "\n")
    }
}
