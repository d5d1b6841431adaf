import FoundationEssentials
import Latchkey
import LatchkeyCrypto
import LatchkeyDBus
import LatchkeyFormats
import LatchkeyPOSIX

/// `latchkey import --from-secret-service [BUS-NAME]`: copies every item another Secret Service provider
/// (GNOME Keyring, KeePassXC, KWallet; `org.freedesktop.secrets` unless named) holds on the session bus into
/// the keychain, as Latchkey's own provider stores them (group and service `org.freedesktop.secrets`, the
/// label, the attributes as `ss.<name>`, the content type in `desc`), through a `plain` session on the
/// session bus (the bus is the user's own). Items the provider keeps locked are skipped and counted, and so
/// are those already in the keychain (same attributes, label and secret); nothing already there changes.
enum SecretServiceImport {
    struct Report {
        var copied: [String: Int] = [:]
        var locked = 0
        var present = 0
        var unreadable = 0
    }

    /// One item as the provider gives it.
    struct SourceItem {
        let label: String
        let attributes: [String: String]
        let secret: Data
        let contentType: String
    }

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws -> Int32 {
        guard arguments.positionals.count <= 1 else {
            throw UsageError(message: "--from-secret-service takes at most one bus name; name the keychain with -k")
        }
        let name = arguments.positionals.first ?? "org.freedesktop.secrets"
        let store = try CommandKeychain.open(
            arguments, context: context, group: "org.freedesktop.secrets",
            keychain: .option(arguments.value(.keychainShort)))
        let report: Report
        do {
            report = try copy(from: name, into: store)
        } catch let error as BusError {
            throw CommandFailure(message: "cannot read the Secret Service \(name): \(error)")
        }
        let total = report.copied.values.reduce(0, +)
        let by = report.copied.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        context.stdout.line("copied \(total) item\(total == 1 ? "" : "s") from \(name)\(by.isEmpty ? "" : " (\(by))")")
        var skipped: [String] = []
        if report.present > 0 { skipped.append("\(report.present) already in the keychain") }
        if report.locked > 0 { skipped.append("\(report.locked) locked (unlock them in \(name) first)") }
        if report.unreadable > 0 { skipped.append("\(report.unreadable) whose secret \(name) did not give") }
        if !skipped.isEmpty { context.stdout.line("skipped " + skipped.joined(separator: ", ")) }
        return 0
    }

    /// Copies every readable item of the provider that holds `name` into the keychain (`login`, whatever its
    /// collection there), skipping those already in it; the counts, by the provider's collection labels.
    /// `import --from-secret-service` and `desktop enable` both move items in with it.
    static func copy(from name: String, into store: CommandKeychain) throws -> Report {
        var (collections, report) = try read(from: name)
        for (label, items) in collections {
            for item in items {
                if try store.run({ try present(item, store: store) }) {
                    report.present += 1
                    continue
                }
                let attributes = SecretServiceMapping.attributes(
                    label: item.label, attributes: item.attributes, contentType: item.contentType)
                _ = try store.run {
                    try store.service.add(
                        NewItem(.genericPassword, attributes: attributes, data: item.secret), returning: [])
                }
                report.copied[label, default: 0] += 1
            }
        }
        return report
    }

    /// Whether an item with the same attributes, label and secret is in the keychain already.
    /// GNOME Keyring adds `xdg:schema` where the creator gave none — also to items it loads from its file after
    /// a restart — so an item is the same with or without it (as the export's check has it).
    static func present(_ item: SourceItem, store: CommandKeychain) throws -> Bool {
        let compared = item.attributes.filter { $0.key != "xdg:schema" }
        var matching: [AttributeKey: AttributeValue] = [.service: .string("org.freedesktop.secrets")]
        for (key, value) in compared { matching[AttributeKey.secretService(key)] = .string(value) }
        let found: [ItemResult]
        do throws(KeychainError) {
            found = try store.service.copyMatching(
                ItemQuery(.genericPassword, matching: matching, limit: .all, returning: [.attributes, .data]))
        } catch {
            guard error.status == .itemNotFound else { throw error }
            return false
        }
        return found.contains { result in
            let attributes = result.attributes.filter {
                AttributeKey.isSecretServiceAttribute($0.key) && $0.value != .string("")
                    && $0.key != AttributeKey.secretService("xdg:schema")
            }
            // An empty value is no value: the keychain gives none back for it (an item stored with `user ""`).
            return attributes.count == compared.count(where: { !$0.value.isEmpty })
                && result[.label] == .string(item.label)
                && result.data == item.secret
        }
    }

