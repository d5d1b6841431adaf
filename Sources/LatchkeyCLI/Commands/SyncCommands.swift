import FoundationEssentials
import Latchkey
import LatchkeyCrypto
import LatchkeyPOSIX
import LatchkeySync

/// `latchkey sync ACTION`: end-to-end-encrypted sync of synchronizable items between devices through a
/// PostgreSQL server (docs/SYNC.md). The keychain is opened here, with its passphrase, whether or not the
/// agent serves it.
enum SyncCommands {
    static let actions = ["setup", "join", "approve", "status", "now", "remove-device", "conflicts", "leave", "schema"]

    static let command = Command(
        "sync",
        synopsis: "setup|join|approve|status|now|remove-device|conflicts|leave|schema [argument] [options]",
        summary: "Sync synchronizable items with your other devices through PostgreSQL, end to end encrypted.",
        details: """
            Items with kSecAttrSynchronizable (not ThisDeviceOnly ones) travel between the devices of a vault \
            through a PostgreSQL server that only ever holds ciphertext. \
            `sync setup --server URL` makes a vault for this keychain and prints its recovery code once. \
            `sync join --server URL` on another device waits until a device of the vault runs \
            `sync approve CODE` with the code it shows (both then show the same fingerprint); with \
            --recovery-code-file or --recovery-code-fd it joins at once. `sync now` pushes and pulls; \
            `sync status` shows the devices and what waits; `sync remove-device NAME` removes a device and \
            rotates the vault key; `sync conflicts` lists the versions that lost a conflict, --restore N brings \
            one back and --drop N forgets it; `sync leave` stops syncing this keychain (its items stay); \
            `sync schema` prints the server's SQL. URL is a libpq connection string or URI; the PG* \
            environment variables fill in what it leaves out. A failure names its cause first and exits with a \
            status of its own (below); a round that refused rows which did not verify exits with 65 after its \
            summary; `sync status` with the server out of reach shows what this device knows and says so.
            """,
        options: [
            OptionSpec(.syncServer, .required, value: "url", "The PostgreSQL server (libpq connection string or URI)."),
            OptionSpec(
                .deviceName, .required, value: "name", "This device's name in the vault (default: the host name)."),
            OptionSpec(.vault, .required, value: "id", "The vault to join, when the server holds several."),
            OptionSpec(.recoveryCodeFile, .required, value: "path", "Join with the recovery code in this file."),
            OptionSpec(
                .recoveryCodeFD, .required, value: "fd",
                "Join with the recovery code read from this file descriptor."),
            OptionSpec(
                .wait, .required, value: "seconds",
                "How long join waits for approval (default 300; 0: do not wait)."),
            OptionSpec(.restore, .required, value: "number", "With conflicts: restore this losing version."),
            OptionSpec(.drop, .required, value: "number", "With conflicts: forget this losing version."),
            OptionSpec(
                .collectTombstones, .required, value: "days",
                "With now: also remove from the server deletions older than this many days (or seen by every device)."),
            OptionSpec(.keychain, .required, value: "keychain", "The keychain (default: the default keychain)."),
        ] + passphraseOptions,
        positionals: 1...2, exitStatuses: SyncExitStatus.table
    ) { arguments, context in
        do {
            return try run(arguments, context: context)
        } catch let error as KeychainError {
            throw SyncExitStatus.failure(for: error) ?? error
        }
    }

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws -> Int32 {
        let action = arguments.positionals[0]
        guard actions.contains(action) else {
            throw UsageError(message: "unknown sync action '\(action)'; one of: \(actions.joined(separator: ", "))")
        }
        let argument = arguments.positionals.dropFirst().first
        guard argument == nil || ["approve", "remove-device"].contains(action) else {
            throw UsageError(message: "sync \(action) takes no argument besides its options")
        }
        if action == "schema" {
            context.stdout.write(SyncServerSchema.script)
            return 0
        }
        let path = context.keychainPath(arguments.value(.keychain))
        let keychain = try context.openUnlocked(
            path, displayName: context.keychainName(arguments.value(.keychain)), arguments: arguments)
        switch action {
        case "setup": return try setup(arguments, keychain: keychain, context: context)
        case "join": return try join(arguments, keychain: keychain, context: context)
        default: break
        }
        let client = try SyncClient.open(keychain)
        switch action {
        case "approve":
            guard let code = argument else {
                let pending = try client.pendingDevices()
                if pending.isEmpty { context.stdout.line("no device is waiting to join") }
                for device in pending {
                    context.stdout.line("\(device.name)  shows \(device.code)   (latchkey sync approve \(device.code))")
                }
                return 0
            }
            let name = try client.approve(code: code)
            context.stdout.line(
                "approved \(name); the vault's fingerprint is \(client.fingerprint ?? "?"): \(name) shows the same")
        case "status":
            try status(client, keychain: keychain, context: context)
        case "now":
            let horizon = try arguments.value(.collectTombstones).map { text -> Int in
                guard let days = Int(text), days >= 0 else {
                    throw UsageError(message: "--collect-tombstones needs a number of days, not '\(text)'")
                }
                return days * 86_400
            }
            guard try client.completeJoin() else {
                throw SyncFailure.awaitingApproval.error(
                    .interactionNotAllowed,
                    "this device waits for approval: run latchkey sync approve \(client.joinCode) on a device of the vault"
                )
            }
            let report = try syncing(client, context: context) { () throws(KeychainError) in
                try client.sync(collectTombstonesOlderThan: horizon)
            }
            return try finish(report, context: context)
        case "remove-device":
            guard let name = argument else { throw UsageError(message: "sync remove-device needs the device's name") }
            try client.removeDevice(named: name)
            context.stdout.line(
                "removed \(name); the vault key is now key \(client.configuration.keyring.currentID), which \(name) does not have"
            )
        case "conflicts":
            try conflicts(arguments, client: client, context: context)
        case "leave":
            try client.leave()
            context.stdout.line(
                "this keychain no longer syncs; its items stay (remove the device from another one with latchkey sync remove-device)"
            )
        default:
            break
        }
        return 0
    }

