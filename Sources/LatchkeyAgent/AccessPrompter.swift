import FoundationEssentials
import LatchkeyCaller
import LatchkeyCrypto
import LatchkeyEngine
import LatchkeyPOSIX
import Synchronization

/// The question macOS asks when a program not on an item's access list wants it (issue 53): "*program*
/// wants to use your confidential information stored in *item*" — **Deny**, **Allow once**, **Always
/// allow** — asked through pinentry. Never a storm:
///
/// - one question at a time: a request that comes while a question is open is refused, not queued;
/// - a program denied an item (or not answered in time) is not asked about it again until the keychain
///   locks (the vault's lock epoch changes);
/// - at most `questionsPerMinute` questions per program a minute; beyond, refused without a dialog;
/// - what it remembers is bounded (`memoryLimit` denials), so a flood grows nothing.
///
/// Who is never asked about is decided by the caller (`ConnectionHandler`): an unidentified program, a
/// program with the wildcard group. Without pinentry, or without a display or terminal for it, nobody is
/// asked: the refusal names the command that grants the item.
final class AccessPrompter: Sendable {
    /// The user's answer.
    enum Answer: Equatable {
        case allowOnce
        case alwaysAllow
    }

    /// What the question names, as the user knows it.
    struct Question {
        /// The program: its path, app ID or label.
        let program: TrustedProgram
        /// Its process and parent.
        let pid: Int32
        let parent: Int32?
        /// The item: its persistent reference, class and names (label, service or server, account).
        let reference: Data
        let itemClass: ItemClass
        let names: String?
        /// The access group it was stored in: the program that stored it.
        let storedBy: String?

        /// The dialog's text.
        var text: String {
            let who: String
            switch program {
            case .executable(let path, _): who = path
            case .sandbox(let app): who = "The Flatpak app \(app)"
            case .confined(let label): who = "The confined program \(label)"
            }
            var lines = ["\(who) wants to use your confidential information stored in this keychain item:"]
            lines.append("  " + (names ?? "a \(itemClass.rawValue) item"))
            if let storedBy { lines.append("  stored by \(storedBy)") }
            lines.append("Asked by: \(program.name) (pid \(pid)\(parent.map { ", parent \($0)" } ?? ""))")
            lines.append("Always allow adds it to the item's access list (latchkey access remove takes it off).")
            return lines.joined(separator: "\n")
        }

        /// The command that grants the item to the program.
        var grantCommand: String {
            let name = if case .executable(let path, _) = program { path } else { program.name }
            let prefix =
                switch program {
                case .sandbox: "flatpak:"
                default: ""
                }
            return "latchkey access add \(Hex.encode(reference)) \(prefix)\(name)"
        }
    }

    static let questionsPerMinute = 3
    static let memoryLimit = 4_096

    private struct Key: Hashable {
        let program: TrustedProgram
        let reference: Data
    }

    private struct Memory {
        var epoch = -1
        var denied: Set<Key> = []
        var asked: [TrustedProgram: [ContinuousClock.Instant]] = [:]
        var open = false
    }

    private let presence: PinentryPresence?
    private let memory = Mutex(Memory())
    private let log: @Sendable (String) -> Void

    init(presence: PinentryPresence?, log: @escaping @Sendable (String) -> Void) {
        self.presence = presence
        self.log = log
    }

    /// Whether a question could be asked now: pinentry, and a display or terminal for it.
    var canAsk: Bool { presence?.hasDisplayOrTerminal ?? false }

    /// Asks the user whether `question.program` may read the item, or throws the refusal: `errSecUserCanceled`
    /// when denied (now or before, until the keychain locks), `errSecInteractionNotAllowed` when nobody can be
    /// or may be asked now (naming the command that grants it). `epoch` is the keychain's lock epoch now.
    ///
    /// Without pinentry or a display or terminal for it, `refusal` (what the caller would hear had nobody been
    /// asked: an unregistered program's library then opens the keychain itself, as before) stands, its words
    /// followed by the command that grants the item.
    func ask(_ question: Question, epoch: Int, refusal: KeychainError) throws(KeychainError) -> Answer {
        let key = Key(program: question.program, reference: question.reference)
        guard let presence, presence.hasDisplayOrTerminal else {
            throw KeychainError(
                refusal.status,
                "\(refusal.detail ?? refusal.message); \(question.program.name) is not on the access list of an item "
                    + "it asked for, and there is no display or terminal to ask on: to let it read the item, "
                    + question.grantCommand)
        }
        let now = ContinuousClock.now
        let refusal: KeychainError? = memory.withLock { memory in
            if memory.epoch != epoch { memory = Memory(epoch: epoch) }
            if memory.denied.contains(key) {
                return KeychainError(
                    .userCanceled,
                    "the user denied \(question.program.name) this item; it is not asked again until the keychain locks"
                )
            }
            if memory.open {
                return KeychainError(
                    .interactionNotAllowed, "another access question is open; \(question.program.name) was not asked")
            }
            let recent = (memory.asked[question.program] ?? []).filter { now - $0 < .seconds(60) }
            if recent.count >= Self.questionsPerMinute {
                return KeychainError(
                    .interactionNotAllowed,
                    "\(question.program.name) asked \(recent.count) times this minute; refused without asking. "
                        + "To let it read the item: \(question.grantCommand)")
            }
            if memory.asked.count >= Self.memoryLimit, memory.asked[question.program] == nil {
                memory.asked = memory.asked.filter { !$0.value.allSatisfy { now - $0 >= .seconds(60) } }
            }
            memory.asked[question.program] = recent + [now]
            memory.open = true
            return nil
        }
        if let refusal { throw refusal }
        defer { memory.withLock { $0.open = false } }
        let choice: PinentryPresence.Choice
        do {
            choice = try presence.choose(
                question.text, title: "Latchkey", ok: "Allow once", notOK: "Always allow", cancel: "Deny")
        } catch {
            // Denied, or not answered: not asked again about this item until the keychain locks.
            memory.withLock { memory in
                guard memory.epoch == epoch else { return }
                if memory.denied.count >= Self.memoryLimit { memory.denied.removeAll() }
                memory.denied.insert(key)
            }
            log("the user denied \(question.program.name) (pid \(question.pid)) an item (\(error.message))")
            throw error.status == .userCanceled
                ? KeychainError(.userCanceled, "the user denied \(question.program.name) this item") : error
        }
        log(
            "the user allowed \(question.program.name) (pid \(question.pid)) an item \(choice == .ok ? "once" : "always")"
        )
        return choice == .ok ? .allowOnce : .alwaysAllow
    }

    /// The parent of a process (`/proc/<pid>/stat`, field 4), for the question; nil when it cannot be read.
    static func parent(of pid: Int32) -> Int32? {
        guard let bytes = try? Files.read("/proc/\(pid)/stat", limit: 4_096),  // Gone: no parent to name.
            let close = bytes.lastIndex(of: UInt8(ascii: ")"))
        else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 1 else { return nil }
        return Int32(String(decoding: fields[1], as: UTF8.self))
    }
}