    /// Opens a "plain" session with the provider `name` (the secrets cross the user's own session bus
    /// unencrypted); returns its object path. The import and the export both use it.
    static func openPlainSession(_ bus: Bus, _ name: String, _ service: String) throws(BusError) -> String {
        let opened = try bus.call(
            name, path: service, interface: "org.freedesktop.Secret.Service", member: "OpenSession"
        ) { (message) throws(BusError) in
            try message.append("plain")
            try message.open("v", "s")
            try message.append("")
            try message.close()
        }
        _ = try opened.enter("v", "s")
        _ = try opened.readString()
        try opened.exit()
        return try opened.readString("o")
    }

    /// Every collection's label and readable items.
    static func read(from name: String) throws(BusError) -> (
        collections: [(label: String, items: [SourceItem])], report: Report
    ) {
        var report = Report()
        let bus = try Bus(.session)
        let service = "/org/freedesktop/secrets"
        let session = try openPlainSession(bus, name, service)
        var result: [(label: String, items: [SourceItem])] = []
        for collection in try property(bus, name, service, "org.freedesktop.Secret.Service", "Collections", "ao")
            .readObjectPaths()
        {
            let label = try property(bus, name, collection, "org.freedesktop.Secret.Collection", "Label", "s")
                .readString()
            let all = try property(bus, name, collection, "org.freedesktop.Secret.Collection", "Items", "ao")
                .readObjectPaths()
            var unlocked: [String] = []
            for item in all {
                if try property(bus, name, item, "org.freedesktop.Secret.Item", "Locked", "b").readBool() {
                    report.locked += 1
                } else {
                    unlocked.append(item)
                }
            }
            var items: [SourceItem] = []
            let wanted = unlocked
            let secrets = try bus.call(
                name, path: service, interface: "org.freedesktop.Secret.Service", member: "GetSecrets"
            ) { (message) throws(BusError) in
                try message.open("a", "o")
                for item in wanted { try message.append(item, as: "o") }
                try message.close()
                try message.append(session, as: "o")
            }
            var values: [String: (Data, String)] = [:]
            _ = try secrets.enter("a", "{o(oayays)}")
            while try secrets.enter("e", "o(oayays)") {
                let item = try secrets.readString("o")
                _ = try secrets.enter("r", "oayays")
                _ = try secrets.readString("o")
                _ = try secrets.readBytes()
                let value = Data(try secrets.readBytes())
                let contentType = try secrets.readString()
                try secrets.exit()
                try secrets.exit()
                values[item] = (value, contentType)
            }
            try secrets.exit()
            for item in unlocked {
                guard let (value, contentType) = values[item] else {
                    report.unreadable += 1
                    continue
                }
                let itemLabel = try property(bus, name, item, "org.freedesktop.Secret.Item", "Label", "s").readString()
                let attributes = try property(bus, name, item, "org.freedesktop.Secret.Item", "Attributes", "a{ss}")
                    .readStringDictionary()
                items.append(
                    SourceItem(
                        label: itemLabel, attributes: attributes, secret: value,
                        contentType: contentType.isEmpty ? "text/plain" : contentType))
            }
            result.append((label, items))
        }
        _ = try bus.call(name, path: session, interface: "org.freedesktop.Secret.Session", member: "Close")
        return (result, report)
    }

    /// A property's value, the reply positioned inside its variant.
    private static func property(
        _ bus: Bus, _ name: String, _ path: String, _ interface: String, _ property: String, _ type: String
    )
        throws(BusError) -> BusMessage
    {
        let reply = try bus.call(name, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get") {
            (message) throws(BusError) in
            try message.append(interface)
            try message.append(property)
        }
        _ = try reply.enter("v", type)
        return reply
    }
}