    static func setup(_ arguments: ParsedArguments, keychain: KeychainDatabase, context: CLIContext) throws -> Int32 {
        let made = try SyncClient.setup(
            keychain, server: try server(arguments, context: context), deviceName: deviceName(arguments))
        context.stdout.line(
            "vault \(Hex.encode(made.client.configuration.vault)) set up with this device as \(made.client.configuration.deviceName)"
        )
        context.stdout.line("fingerprint \(made.fingerprint)")
        context.stdout.line("recovery code \(made.recoveryCode)")
        context.stdout.line(
            "Write the recovery code down and keep it away from this device: it is shown only now, and with it any device can join the vault."
        )
        return try finish(
            try syncing(made.client, context: context) { () throws(KeychainError) in try made.client.sync() },
            context: context)
    }

    static func join(_ arguments: ParsedArguments, keychain: KeychainDatabase, context: CLIContext) throws -> Int32 {
        // The recovery code is read as a passphrase is: one line, from a file only its owner can read or a descriptor.
        var source: PassphraseSource?
        if let file = arguments.value(.recoveryCodeFile) {
            source = .keyFile(file)
        } else if let fd = arguments.value(.recoveryCodeFD) {
            guard let descriptor = Int32(fd), descriptor >= 0 else {
                throw UsageError(message: "--recovery-code-fd needs a file descriptor number, not '\(fd)'")
            }
            source = .fileDescriptor(descriptor)
        }
        let code = try source.map { try $0.read() }.map { given in
            given.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }.trimmingWhitespace()
        }
        let vault: Data? = try arguments.value(.vault).map { text in
            guard let bytes = Hex.decode(text), bytes.count == 16 else {
                throw UsageError(message: "--vault needs a vault id (32 hex digits), not '\(text)'")
            }
            return Data(bytes)
        }
        let wait =
            try arguments.value(.wait).map { text -> Int in
                guard let seconds = Int(text), seconds >= 0 else {
                    throw UsageError(message: "--wait needs a number of seconds, not '\(text)'")
                }
                return seconds
            } ?? 300
        let joined = try SyncClient.join(
            keychain, server: try server(arguments, context: context), vault: vault, deviceName: deviceName(arguments),
            recoveryCode: code)
        let client = joined.client
        if !client.configuration.isJoined {
            context.stdout.line(
                "waiting for approval: on a device of the vault, run  latchkey sync approve \(joined.joinCode)")
            let deadline = Date().addingTimeInterval(Double(wait))
            while try !client.completeJoin() {
                guard Date() < deadline else {
                    context.stdout.line(
                        "not approved yet; this device stays waiting: latchkey sync now completes the join once approved"
                    )
                    return 0
                }
                CurrentThread.sleep(for: .milliseconds(250))
            }
        }
        context.stdout.line(
            "joined vault \(Hex.encode(client.configuration.vault)) as \(client.configuration.deviceName)")
        context.stdout.line("fingerprint \(client.fingerprint ?? "?") (every device of the vault shows the same)")
        return try finish(
            try syncing(client, context: context) { () throws(KeychainError) in try client.sync() }, context: context)
    }

    /// Prints a round's summary; a round that refused rows then fails with its own status (65).
    static func finish(_ report: SyncReport, context: CLIContext) throws -> Int32 {
        context.stdout.line(summary(report))
        guard report.rejected == 0 else {
            throw CommandFailure(
                message:
                    "refused \(report.rejected) row\(report.rejected == 1 ? "" : "s") from the server that did not verify (altered, "
                    + "replayed or forged); the items keep the versions they had, and latchkey sync status lists what was refused",
                exitStatus: SyncExitStatus.refusedRows)
        }
        return 0
    }

    static func status(_ client: SyncClient, keychain: KeychainDatabase, context: CLIContext) throws {
        let configuration = client.configuration
        let counts = try keychain.sync.counts()
        // The devices are the server's to tell; out of reach, the rest is still this device's to show.
        var devices: [SyncDeviceStatus]?
        var unreachable: String?
        switch try devicesUnlessUnreachable(client) {
        case .success(let list): devices = list
        case .failure(let error):
            let detail = error.detail ?? error.message
            unreachable =
                detail.hasPrefix("the sync server: ") ? String(detail.dropFirst("the sync server: ".count)) : detail
        }
        context.stdout.line("vault: \(Hex.encode(configuration.vault))")
        context.stdout.line(
            "device: \(configuration.deviceName)\(configuration.isJoined ? "" : " (waiting for approval: code \(client.joinCode))")"
        )
        if let fingerprint = client.fingerprint { context.stdout.line("fingerprint: \(fingerprint)") }
        context.stdout.line(
            "server: \(redacted(configuration.server))" + (unreachable.map { " (unreachable: \($0))" } ?? ""))
        context.stdout.line("vault key: \(configuration.keyring.currentID)")
        context.stdout.line("last sync: \(try client.lastSync ?? "never")")
        context.stdout.line("cursor: \(try keychain.sync.cursor())")
        context.stdout.line("pending: \(counts.pending) local change\(counts.pending == 1 ? "" : "s")")
        context.stdout.line(
            "inbox: \(counts.inbox) row\(counts.inbox == 1 ? "" : "s") waiting to be written (the keychain was locked)")
        context.stdout.line("conflicts: \(counts.conflicts)")
        context.stdout.line("rejected: \(counts.rejected)")
        for rejection in try keychain.sync.rejections() {
            context.stdout.line(
                "  change \(rejection.sequence) of item \(Hex.encode(rejection.itemID)) version \(rejection.version): \(rejection.reason)"
            )
        }
        guard let devices else {
            context.stdout.line("devices: unknown (the server cannot be reached)")
            return
        }
        context.stdout.line("devices:")
        for device in devices {
            var notes: [String] = []
            if device.isThisDevice { notes.append("this device") }
            if device.state == "active" && !device.verified {
                notes.append("NOT approved by this vault's keys: the server added it")
            }
            context.stdout.line(
                "  \(device.name)  \(device.state)  last seen \(device.lastSeen)\(notes.isEmpty ? "" : "  (" + notes.joined(separator: "; ") + ")")"
            )
        }
    }

    /// The vault's devices from the server, or the failure to reach it; any other failure is thrown.
    static func devicesUnlessUnreachable(_ client: SyncClient) throws(KeychainError) -> Result<
        [SyncDeviceStatus], KeychainError
    > {
        do {
            return .success(try client.devices())
        } catch {
            guard error.syncFailure == .serverUnreachable else { throw error }
            return .failure(error)
        }
    }

    static func conflicts(_ arguments: ParsedArguments, client: SyncClient, context: CLIContext) throws {
        func number(_ option: OptionKey) throws -> Int64? {
            try arguments.value(option).map { text in
                guard let value = Int64(text) else {
                    throw UsageError(message: "\(option.spelling) needs a conflict number, not '\(text)'")
                }
                return value
            }
        }
        if let id = try number(.restore) {
            try client.restoreConflict(id)
            context.stdout.line("restored conflict \(id); latchkey sync now sends it to the other devices")
            return
        }
        if let id = try number(.drop) {
            try client.keychain.sync.dropConflict(id)
            context.stdout.line("dropped conflict \(id)")
            return
        }
        let conflicts = try client.conflicts()
        if conflicts.isEmpty { context.stdout.line("no conflicts") }
        for (conflict, record) in conflicts {
            let what =
                record.map { $0.deleted ? "deletion" : $0.summary } ?? "(sealed under a vault key this device lacks)"
            context.stdout.line(
                "\(conflict.id)  \(conflict.recorded.formatted(.iso8601))  version \(conflict.version)  \(what)  — \(conflict.reason)"
            )
        }
    }

    /// Runs a round with its progress drawn on standard error when that is a terminal.
    static func syncing(_ client: SyncClient, context: CLIContext, _ round: () throws(KeychainError) -> SyncReport)
        throws -> SyncReport
    {
        try context.withProgress("syncing") { (progress) throws(KeychainError) -> SyncReport in
            client.progress = progress
            defer { client.progress = nil }
            return try round()
        }
    }

    static func summary(_ report: SyncReport) -> String {
        var text =
            "pushed \(report.pushed), pulled \(report.pulled), applied \(report.applied), conflicts \(report.conflicts), rejected \(report.rejected)"
        if report.waiting > 0 { text += ", \(report.waiting) waiting for the keychain to unlock" }
        if report.fullResync { text += " (full resync: deletions this device had missed were collected)" }
        if report.serverWentBack {
            text += " (the server had gone back in time, restored from a backup?: what it lost was pushed again)"
        }
        return text
    }

    static func server(_ arguments: ParsedArguments, context: CLIContext) throws -> String {
        if let server = arguments.value(.syncServer) { return server }
        guard
            context.environment["PGHOST"] != nil || context.environment["PGSERVICE"] != nil
                || context.environment["PGDATABASE"] != nil
        else {
            throw UsageError(
                message:
                    "name the server with --server (a libpq connection string or URI) or the PG* environment variables")
        }
        return ""
    }

    static func deviceName(_ arguments: ParsedArguments) -> String {
        arguments.value(.deviceName) ?? ProcessInfo.processInfo.hostName
    }

    /// The connection string without its password (`password=…` or a URI's `user:password@`).
    static func redacted(_ conninfo: String) -> String {
        var text = conninfo.replacing(#/password\s*=\s*('([^'\\]|\\.)*'|\S+)/#, with: "password=…")
        text = text.replacing(#/(postgres(ql)?:\/\/[^:\/@]+):[^@]*@/#) { match in match.output.1 + ":…@" }
        return text.isEmpty ? "(from the PG* environment variables)" : text
    }
}
