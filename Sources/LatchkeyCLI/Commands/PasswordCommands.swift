import FoundationEssentials
import Latchkey

/// add-, find- and delete-generic-password and -internet-password, with `security`'s options and output.
enum PasswordCommands {
    /// Generic or internet passwords: what differs between the two families of commands.
    enum Kind {
        case generic, internet

        var itemClass: ItemClass { self == .generic ? .genericPassword : .internetPassword }
        var noun: String { self == .generic ? "generic password" : "internet password" }
        var nameKey: AttributeKey { self == .generic ? .service : .server }
    }

    // MARK: Options

    /// The options that match or set attributes, per kind (`security`'s letters).
    static func attributeOptions(_ kind: Kind, matching: Bool) -> [OptionSpec] {
        let verb = matching ? "Match" : "Set"
        var options = [
            OptionSpec(.account, .required, value: "account", "\(verb) the account."),
            OptionSpec(
                .serviceOrServer, .required, value: kind == .generic ? "service" : "server",
                "\(verb) the \(kind == .generic ? "service" : "server")."),
            OptionSpec(.creator, .required, value: "creator", "\(verb) the creator (a four-character code)."),
            OptionSpec(.typeCode, .required, value: "type", "\(verb) the type (a four-character code)."),
            OptionSpec(.kind, .required, value: "kind", "\(verb) the kind (the description)."),
            OptionSpec(.comment, .required, value: "comment", "\(verb) the comment."),
            OptionSpec(
                .label, .required, value: "label",
                matching
                    ? "Match the label."
                    : "Set the label (the \(kind == .generic ? "service" : "server") when omitted)."),
        ]
        if kind == .generic {
            options.append(OptionSpec(.generic, .required, value: "value", "\(verb) the generic attribute."))
        } else {
            options += [
                OptionSpec(.securityDomain, .required, value: "domain", "\(verb) the security domain."),
                OptionSpec(.path, .required, value: "path", "\(verb) the path."),
                OptionSpec(.port, .required, value: "port", "\(verb) the port (0 to 65535)."),
                OptionSpec(
                    .protocolCode, .required, value: "protocol",
                    "\(verb) the protocol, a four-character code such as \"htps\" or \"ftp \"."),
                OptionSpec(
                    .authenticationType, .required, value: "type",
                    "\(verb) the authentication type, a four-character code such as \"dflt\" or \"form\"."),
            ]
        }
        options.append(
            OptionSpec(
                .accessGroup, .required, value: "group",
                matching ? "Only look in this access group." : "Put the item in this access group."))
        options.append(
            OptionSpec(.synchronizable, matching ? "Only match synchronizable items." : "Make the item synchronizable.")
        )
        return options
    }

    /// The attributes the options give, checked.
    static func attributes(_ arguments: ParsedArguments, kind: Kind) throws -> [AttributeKey: AttributeValue] {
        var attributes: [AttributeKey: AttributeValue] = [:]
        if let account = arguments.value(.account) { attributes[.account] = .string(account) }
        if let name = arguments.value(.serviceOrServer) { attributes[kind.nameKey] = .string(name) }
        if let creator = arguments.value(.creator) {
            attributes[.creator] = .number(try FourCharCode.number(creator, option: "-c"))
        }
        if let type = arguments.value(.typeCode) {
            attributes[.type] = .number(try FourCharCode.number(type, option: "-C"))
        }
        if let description = arguments.value(.kind) { attributes[.itemDescription] = .string(description) }
        if let comment = arguments.value(.comment) { attributes[.comment] = .string(comment) }
        if let label = arguments.value(.label) { attributes[.label] = .string(label) }
        if kind == .generic, let generic = arguments.value(.generic) {
            attributes[.generic] = .data(Data(generic.utf8))
        }
        if kind == .internet {
            if let domain = arguments.value(.securityDomain) { attributes[.securityDomain] = .string(domain) }
            if let path = arguments.value(.path) { attributes[.path] = .string(path) }
            if let port = arguments.value(.port) {
                guard let number = Int(port), ItemLimits.ports.contains(number) else {
                    throw UsageError(message: "-P needs a port number between 0 and 65535, not '\(port)'")
                }
                attributes[.port] = .number(Int64(number))
            }
            if let code = arguments.value(.protocolCode) {
                attributes[.protocol] = .string(
                    String(decoding: try FourCharCode.validated(code, option: "-r"), as: UTF8.self))
            }
            if let code = arguments.value(.authenticationType) {
                attributes[.authenticationType] = .string(
                    String(decoding: try FourCharCode.validated(code, option: "-t"), as: UTF8.self))
            }
        }
        if let group = arguments.value(.accessGroup) { attributes[.accessGroup] = .string(group) }
        return attributes
    }

