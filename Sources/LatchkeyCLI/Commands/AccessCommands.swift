import FoundationEssentials
import Latchkey
import LatchkeyCrypto

/// `latchkey access list|add|remove`: items' access lists — the programs that may read an item besides
/// those of its access group (macOS's trusted applications). Through the agent when one serves the keychain;
/// otherwise the keychain is opened here with its passphrase.
enum AccessCommands {
    static let actions = ["list", "add", "remove"]

    static let command = Command(
        "access",
        synopsis:
            "list [item] | add [item] program | remove [item] program [-s service | --server server] [-a account] [-k keychain]",
        summary: "Show or change which programs may read an item besides its access group.",
        details: """
            An item's access list names programs that may read it besides the programs of its access group: \
            an executable by its absolute path (recorded with a digest of its contents, so a rebuilt or \
            replaced program is another program), a Flatpak app as flatpak:<app ID>, a confined program by its \
            label as apparmor:<profile> or selinux:<type> — the identities the agent attests. An item is named \
            by its persistent reference in hex, as `access list` and `latchkey log` print it, or instead by -s \
            (a generic password's service) or --server (an internet password's server), with -a for its \
            account, which must name exactly one item. \
            `access list` prints every item whose list names a program, each with its class and names (label, \
            service or server, account; never the secret) and then its programs, when and how each was added; \
            `access list ITEM` prints that item's. `access add ITEM PROGRAM` adds the program (as it is now) \
            to the item's list; `access remove ITEM PROGRAM` takes it off at once (an executable's path \
            removes every digest of it) and exits with 44 when it was not on the list. Adding and removing \
            need the keychain passphrase. The lists are this machine's: a backup carries them, sync does not.
            """,
        options: [
            OptionSpec(
                .accessService, .required, value: "service", "Name the item by its service (a generic password)."),
            OptionSpec(
                .accessServer, .required, value: "server", "Name the item by its server (an internet password)."),
            OptionSpec(.accessAccount, .required, value: "account", "With -s or --server: the item's account."),
            OptionSpec(.keychain, .required, value: "keychain", "The keychain (default: the default keychain)."),
        ] + passphraseOptions,
        positionals: 1...3
    ) { arguments, context in
        let action = arguments.positionals[0]
        guard actions.contains(action) else {
            throw UsageError(message: "unknown access action '\(action)'; one of: \(actions.joined(separator: ", "))")
        }
        let session = Session(arguments: arguments, context: context)
        var words = Array(arguments.positionals.dropFirst())
        let selected = arguments.has(.accessService) || arguments.has(.accessServer)
        if arguments.has(.accessAccount) && !selected {
            throw UsageError(message: "-a names an item's account with -s or --server")
        }
        switch action {
        case "list":
            guard words.count <= (selected ? 0 : 1) else {
                throw UsageError(message: "access list takes at most one item")
            }
            let item = selected ? try session.namedItem() : try words.first.map(reference(from:))
            return try list(item, session: session)
        default:
            guard words.count == (selected ? 1 : 2) else {
                throw UsageError(message: "access \(action) takes an item and a program")
            }
            let program = try TrustedProgram(naming: words.removeLast(), digesting: action == "add")
            let item = selected ? try session.namedItem() : try reference(from: words[0])
            return try change(adding: action == "add", program, item: item, session: session)
        }
    }

    /// One run's keychain and passphrase (asked for once, however many times it is needed).
    final class Session {
        let arguments: ParsedArguments
        let context: CLIContext
        private var given: Passphrase?

        init(arguments: ParsedArguments, context: CLIContext) {
            self.arguments = arguments
            self.context = context
        }

        var path: String { context.keychainPath(arguments.value(.keychain)) }

        func passphrase() throws -> Passphrase {
            if let given { return given }
            let read = try context.passphrase(
                arguments, prompt: "password to unlock \(context.keychainName(arguments.value(.keychain))): ")
            given = read
            return read
        }

