import Foundation
import Latchkey
import LatchkeyPOSIX

/// `latchkey-bench --snapshot [--items N] [--samples N]`: a versioned snapshot of an N-item keychain (what
/// `latchkeyd --backup-directory` takes on its schedule) beside copying the keychain file (the floor: read
/// it, write a copy, fsync). The snapshot is measured in process (`KeychainDatabase.takeSnapshot`: the
/// database read in one transaction, framed, digested, written, synced and linked) and as `latchkey backup
/// now` (a process: its start and the keychain's opening are in the figure); and checking a snapshot whole
/// before a restore (`KeychainSnapshot.verifiedDatabase`: read and digest).
struct SnapshotWorkload {
    let items: Int
    let samples: Int
    let binDirectory: String

    struct Row {
        let items: Int
        let keychainBytes: Int64
        let snapshotBytes: Int64
        let copy: Samples
        let snapshot: Samples
        let command: Samples
        let verify: Samples
    }

    func run() throws -> Row {
        let directory = NSTemporaryDirectory() + "/latchkey-bench-snapshot-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }  // Scratch files; a leftover only costs disk.
        let path = directory + "/bench.keychain"
        FileHandle.standardError.write(Data("latchkey-bench: a keychain of \(items) items...\n".utf8))
        do {
            let keychain = try KeychainDatabase.create(
                at: path, passphrase: Passphrase("bench passphrase"), keyDerivation: .minimum)
            let caller = CallerIdentity(applicationIdentifier: "bench")
            var start = 0
            while start < items {
                let end = min(items, start + 5_000)
                try keychain.addAll(
                    (start..<end).map { index in
                        NewItem(
                            .genericPassword,
                            attributes: [
                                .service: .string("service \(index % 500)"), .account: .string("account \(index)"),
                                .label: .string("Item \(index)"),
                            ],
                            data: Data("secret-\(index)-\(UInt64(index) &* 0x9E37_79B9_7F4A_7C15)".utf8))
                    }, caller: caller)
                start = end
            }
        }  // Closed: the last connection checkpoints the log into the file, which is then the whole keychain.
        let keychain = try KeychainDatabase.open(at: path)
        let keychainBytes = FileStatus.of(path: path)?.size ?? 0
        var copy = Samples()
        var snapshot = Samples()
        var command = Samples()
        var verify = Samples()
        var snapshotBytes: Int64 = 0
        FileHandle.standardError.write(Data("latchkey-bench: snapshots of \(items) items...\n".utf8))
        for round in 0..<samples {
            let target = directory + "/copy-\(round)"
            copy.nanoseconds.append(
                try time {
                    let contents = try Files.read(path, limit: 1 << 31)
                    let descriptor = try Files.openTruncated(target)
                    try descriptor.writeAll(contents)
                    _ = fsync(descriptor.rawValue)
                    descriptor.close()
                })
            try? FileManager.default.removeItem(atPath: target)  // Scratch; a leftover only costs disk.
            let snapshots = directory + "/snapshots-\(round)"
            var taken: KeychainSnapshot?
            snapshot.nanoseconds.append(try time { taken = try keychain.takeSnapshot(into: snapshots, keep: 1) })
            snapshotBytes = taken?.size ?? 0
            if let taken {
                verify.nanoseconds.append(try time { _ = try KeychainSnapshot.verifiedDatabase(at: taken.path) })
            }
            var status: Int32 = -1
            command.nanoseconds.append(
                try time {
                    status = try run(
                        binDirectory + "/latchkey",
                        ["backup", "now", "--directory", snapshots, "--keep", "1", "-k", path],
                        environment: [
                            "HOME": directory, "PATH": "/usr/bin:/bin",
                            "LATCHKEY_AGENT_SOCKET": directory + "/no-agent.sock",
                        ])
                })
            guard status == 0 else { throw BenchError("latchkey backup now exited with \(status)") }
            try? FileManager.default.removeItem(atPath: snapshots)  // Scratch; a leftover only costs disk.
        }
        return Row(
            items: items, keychainBytes: keychainBytes, snapshotBytes: snapshotBytes, copy: copy, snapshot: snapshot,
            command: command, verify: verify)
    }

    func run(_ program: String, _ arguments: [String], environment: [String: String]) throws -> Int32 {
        var options = Spawn.Options()
        options.standardOutput = .null
        let pid = try Spawn.start(program, arguments, environment: environment, options: options)
        guard case .exited(let status)? = Spawn.wait(pid) else { return -1 }
        return status
    }

    static func render(_ row: Row, samples: Int, command: String) -> String {
        [
            "### A snapshot of a \(row.items.formatted())-item keychain", "", "`\(command)` (median of \(samples))", "",
            "| items | keychain file | snapshot | copying the file (the floor) | snapshot in process | `latchkey backup now` | checking it before a restore | snapshot ÷ floor |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|",
            "| \(row.items.formatted()) | \(row.keychainBytes.formatted()) bytes | \(row.snapshotBytes.formatted()) bytes | "
                + "\(formatDuration(row.copy.median)) | \(formatDuration(row.snapshot.median)) | "
                + "\(formatDuration(row.command.median)) | \(formatDuration(row.verify.median)) | "
                + String(format: "%.1f×", row.snapshot.median / row.copy.median) + " |",
        ].joined(separator: "\n") + "\n"
    }
}
