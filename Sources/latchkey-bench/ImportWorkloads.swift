import Foundation
import Latchkey
import LatchkeyFormats
import LatchkeyPOSIX

/// `latchkey-bench --import [--items N] [--samples N]`: importing N items from each format `latchkey import
/// --from` reads — a Chromium CSV export, a GNOME Keyring keyring file (4,095 hash iterations, the most
/// gnome-keyring writes), a KeePass database saved by keepassxc-cli with Latchkey's default Argon2d
/// (KeePassXC's: 64 MiB, 10 iterations, 2 lanes; uncompressed, as Latchkey wrote it: KeePassXC keeps a
/// database's compression), and a `pass` store
/// (one gpg file per entry, a throwaway key) — beside copying the file (the floor: read it, write a copy,
/// fsync), and beside reading it in this process without a keychain (decrypting, decompressing, parsing).
/// `latchkey import` runs as a process on a new keychain each time (its unlock, an Argon2id of 64 MiB, is in
/// the figure).
struct ImportWorkloads {
    let items: Int
    let samples: Int
    let binDirectory: String
    /// The formats measured (`--formats csv,pass`; all by default).
    var formats: Set<String> = ["csv", "gnome-keyring", "kdbx", "pass"]

    struct Row {
        let format: String
        let note: String
        let fileBytes: Int
        let copy: Samples
        let read: Samples
        let importing: Samples
    }

    static let password = "bench file password"

    func entries() -> [PasswordEntry] {
        (0..<items).map { index in
            PasswordEntry(
                title: "Site \(index)", groups: ["Group \(index % 20)"], username: "user\(index)@example.com",
                password: Data("Pw-\(index)-\(UInt64(index) &* 0x9E37_79B9_7F4A_7C15)".utf8),
                url: "https://host\(index).example.com/login", notes: index % 3 == 0 ? "note \(index)\nsecond line" : ""
            )
        }
    }

    func run() throws -> [Row] {
        let directory = NSTemporaryDirectory() + "/latchkey-bench-import-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }  // Scratch files; a leftover only costs disk.
        let entries = entries()
        var rows: [Row] = []

        if formats.contains("csv") { try csvRow(entries, directory: directory, rows: &rows) }
        if formats.contains("gnome-keyring") { try keyringRow(entries, directory: directory, rows: &rows) }
        if formats.contains("kdbx") { try kdbxRow(entries, directory: directory, rows: &rows) }
        // A pass store, when gpg and pass are installed.
        if formats.contains("pass") && FileManager.default.isExecutableFile(atPath: "/usr/bin/gpg") {
            rows.append(try passRow(entries, directory: directory))
        }
        return rows
    }

    /// CSV, as Chromium writes it.
    func csvRow(_ entries: [PasswordEntry], directory: String, rows: inout [Row]) throws {
        func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        let csv = directory + "/passwords.csv"
        try Data(
            ("name,url,username,password,note\n"
                + entries.map {
                    [$0.title, $0.url, $0.username, String(decoding: $0.password, as: UTF8.self), $0.notes].map(quoted)
                        .joined(separator: ",")
                }.joined(separator: "\n") + "\n").utf8
        ).write(to: URL(fileURLWithPath: csv))
        rows.append(
            try measure("csv", csv, note: "Chromium's columns", directory: directory) {
                _ = try BrowserExport.read(try Files.read(csv, limit: 1 << 30), what: csv)
            })
    }