        /// The keychain opened here, unlocked, as the command line (which sees every group).
        func local() throws -> LocalKeychainService {
            let local = LocalKeychainService(
                database: try KeychainDatabase.open(at: path),
                caller: commandLineCaller(group: nil, environment: context.environment))
            try local.unlock(with: passphrase())
            return local
        }

        /// The one item -s or --server (and -a) name: its persistent reference. `errSecItemNotFound` for
        /// none; a usage error for several.
        func namedItem() throws -> Data {
            var matching: [AttributeKey: AttributeValue] = [:]
            let itemClass: ItemClass
            if let server = arguments.value(.accessServer) {
                itemClass = .internetPassword
                matching[.server] = .string(server)
            } else {
                itemClass = .genericPassword
                matching[.service] = .string(arguments.value(.accessService) ?? "")
            }
            if let account = arguments.value(.accessAccount) { matching[.account] = .string(account) }
            let found = try local().copyMatching(
                ItemQuery(
                    itemClass, matching: matching, synchronizable: .any, limit: .all, returning: .persistentReference))
            guard found.count == 1, let item = found.first else {
                throw UsageError(
                    message:
                        "that names \(found.count) items; add -a, or name the item by its reference (latchkey access list)"
                )
            }
            return item.persistentReference
        }
    }

    /// An item's persistent reference from its hex.
    static func reference(from text: String) throws -> Data {
        guard let bytes = Hex.decode(text), bytes.count == PersistentReference.length else {
            throw UsageError(message: "'\(text)' is not an item's persistent reference (64 hex digits)")
        }
        return Data(bytes)
    }

    static func list(_ reference: Data?, session: Session) throws -> Int32 {
        let (service, agent) = try administration(session.path, context: session.context)
        // The agent shows lists to registered programs only: anyone else reads them here.
        let shown = agent ? try listedByAgent(service, reference) : nil
        let lists = try shown ?? session.local().accessLists(of: reference)
        for list in lists { session.context.stdout.write(describe(list)) }
        return 0
    }

    /// The lists as the agent shows them; nil when it shows them only to registered programs.
    private static func listedByAgent(_ service: any KeychainService, _ reference: Data?) throws -> [ItemAccessList]? {
        let result: Result<[ItemAccessList], KeychainError>
        do {
            result = .success(try service.accessLists(of: reference))
        } catch {
            result = .failure(error)
        }
        if case .failure(let error) = result, error.status == .missingEntitlement { return nil }
        return try result.get()
    }

    /// An item's list as `access list` prints it: the item's line, then one indented line per program.
    static func describe(_ list: ItemAccessList) -> String {
        var text = Hex.encode(list.reference) + " " + list.itemClass.rawValue
        if let summary = list.summary { text += " " + summary }
        text += "\n"
        if list.entries.isEmpty { text += "    (no programs besides its access group's)\n" }
        for entry in list.entries {
            var line = "    \(entry.program.kind) \(entry.program.name)"
            if case .executable(_, let digest) = entry.program { line += " " + Hex.encode(digest.prefix(8)) }
            line += " added \(entry.added.formatted(.iso8601)) by \(entry.origin)"
            text += line + "\n"
        }
        return text
    }

    static func change(adding: Bool, _ program: TrustedProgram, item: Data, session: Session) throws -> Int32 {
        let context = session.context
        let (service, agent) = try administration(session.path, context: context)
        let passphrase = try session.passphrase()
        if !agent, let local = service as? LocalKeychainService {
            try local.unlock(with: passphrase)  // The lists are sealed under the passphrase.
        }
        if adding {
            let added = try service.grantAccess(to: program, onItem: item, passphrase: passphrase)
            context.stdout.line(
                added
                    ? "\(program.name) may now read item \(Hex.encode(item))"
                    : "\(program.name) was already on the list of item \(Hex.encode(item))")
        } else {
            guard try service.revokeAccess(of: program, onItem: item, passphrase: passphrase) else {
                throw KeychainError(.itemNotFound, "\(program.name) is not on the list of item \(Hex.encode(item))")
            }
            context.stdout.line("\(program.name) may no longer read item \(Hex.encode(item))")
        }
        return 0
    }
}