    static func accessibility(_ text: String) throws -> Accessibility {
        let names: [String: Accessibility] = [
            "when-unlocked": .whenUnlocked, "after-first-unlock": .afterFirstUnlock, "always": .always,
            "when-unlocked-this-device-only": .whenUnlockedThisDeviceOnly,
            "after-first-unlock-this-device-only": .afterFirstUnlockThisDeviceOnly,
            "always-this-device-only": .alwaysThisDeviceOnly,
            "when-passcode-set-this-device-only": .whenPasscodeSetThisDeviceOnly,
        ]
        guard let accessibility = Accessibility(rawValue: text) ?? names[text] else {
            throw UsageError(
                message:
                    "unknown accessibility '\(text)'; use ak, ck, dk, aku, cku, dku, akpu or a name such as after-first-unlock"
            )
        }
        return accessibility
    }

    // MARK: add

    static func add(_ kind: Kind) -> Command {
        let name = kind == .generic ? "add-generic-password" : "add-internet-password"
        let passwordKeys = kind == .generic ? [OptionKey.password, .legacyPassword] : [.password]
        var options = attributeOptions(kind, matching: false)
        options += [
            OptionSpec(
                .password, .requiredOrPrompt, value: "password",
                "The password; put -w last to be asked for it (a password on the command line is visible to other users)."
            ),
            OptionSpec(.passwordHex, .required, value: "hex", "The password as hexadecimal digits."),
            OptionSpec(.update, "Update the item if it exists (otherwise an existing item is an error)."),
            OptionSpec(
                .anyApplication, "Accepted for compatibility and ignored: Latchkey grants access by access group."),
            OptionSpec(
                .trustedApplication, .required, value: "app",
                "Accepted for compatibility and ignored: Latchkey grants access by access group."),
            OptionSpec(
                .accessibility, .required, value: "class",
                "When the item is readable: ak (when unlocked, the default), ck (after first unlock), dk (always), or aku, cku, dku, akpu."
            ),
        ]
        if kind == .generic {
            options.append(
                OptionSpec(.legacyPassword, .requiredOrPrompt, value: "password", "The password (legacy form of -w)."))
        }
        options += SecretInput.options + passphraseOptions
        let noun = kind.noun
        return Command(
            name,
            synopsis:
                "-a account -s \(kind == .generic ? "service" : "server") [-w [password]] [options...] [keychain]",
            summary: "Add \(kind == .generic ? "a" : "an") \(noun) item.",
            details: """
                Adds \(kind == .generic ? "a" : "an") \(noun) for an account and \(kind == .generic ? "a service" : "a server"). \
                The password is asked for twice when -w is the last option; it can also come from -X, --password-fd \
                or --password-stdin, and it is empty when none is given. With -U an existing item is updated in place \
                (in one transaction, never deleted first); without it, an existing item is an error (exit status 45). \
                The item goes to --access-group, else to LATCHKEY_APPLICATION_ID's group, else to "latchkey".
                """,
            options: options
        ) { arguments, context in
            guard arguments.has(.account) else { throw UsageError(message: "-a account is required") }
            guard arguments.has(.serviceOrServer) else {
                throw UsageError(message: "-s \(kind == .generic ? "service" : "server") is required")
            }
            var attributes = try attributes(arguments, kind: kind)
            if attributes[.label] == nil { attributes[.label] = attributes[kind.nameKey] }
            if kind == .internet && attributes[.authenticationType] == nil {
                attributes[.authenticationType] = .string(AuthenticationType.default.rawValue)
            }
            if let text = arguments.value(.accessibility) {
                attributes[.accessible] = .string(try accessibility(text).rawValue)
            }
            if arguments.has(.synchronizable) { attributes[.synchronizable] = .bool(true) }
            if arguments.has(.anyApplication) || arguments.has(.trustedApplication) {
                context.warning(
                    "-A and -T are ignored: Latchkey grants access by access group (--access-group), not by application"
                )
            }
            // The store first: the agent identifies this program when it connects, before the secret is read
            // (reading it makes the process not dumpable, and the agent cannot look at such a process).
            let store = try CommandKeychain.open(arguments, context: context, group: arguments.value(.accessGroup))
            var secret = try SecretInput.read(arguments, passwordKeys: passwordKeys, context: context)
            defer { wipe(&secret) }
            let item = NewItem(kind.itemClass, attributes: attributes, data: secret)
            let update = arguments.has(.update)
            try store.run {
                if update {
                    _ = try store.service.addOrUpdate(item)
                } else {
                    _ = try store.service.add(item, returning: [])
                }
            }
            return 0
        }
    }