    /// A keyring file: Secret Service items as secret-tool stores them.
    func keyringRow(_ entries: [PasswordEntry], directory: String, rows: inout [Row]) throws {
        let keyringPath = directory + "/bench.keyring"
        let keyring = KeyringFile(
            name: "Bench", created: Date(), modified: Date(),
            items: entries.map {
                KeyringFile.Item(
                    label: $0.title, secret: $0.password,
                    attributes: [
                        "service": $0.url, "user": $0.username, "xdg:schema": "org.freedesktop.Secret.Generic",
                    ],
                    created: Date(), modified: Date())
            })
        try Data(try keyring.written(password: Passphrase(Self.password), iterations: 4_095)).write(
            to: URL(fileURLWithPath: keyringPath))
        rows.append(
            try measure("gnome-keyring", keyringPath, note: "4,095 hash iterations", directory: directory) {
                _ = try KeyringFile.read(
                    try Files.read(keyringPath, limit: 1 << 30), password: Passphrase(Self.password))
            })
    }

    /// KDBX 4, saved again by keepassxc-cli when it is installed.
    func kdbxRow(_ entries: [PasswordEntry], directory: String, rows: inout [Row]) throws {
        let kdbx = directory + "/bench.kdbx"
        try Data(
            try KDBXWriter.write(name: "Bench", entries: entries, password: Passphrase(Self.password), keyFile: nil)
                .bytes
        ).write(to: URL(fileURLWithPath: kdbx))
        var note = "Argon2d 64 MiB × 10, written by Latchkey"
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/keepassxc-cli") {
            let saved = try run(
                "/usr/bin/keepassxc-cli", ["add", "-q", "-u", "bench", "-p", kdbx, "Saved by KeePassXC"],
                input: "\(Self.password)\nbench\n", environment: ["HOME": directory, "PATH": "/usr/bin:/bin"])
            if saved == 0 { note = "Argon2d 64 MiB × 10, saved by keepassxc-cli" }
        }
        rows.append(
            try measure("kdbx", kdbx, note: note, directory: directory) {
                _ = try KDBXDatabase.read(
                    try Files.read(kdbx, limit: 1 << 30), password: Passphrase(Self.password), keyFile: nil)
            })
    }

    /// A pass store of the entries under a throwaway key (no passphrase), four gpg processes at a time.
    func passRow(_ entries: [PasswordEntry], directory: String) throws -> Row {
        let gnupg = directory + "/gnupg"
        let store = directory + "/store"
        try FileManager.default.createDirectory(
            atPath: gnupg, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let environment = ["HOME": directory, "PATH": "/usr/bin:/bin", "GNUPGHOME": gnupg]
        // The key's agent goes with the store (`try?`: one that already went is as good).
        defer { _ = try? run("/usr/bin/gpgconf", ["--kill", "all"], environment: environment) }
        guard
            try run(
                "/usr/bin/gpg",
                [
                    "--batch", "--quiet", "--passphrase", "", "--quick-gen-key", "Bench <bench@example.com>", "default",
                    "default", "never",
                ],
                environment: environment) == 0
        else { throw BenchError("gpg could not make a key") }
        var pending: [Int32] = []
        for (index, entry) in entries.enumerated() {
            let folder = store + "/" + entry.groups.joined(separator: "/")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let plain = directory + "/plain-\(index % 4)"
            if pending.count == 4 { _ = Spawn.wait(pending.removeFirst()) }
            try Data((String(decoding: entry.password, as: UTF8.self) + "\n" + entry.notes).utf8).write(
                to: URL(fileURLWithPath: plain))
            pending.append(
                try Spawn.start(
                    "/usr/bin/gpg",
                    [
                        "--batch", "--quiet", "--yes", "--trust-model", "always", "--encrypt", "-r",
                        "bench@example.com", "-o", folder + "/" + entry.title + ".gpg", plain,
                    ],
                    environment: environment))
            if pending.count == 4 {
                for pid in pending { _ = Spawn.wait(pid) }
                pending = []
            }
        }
        for pid in pending { _ = Spawn.wait(pid) }
        let files = try PasswordStore.files(in: store)
        return try measure("pass", store, note: "one gpg process per entry", directory: directory, extra: environment) {
            for file in files {
                _ = try PasswordStore.decrypt(
                    store + "/" + file, gpg: "/usr/bin/gpg", options: [], environment: environment)
            }
        }
    }

    func run(_ program: String, _ arguments: [String], input: String? = nil, environment: [String: String]) throws
        -> Int32
    {
        var options = Spawn.Options()
        var inputPipe: (read: FileDescriptor, write: FileDescriptor)?
        if input != nil {
            let pipe = try Pipes.make()
            inputPipe = pipe
            options.standardInput = .descriptor(pipe.read)
        }
        let pid = try Spawn.start(program, arguments, environment: environment, options: options)
        if let inputPipe, let input {
            inputPipe.read.close()
            try inputPipe.write.writeAll(Array(input.utf8))
            inputPipe.write.close()
        }
        guard case .exited(let status)? = Spawn.wait(pid) else { return -1 }
        return status
    }

    /// The floor (copying the file or the store), reading in process, and `latchkey import` on a new keychain.
    func measure(
        _ format: String, _ path: String, note: String, directory: String, extra: [String: String] = [:],
        read: () throws -> Void
    ) throws -> Row {
        FileHandle.standardError.write(Data("latchkey-bench: import from \(format) (\(items) items)...\n".utf8))
        let isStore = FileStatus.of(path: path)?.kind == .directory
        let files = isStore ? try PasswordStore.files(in: path).map { path + "/" + $0 } : [path]
        let bytes = try files.reduce(0) { $0 + (try Files.read($1, limit: 1 << 30)).count }
        var copy = Samples()
        var reading = Samples()
        var importing = Samples()
        let rounds = format == "pass" ? 1 : samples
        for round in 0..<rounds {
            let target = directory + "/copy-\(round)"
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
            copy.nanoseconds.append(
                try time {
                    for (index, file) in files.enumerated() {
                        let contents = try Files.read(file, limit: 1 << 30)
                        let descriptor = try Files.openTruncated(target + "/\(index)")
                        try descriptor.writeAll(contents)
                        _ = fsync(descriptor.rawValue)
                        descriptor.close()
                    }
                })
            try? FileManager.default.removeItem(atPath: target)  // Scratch; a leftover only costs disk.
            reading.nanoseconds.append(try time(read))
            let keychain = directory + "/import-\(format)-\(round).keychain"
            let environment = [
                "HOME": directory, "PATH": "/usr/bin:/bin", "LATCHKEY_PASSPHRASE": "bench passphrase",
                "LATCHKEY_FILE_PASSPHRASE": Self.password, "LATCHKEY_AGENT_SOCKET": directory + "/no-agent.sock",
            ].merging(extra) { _, new in new }
            guard try run(binDirectory + "/latchkey", ["create-keychain", keychain], environment: environment) == 0
            else {
                throw BenchError("latchkey create-keychain failed")
            }
            var status: Int32 = -1
            importing.nanoseconds.append(
                try time {
                    status = try run(
                        binDirectory + "/latchkey", ["import", "--from", format, path, "-k", keychain],
                        environment: environment)
                })
            guard status == 0 else { throw BenchError("latchkey import --from \(format) exited with \(status)") }
            try? FileManager.default.removeItem(atPath: keychain)  // Scratch; a leftover only costs disk.
        }
        return Row(format: format, note: note, fileBytes: bytes, copy: copy, read: reading, importing: importing)
    }

    static func render(_ rows: [Row], items: Int, command: String) -> String {
        var lines = [
            "### Importing \(items.formatted()) items from other programs' files", "", "`\(command)`", "",
            "| format | file | copying it (the floor) | reading it in process | `latchkey import` | per item | import ÷ floor |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]
        for row in rows {
            lines.append(
                "| \(row.format) (\(row.note)) | \(row.fileBytes.formatted()) bytes | \(formatDuration(row.copy.median)) | "
                    + "\(formatDuration(row.read.median)) | \(formatDuration(row.importing.median)) | "
                    + "\(formatDuration(row.importing.median / Double(items))) | "
                    + String(format: "%.0f×", row.importing.median / row.copy.median) + " |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
