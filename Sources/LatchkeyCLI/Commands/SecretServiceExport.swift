import FoundationEssentials
import Latchkey
import LatchkeyDBus
import LatchkeyPOSIX

/// `latchkey export --to-secret-service [BUS-NAME]`: the way back from `import --from-secret-service`.
/// Copies every item Latchkey's Secret Service holds in the keychain (the `login` collection's and those of
/// collections made with `CreateCollection`) into the default collection of the provider that holds the name
/// on the session bus now (GNOME Keyring, KeePassXC, KWallet; `org.freedesktop.secrets` unless named), with
/// its label, attributes, secret and content type, through a `plain` session. An item the provider already
/// has (same attributes, label and secret) is skipped and counted; nothing in the keychain changes.
enum SecretServiceExport {
    static func run(_ arguments: ParsedArguments, context: CLIContext) throws -> Int32 {
        guard arguments.positionals.count <= 1 else {
            throw UsageError(message: "--to-secret-service takes at most one bus name; name the keychain with -k")
        }
        let name = arguments.positionals.first ?? "org.freedesktop.secrets"
        let store = try CommandKeychain.open(
            arguments, context: context, group: "org.freedesktop.secrets",
            keychain: .option(arguments.value(.keychainShort)))
        let items = try self.items(in: store)
        let report: (copied: Int, present: Int, locked: Int)
        do throws(BusError) {
            report = try write(items, to: name)
        } catch {
            throw CommandFailure(message: "cannot write to the Secret Service \(name): \(error)")
        }
        context.stdout.line("copied \(report.copied) item\(report.copied == 1 ? "" : "s") to \(name)")
        var skipped: [String] = []
        if report.present > 0 { skipped.append("\(report.present) already there") }
        if report.locked > 0 {
            skipped.append("\(report.locked) refused: \(name)'s default collection is locked (unlock it first)")
        }
        if !skipped.isEmpty { context.stdout.line("skipped " + skipped.joined(separator: ", ")) }
        return report.locked > 0 ? 1 : 0
    }

    /// Every item Latchkey's Secret Service keeps in the keychain (`login`'s and the collections'), as a provider
    /// is given it: label, attributes, secret and content type. `export` and `desktop disable` both use it.
    static func items(in store: CommandKeychain) throws -> [SecretServiceImport.SourceItem] {
        let found: [ItemResult]
        do {
            found = try store.run {
                try store.service.copyMatching(
                    ItemQuery(.genericPassword, limit: .all, returning: [.attributes, .data]))
            }
        } catch let error as KeychainError where error.status == .itemNotFound {
            found = []
        }
        return found.compactMap { item -> SecretServiceImport.SourceItem? in
            guard let service = item[.service]?.stringValue,
                service == "org.freedesktop.secrets" || service.hasPrefix("org.freedesktop.secrets/")
            else { return nil }
            var attributes: [String: String] = [:]
            for (key, value) in item.attributes where AttributeKey.isSecretServiceAttribute(key) {
                guard let text = value.stringValue, !text.isEmpty else { continue }
                attributes[String(key.rawValue.dropFirst(AttributeKey.secretServicePrefix.count))] = text
            }
            return SecretServiceImport.SourceItem(
                label: item[.label]?.stringValue ?? "", attributes: attributes, secret: item.data ?? Data(),
                contentType: item[.itemDescription]?.stringValue ?? "text/plain")
        }
    }

    static let service = "/org/freedesktop/secrets"
    static let defaultCollection = "/org/freedesktop/secrets/aliases/default"

    /// Creates each item the provider does not have yet in its default collection.
    static func write(_ items: [SecretServiceImport.SourceItem], to name: String) throws(BusError) -> (
        copied: Int, present: Int, locked: Int
    ) {
        let bus = try Bus(.session)
        let session = try SecretServiceImport.openPlainSession(bus, name, service)
        var report = (copied: 0, present: 0, locked: 0)
        for item in items {
            if try present(item, bus: bus, name: name, session: session) {
                report.present += 1
                continue
            }
            let reply = try bus.call(
                name, path: defaultCollection, interface: "org.freedesktop.Secret.Collection", member: "CreateItem"
            ) { (message) throws(BusError) in
                try message.appendCreateItem(
                    label: item.label, attributes: item.attributes, session: session, secret: Array(item.secret),
                    contentType: item.contentType, replace: false)
            }
            let made = try reply.readString("o")
            if made == "/" { report.locked += 1 } else { report.copied += 1 }
        }
        _ = try bus.call(name, path: session, interface: "org.freedesktop.Secret.Session", member: "Close")
        return report
    }

    /// Whether the provider has an unlocked item with the same attributes, label and secret.
    private static func present(_ item: SecretServiceImport.SourceItem, bus: Bus, name: String, session: String)
        throws(BusError) -> Bool
    {
        let search = try bus.call(
            name, path: service, interface: "org.freedesktop.Secret.Service", member: "SearchItems"
        ) { (message) throws(BusError) in
            try message.open("a", "{ss}")
            for (key, value) in item.attributes {
                try message.open("e", "ss")
                try message.append(key)
                try message.append(value)
                try message.close()
            }
            try message.close()
        }
        let unlocked = try search.readObjectPaths()
        guard !unlocked.isEmpty else { return false }
        let secrets = try bus.call(
            name, path: service, interface: "org.freedesktop.Secret.Service", member: "GetSecrets"
        ) { (message) throws(BusError) in
            try message.open("a", "o")
            for path in unlocked { try message.append(path, as: "o") }
            try message.close()
            try message.append(session, as: "o")
        }
        var same: [String] = []
        _ = try secrets.enter("a", "{o(oayays)}")
        while try secrets.enter("e", "o(oayays)") {
            let path = try secrets.readString("o")
            _ = try secrets.enter("r", "oayays")
            _ = try secrets.readString("o")
            _ = try secrets.readBytes()
            let value = Data(try secrets.readBytes())
            _ = try secrets.readString()
            try secrets.exit()
            try secrets.exit()
            if value == item.secret { same.append(path) }
        }
        try secrets.exit()
        for path in same {
            let reply = try bus.call(name, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get") {
                (message) throws(BusError) in
                try message.append("org.freedesktop.Secret.Item")
                try message.append("Attributes")
            }
            _ = try reply.enter("v", "a{ss}")
            let attributes = try reply.readStringDictionary()
            let labelReply = try bus.call(name, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get")
            { (message) throws(BusError) in
                try message.append("org.freedesktop.Secret.Item")
                try message.append("Label")
            }
            _ = try labelReply.enter("v", "s")
            // GNOME Keyring adds xdg:schema where the creator gave none; an item is the same with or without it.
            if try labelReply.readString() == item.label
                && attributes.filter({ $0.key != "xdg:schema" }) == item.attributes.filter({ $0.key != "xdg:schema" })
            {
                return true
            }
        }
        return false
    }
}
