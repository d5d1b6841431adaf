import FoundationEssentials
import Latchkey

/// `latchkey desktop status|enable|disable [--dry-run]`: switching a user's desktop session to Latchkey as its
/// Secret Service (org.freedesktop.secrets) and back, with every item moved and every change recorded.
enum DesktopCommand {
    static let actions = ["status", "enable", "disable"]

    static let command = Command(
        "desktop", synopsis: "status|enable|disable [--dry-run] [-k keychain]",
        summary: "Switch this user's desktop to Latchkey as its Secret Service, and back.",
        details: """
            `desktop enable` moves this user's session from the provider that holds org.freedesktop.secrets now \
            (GNOME Keyring, KWallet's ksecretd, KeePassXC or oo7) to Latchkey. It first copies every item of the \
            provider into the keychain and counts them (it stops, changing nothing else, when the provider keeps \
            some locked); then it keeps the provider from taking the name at the next login — a drop-in for each of \
            its systemd user units that keeps it from starting while latchkeyd.service is installed, a hidden copy \
            of its autostart entry, or its own setting turned off, each printed with its path; then it enables \
            latchkeyd.service for the session with the alias dbus-org.freedesktop.secrets.service, links the \
            activation file of org.freedesktop.secrets into the user's D-Bus services, turns latchkeyd's Secret \
            Service on in ~/.config/latchkey/latchkeyd.env, and points the secret portal \
            (org.freedesktop.impl.portal.Secret) at Latchkey in ~/.config/xdg-desktop-portal/portals.conf. Last it \
            copies what the provider stored meanwhile, stops it, and restarts latchkeyd.service through the systemd \
            user manager, which then holds the name (its keychain locked until the next login or `latchkey \
            unlock-keychain`). Each change is recorded in $XDG_STATE_HOME/latchkey/desktop.json (by default \
            ~/.local/state/latchkey/desktop.json), written again after each one. \
            `desktop disable` reads the keychain's Secret Service items, undoes each recorded change that is still \
            as enable left it (one the user changed since is left, and said so), hands the name back to the \
            provider (latchkeyd restarted without the Secret Service, the provider started by its unit or by the \
            bus) and copies the items into it — what it has already is skipped, so what was stored meanwhile goes \
            back; when the provider is not there yet or keeps its collection locked, the record stays and running \
            disable again finishes the move. Neither direction deletes an item, and both may be run again: a \
            change already made, or already undone, is skipped. `desktop status` prints who holds the name and \
            each recorded change with whether it is still in place. With --dry-run, enable and disable print each \
            step (and count the items they would move) without doing it. LATCHKEY_SYSTEM_ROOT names another root \
            to read the system's files (units, activation files, autostart entries) from.
            """,
        options: [
            OptionSpec(.dryRun, "Print each step without doing it."),
            OptionSpec(
                .keychainShort, .required, value: "keychain",
                "The keychain to move items into and out of (the default keychain)."),
        ] + passphraseOptions,
        positionals: 1...1,
        exitStatuses: [
            (0, "Done, or nothing to do."),
            (
                1,
                "A step failed or is left to do (locked items, a provider that is not there yet); the output says which."
            ),
        ]
    ) { arguments, context in
        let action = arguments.positionals[0]
        let paths = DesktopPaths(environment: context.environment)
        let session = DesktopSession(paths: paths, environment: context.environment)
        let dryRun = arguments.has(.dryRun)
        switch action {
        case "status":
            if dryRun { throw UsageError(message: "--dry-run goes with enable and disable") }
            return try DesktopStatus.run(paths: paths, session: session, context: context)
        case "enable":
            return try DesktopEnable(
                arguments: arguments, context: context, paths: paths, session: session, dryRun: dryRun
            ).run()
        case "disable":
            return try DesktopDisable(
                arguments: arguments, context: context, paths: paths, session: session, dryRun: dryRun
            ).run()
        default:
            throw UsageError(message: "the action is \(actions.joined(separator: ", ")), not \"\(action)\"")
        }
    }

    /// The keychain the moves use (through the agent when it serves it), as `import` and `export` open it.
    static func keychain(_ arguments: ParsedArguments, _ context: CLIContext) throws -> CommandKeychain {
        try CommandKeychain.open(
            arguments, context: context, group: "org.freedesktop.secrets",
            keychain: .option(arguments.value(.keychainShort)))
    }

    /// "1 item", "50 items".
    static func items(_ count: Int) -> String { "\(count) item\(count == 1 ? "" : "s")" }
}

/// `desktop status`.
enum DesktopStatus {
    static func run(paths: DesktopPaths, session: DesktopSession, context: CLIContext) throws -> Int32 {
        let out = context.stdout
        do {
            if let owner = try session.owner() {
                let who = owner.isLatchkey ? "Latchkey" : owner.peer?.name ?? "a provider latchkey does not know"
                out.line("org.freedesktop.secrets: \(who) (\(owner.description))")
            } else {
                out.line("org.freedesktop.secrets: no one holds it")
            }
        } catch {
            out.line("org.freedesktop.secrets: the session bus cannot be reached (\(error))")
        }
        guard let record = try DesktopRecord.load(paths) else {
            out.line("latchkey desktop: not enabled for this user (no record at \(paths.record))")
            return 0
        }
        let from = record.peer.flatMap(DesktopPeer.named).map { " from \($0.name)" } ?? ""
        out.line(
            "latchkey desktop: enabled\(from), \(DesktopCommand.items(record.copiedIn)) copied in (record \(paths.record))"
        )
        if record.movingBack {
            out.line("latchkey desktop: disable has not finished moving the items back; run it again")
        }
        for change in record.changes {
            out.line((change.isInPlace ? "in place: " : "changed since: ") + change.description)
        }
        return 0
    }
}
