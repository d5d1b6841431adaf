import FoundationEssentials
import Latchkey
import LatchkeyCrypto

/// `latchkey log`: the access log the agent keeps in the keychain — who read, changed or deleted which item,
/// when, through which front end, allowed or refused and why. The keychain is opened here with its
/// passphrase (the log says who read what: it is for the keychain's owner), whether or not the agent runs.
enum LogCommand {
    static let command = Command(
        "log", synopsis: "[--item ref] [--program id] [--since time] [--json] [-k keychain]",
        summary: "Show who read, changed or deleted which item, allowed or refused.",
        details: """
            Prints the access log the agent writes into the keychain, oldest entry first: one line per item read, \
            added, changed, deleted or used through the agent's socket, the Secret Service or the SSH agent, and \
            one per refusal — the time, allowed or refused, what was asked, the item (class, persistent \
            reference in hex as `latchkey access` takes it, label, service or server and account; never a \
            secret), the program as the agent identified it (path, app ID or label, with its process and user \
            where the front end knows them), the front end, and why it was allowed or refused. --item keeps \
            one item's entries, --program those of a program (its path, app ID, label or application \
            identifier), --since those from a time on (ISO 8601, as 2026-12-05T13:00:00Z, or a duration back \
            from now: 90s, 10m, 2h, 7d). --json prints one JSON object: the entries and how many older entries \
            were dropped. The log keeps the newest 50,000 entries; when it has dropped older ones the text \
            output starts by saying how many. The keychain's passphrase is needed: the log is sealed like items.
            """,
        options: [
            OptionSpec(.item, .required, value: "ref", "Only this item's entries (its persistent reference in hex)."),
            OptionSpec(.program, .required, value: "id", "Only this program's entries."),
            OptionSpec(.since, .required, value: "time", "Only entries from this time on."),
            OptionSpec(.json, "Print JSON."),
            OptionSpec(.keychain, .required, value: "keychain", "The keychain (default: the default keychain)."),
        ] + passphraseOptions,
        positionals: 0...0
    ) { arguments, context in
        let item = try arguments.value(.item).map(AccessCommands.reference(from:))
        let program = arguments.value(.program)
        let since = try arguments.value(.since).map { try time($0, now: Date()) }
        let named = arguments.value(.keychain)
        let keychain = try context.openUnlocked(
            context.keychainPath(named), displayName: context.keychainName(named), arguments: arguments)
        let (entries, dropped) = try keychain.accessLog(since: since) { entry in
            (item == nil || entry.item.reference == item) && (program == nil || entry.caller.program == program)
        }
        if arguments.has(.json) {
            context.stdout.write(try json(entries, dropped: dropped))
        } else {
            if dropped > 0 { context.stdout.line("(\(dropped) older entries were dropped)") }
            for entry in entries { context.stdout.line(line(entry)) }
        }
        return 0
    }

    /// `--since`: an ISO 8601 time, or a duration back from `now` (`90s`, `10m`, `2h`, `7d`).
    static func time(_ text: String, now: Date) throws -> Date {
        if let unit = text.last, let count = Int(text.dropLast()), count >= 0,
            let seconds = ["s": 1, "m": 60, "h": 3_600, "d": 86_400][unit]
        {
            return now.addingTimeInterval(-Double(count * seconds))
        }
        do {
            return try Date(text, strategy: .iso8601)
        } catch {
            throw UsageError(
                message:
                    "--since takes an ISO 8601 time (2026-12-05T13:00:00Z) or a duration (90s, 10m, 2h, 7d), not '\(text)'"
            )
        }
    }

    /// One entry as a line.
    static func line(_ entry: AccessLogEntry) -> String {
        var text = timestamp(entry.time) + " " + (entry.allowed ? "allowed" : "refused") + " "
        text += "\(entry.operation) \(entry.item.itemClass.rawValue) "
        text += entry.item.reference.map { Hex.encode($0) } ?? "-"
        if let names = entry.item.names { text += " " + names }
        text += " by \(entry.caller.program) (\(entry.caller.identity))"
        text += " pid \(entry.caller.pid.map(String.init) ?? "?") uid \(entry.caller.uid.map(String.init) ?? "?")"
        text += " through \(entry.caller.frontEnd): \(entry.reason)"
        return text
    }

    /// `2026-12-05T13:40:01.123Z`.
    static func timestamp(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
    }

    /// What `--json` prints.
    struct Document: Encodable {
        struct Entry: Encodable {
            let sequence: Int64
            let time: String
            let allowed: Bool
            let operation: String
            let itemClass: String
            let reference: String?
            let names: String?
            let program: String
            let identity: String
            let pid: Int32?
            let uid: UInt32?
            let frontEnd: String
            let reason: String
        }
        let dropped: Int64
        let entries: [Entry]
    }

    static func json(_ entries: [AccessLogEntry], dropped: Int64) throws -> String {
        let document = Document(
            dropped: dropped,
            entries: entries.map {
                Document.Entry(
                    sequence: $0.sequence, time: timestamp($0.time), allowed: $0.allowed,
                    operation: $0.operation.description, itemClass: $0.item.itemClass.rawValue,
                    reference: $0.item.reference.map { Hex.encode($0) }, names: $0.item.names,
                    program: $0.caller.program, identity: $0.caller.identity, pid: $0.caller.pid, uid: $0.caller.uid,
                    frontEnd: $0.caller.frontEnd, reason: $0.reason)
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(document), as: UTF8.self) + "\n"
    }
}