    // MARK: find and delete

    /// The first item the options match (the keychain is unlocked only when it has to be), with its data.
    static func findFirst(_ arguments: ParsedArguments, kind: Kind, store: CommandKeychain) throws -> ItemResult {
        var matching = try attributes(arguments, kind: kind)
        // As `security` does: once the whole primary key is given, the other criteria are ignored. (The
        // engine's schema knows the primary key.)
        let key = kind.itemClass.primaryKey
        if key.allSatisfy({ matching[$0] != nil }) {
            matching = matching.filter { key.contains($0.key) || $0.key == .accessGroup }
        }
        if arguments.has(.synchronizable) { matching[.synchronizable] = .bool(true) }
        let query = ItemQuery(
            kind.itemClass, matching: matching, synchronizable: .any, limit: .one,
            returning: [.attributes, .data, .persistentReference])
        let found = try store.run { try store.service.copyMatching(query) }
        guard let item = found.first else { throw KeychainError(.itemNotFound) }
        return item
    }

    static func find(_ kind: Kind) -> Command {
        let name = kind == .generic ? "find-generic-password" : "find-internet-password"
        let options =
            attributeOptions(kind, matching: true) + [
                OptionSpec(.printPassword, "Also print the password, on standard error."),
                OptionSpec(.passwordOnly, "Print only the password, on standard output."),
            ] + passphraseOptions
        return Command(
            name,
            synopsis: "[-a account] [-s \(kind == .generic ? "service" : "server")] [options...] [-g | -w] [keychain]",
            summary: "Find \(kind == .generic ? "a" : "an") \(kind.noun) item.",
            details: """
                Finds the first \(kind.noun) that matches every option given (exactly; with no options, the first \
                one) and prints its attributes in the layout of `security`. -g adds the password on standard error as \
                password: "...", and -w prints only the password and a newline on standard output (as hexadecimal \
                when it has bytes that are not printable). When nothing matches, it says so and exits with 44, as \
                `security` does. Items readable at any time need no passphrase; for the others the passphrase is \
                asked for.
                """,
            options: options
        ) { arguments, context in
            let path = context.keychainPath(arguments.positionals.first)
            let item = try findFirst(
                arguments, kind: kind, store: CommandKeychain.open(arguments, context: context, group: nil))
            var secret = Array(item.data ?? Data())
            defer { wipe(&secret) }
            if arguments.has(.passwordOnly) {
                context.stdout.line(PrintBuffer.passwordOnly(secret))
                return 0
            }
            context.stdout.write(ItemPrinter.block(item, keychainPath: path))
            if arguments.has(.printPassword) { context.stderr.line("password: " + PrintBuffer.format(secret)) }
            return 0
        }
    }

    static func delete(_ kind: Kind) -> Command {
        let name = kind == .generic ? "delete-generic-password" : "delete-internet-password"
        let options =
            attributeOptions(kind, matching: true) + [
                OptionSpec(.ignoredPrintPassword, "Accepted for compatibility and ignored.")
            ] + passphraseOptions
        return Command(
            name, synopsis: "[-a account] [-s \(kind == .generic ? "service" : "server")] [options...] [keychain]",
            summary: "Delete \(kind == .generic ? "a" : "an") \(kind.noun) item.",
            details: """
                Deletes the first \(kind.noun) that matches every option given, printing its attributes first, then \
                "password has been deleted." on standard error, as `security` does. At least one option is required, \
                so a bare command never deletes an arbitrary item. When nothing matches, it exits with 44.
                """,
            options: options
        ) { arguments, context in
            let criteria = arguments.given.subtracting([.ignoredPrintPassword, .passphraseFD, .passphraseFile])
            guard !criteria.isEmpty else {
                throw UsageError(message: "name the item to delete with at least one option (for example -a and -s)")
            }
            let path = context.keychainPath(arguments.positionals.first)
            let store = try CommandKeychain.open(arguments, context: context, group: nil)
            let item = try findFirst(arguments, kind: kind, store: store)
            context.stdout.write(ItemPrinter.block(item, keychainPath: path))
            let target = ItemQuery(
                kind.itemClass, synchronizable: .any, persistentReference: item.persistentReference, limit: .all)
            _ = try store.run { try store.service.delete(target) }
            context.stderr.line("password has been deleted.")
            return 0
        }
    }
}
