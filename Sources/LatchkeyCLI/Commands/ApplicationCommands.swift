import FoundationEssentials
import Latchkey

/// register-application, unregister-application and list-applications: the programs the agent knows, with
/// their application identifiers and access groups — the Linux counterpart of entitlements.
enum ApplicationCommands {
    static let register = Command(
        "register-application",
        synopsis: "[--app-id identifier] [--access-group group]... [--wildcard] executable [keychain]",
        summary: "Register a program with its access groups.",
        details: """
            Registers the program at the given path: when it connects to the agent, it runs as --app-id (the \
            executable's file name by default) with the access groups given by --access-group (the application \
            identifier by default; the first is where its new items go). --wildcard adds the group "*", which \
            sees every group: give it only to programs you trust with every secret, such as latchkey itself. The \
            registration records a digest of the executable: a rebuilt or replaced program is refused until it is \
            registered again. Registering needs the keychain passphrase; it goes through the agent when one runs.
            """,
        options: [
            OptionSpec(.appID, .required, value: "identifier", "The application identifier."),
            OptionSpec(.accessGroup, .required, value: "group", "An access group (repeat for several)."),
            OptionSpec(.wildcard, "Also grant the group \"*\" (every group)."),
        ] + passphraseOptions,
        positionals: 1...2
    ) { arguments, context in
        let executable = URL(fileURLWithPath: arguments.positionals[0]).resolvingSymlinksInPath().path
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw CommandFailure(message: "\(executable) is not an executable file")
        }
        let identifier = arguments.value(.appID) ?? URL(fileURLWithPath: executable).lastPathComponent
        // A name taken from a file is checked like a given one: a program called "*" gets no wildcard.
        try CallerIdentity.validate(
            name: identifier, as: arguments.has(.appID) ? "--app-id" : "the executable's name (give --app-id)")
        var groups = arguments.allValues(.accessGroup)
        for group in groups {
            guard group != CallerIdentity.wildcardGroup else {
                throw UsageError(message: "--access-group cannot be \"*\"; --wildcard grants every group")
            }
            try CallerIdentity.validate(name: group, as: "--access-group")
        }
        if groups.isEmpty { groups = [identifier] }
        if arguments.has(.wildcard) { groups.append(CallerIdentity.wildcardGroup) }
        let path = context.keychainPath(arguments.positionals.dropFirst().first)
        let passphrase = try context.passphrase(
            arguments, prompt: "password to unlock \(context.keychainName(arguments.positionals.dropFirst().first)): ")
        _ = try administration(path, context: context).service.register(
            executableAt: executable, applicationIdentifier: identifier, accessGroups: groups, passphrase: passphrase)
        context.stdout.line(
            "registered \(executable) as \(identifier) with access groups \(groups.joined(separator: ", "))")
        return 0
    }

    static let unregister = Command(
        "unregister-application", synopsis: "executable [keychain]", summary: "Remove a program's registration.",
        details: """
            Removes the registration of the program at the given path; the agent then serves it nothing, and it \
            opens the keychain itself with the passphrase, as when no agent runs. Needs the keychain passphrase.
            """,
        options: passphraseOptions, positionals: 1...2
    ) { arguments, context in
        let executable = URL(fileURLWithPath: arguments.positionals[0]).resolvingSymlinksInPath().path
        let path = context.keychainPath(arguments.positionals.dropFirst().first)
        let passphrase = try context.passphrase(
            arguments, prompt: "password to unlock \(context.keychainName(arguments.positionals.dropFirst().first)): ")
        let removed = try administration(path, context: context).service.unregister(
            executablePath: executable, passphrase: passphrase)
        guard removed else { throw KeychainError(.itemNotFound, "\(executable) is not registered") }
        return 0
    }

    static let list = Command(
        "list-applications", synopsis: "[keychain]", summary: "List the registered programs.",
        details: """
            Prints each registered program: its application identifier, its access groups, its path, and the \
            start of its digest. Through the agent when it runs (and has been unlocked); otherwise the keychain \
            is unlocked here.
            """,
        options: passphraseOptions
    ) { arguments, context in
        let path = context.keychainPath(arguments.positionals.first)
        let (service, agent) = try administration(path, context: context)
        // The agent lists the registrations to registered programs only; anyone else reads them here, with
        // the keychain unlocked by the passphrase.
        var registrations: [ApplicationRegistration]?
        if agent {
            do {
                registrations = try service.registrations()
            } catch KeychainError.missingEntitlement {
                registrations = nil
            }
        }
        if registrations == nil {
            let local = LocalKeychainService(
                database: try KeychainDatabase.open(at: path),
                caller: commandLineCaller(group: nil, environment: context.environment))
            try local.unlock(
                with: context.passphrase(
                    arguments, prompt: "password to unlock \(context.keychainName(arguments.positionals.first)): "))
            registrations = try local.registrations()
        }
        for registration in (registrations ?? []).sorted(by: { $0.applicationIdentifier < $1.applicationIdentifier }) {
            context.stdout.line(registration.description)
        }
        return 0
    }
}
