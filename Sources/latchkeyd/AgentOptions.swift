import FoundationEssentials
import LatchkeyEngine

// latchkeyd's options, in one table that parses the command line and writes `--help`, the manual page
// (`latchkeyd --manual`) and shell completions (`latchkeyd --completion bash|zsh|fish`).

/// One option of latchkeyd.
struct AgentOption {
    let name: String
    /// The value's name ("path"), nil for a flag.
    let value: String?
    let help: String
}

enum AgentOptions {
    static let all: [AgentOption] = [
        AgentOption(
            name: "keychain", value: "path",
            help: "Serve this keychain (else LATCHKEY_KEYCHAIN, else the default keychain)."),
        AgentOption(
            name: "socket", value: "path",
            help:
                "Listen on this socket (else LATCHKEY_AGENT_SOCKET, else $XDG_RUNTIME_DIR/latchkey/agent.sock, else ~/.local/state/latchkey/agent.sock)."
        ),
        AgentOption(
            name: "pinentry", value: "program",
            help: "Ask for protected items with this pinentry (else LATCHKEY_PINENTRY, else pinentry on the PATH)."),
        AgentOption(
            name: "secret-service", value: nil,
            help:
                "Provide the Secret Service (org.freedesktop.secrets) on the session bus too, so libsecret, secret-tool, Python keyring and browsers keep their secrets in the keychain (also LATCHKEY_SECRET_SERVICE=1)."
        ),
        AgentOption(
            name: "secret-service-policy", value: "shared|isolated",
            help:
                "Which Secret Service items a program sees: all of them (shared, the default, as GNOME Keyring), or those it created and those of the access groups it is registered for (isolated; also LATCHKEY_SECRET_SERVICE_POLICY)."
        ),
        AgentOption(
            name: "secret-service-sync", value: nil,
            help:
                "Make the items stored through the Secret Service synchronizable, so they go to the vault's other devices when the keychain is set up for sync (also LATCHKEY_SECRET_SERVICE_SYNC=1). Without it they stay on this device, as items stored without kSecAttrSynchronizable do; the Secret Service shows synchronizable items either way."
        ),
        AgentOption(
            name: "program-identity", value: "executable|platform",
            help:
                "How programs are told apart on every front end: sandboxed and confined programs by what the platform attests, unconfined ones by their executable's path and digest (executable, the default); or only what the platform attests (platform; also LATCHKEY_PROGRAM_IDENTITY): per-program items only for Flatpak apps and LSM-confined programs, every unconfined program treated as the user, since another program of the user can trace it or start it with LD_PRELOAD."
        ),
        AgentOption(
            name: "ssh-agent-socket", value: "path",
            help:
                "Serve the OpenSSH agent protocol on this socket (else LATCHKEY_SSH_AGENT_SOCKET, else ssh-agent.sock beside the agent's socket: $XDG_RUNTIME_DIR/latchkey/ssh-agent.sock). Point SSH_AUTH_SOCK at it."
        ),
        AgentOption(
            name: "no-ssh-agent", value: nil, help: "Do not serve the SSH agent protocol (also LATCHKEY_SSH_AGENT=0)."),
        AgentOption(
            name: "no-lock-on-session-lock", value: nil,
            help:
                "Do not lock the keychain when the login session locks its screen (logind's Lock signal and LockedHint; also LATCHKEY_LOCK_ON_SESSION_LOCK=0). The screen locker's PAM stack unlocks it again through pam_latchkey."
        ),
        AgentOption(
            name: "no-sync", value: nil,
            help:
                "Do not sync in the background, though the keychain is set up for sync (latchkey sync now still does; also LATCHKEY_SYNC=0)."
        ),
        AgentOption(
            name: "no-access-log", value: nil,
            help:
                "Do not write the access log (who read, changed or deleted which item; latchkey log shows it; also LATCHKEY_ACCESS_LOG=0). The agent's log still says when it refuses a program it does not serve."
        ),
        AgentOption(
            name: "wait-for-keychain", value: "seconds",
            help:
                "When the keychain does not exist yet, wait this long (1 to 3600 s) for it instead of exiting (also LATCHKEY_WAIT_FOR_KEYCHAIN): the agent listens meanwhile, answers that there is no keychain yet, and holds the password an unlock hands over (pam_latchkey at a login that creates the keychain) to unlock the keychain with once it appears. At the end of the wait the password is wiped and the agent exits as without this option."
        ),
        AgentOption(
            name: "unlock-unattended", value: nil,
            help:
                "At start, unlock the keychain through its unattended TPM unlock (latchkey tpm enroll --unattended --pcrs ...; also LATCHKEY_UNLOCK_UNATTENDED=1), as a service's keychain at boot: no passphrase anywhere. When the TPM refuses (a PCR changed, no TPM, not enrolled) the agent says why on standard error and serves the keychain locked, for its passphrase or recovery code."
        ),
        AgentOption(
            name: "backup-directory", value: "path",
            help:
                "Keep snapshots of the keychain in this directory, another disk or a synced folder (also LATCHKEY_BACKUP_DIRECTORY): one when the newest there is older than --backup-every and the keychain changed since, taken while clients go on writing, its items encrypted as in the keychain. latchkey backup lists and restores them."
        ),
        AgentOption(
            name: "backup-every", value: "span",
            help: "Take a snapshot this often: 1d (the default), 12h, 30m or 90s (also LATCHKEY_BACKUP_EVERY)."),
        AgentOption(
            name: "backup-keep", value: "count",
            help:
                "Keep the newest this many snapshots and remove older ones (14 by default; also LATCHKEY_BACKUP_KEEP)."),
        AgentOption(name: "verbose", value: nil, help: "Log to standard error."),
        AgentOption(name: "manual", value: nil, help: "Print the manual page latchkeyd(1), in roff, and exit."),
        AgentOption(name: "completion", value: "shell", help: "Print shell completions (bash, zsh or fish) and exit."),
        AgentOption(name: "version", value: nil, help: "Print latchkeyd's version and exit."),
        AgentOption(name: "help", value: nil, help: "Show this help and exit."),
    ]

    static let description = """
        Runs the Latchkey agent in the foreground. It serves one keychain on a Unix socket in a directory of \
        this user with mode 0700 (under systemd socket activation, the socket systemd passes). It starts locked: \
        `latchkey unlock-keychain` unlocks it. It identifies every client by its user and the digest of its \
        executable and serves registered programs (`latchkey register-application`) their access groups. One \
        agent serves a keychain at a time. SIGTERM or SIGINT wipes the keys and ends it.
        """

    static let sshAgent = """
        It is also an SSH agent: ssh, ssh-add and ssh-keygen -Y sign use the keychain's SSH keys through its second \
        socket, `ssh-agent.sock` beside the first. Put `export SSH_AUTH_SOCK="$XDG_RUNTIME_DIR/latchkey/ssh-agent.sock"` in \
        your shell's profile. `ssh-add` stores keys in the keychain (held by the agent, never handed out again), `ssh-add \
        -d` and `-D` remove them from it, `ssh-add -c` keys ask through pinentry before each use, and `latchkey ssh-key` \
        makes, lists, imports and removes them.
        """

    static let protectedItems = """
        Items whose access control asks for the user (SecAccessControl .userPresence, .devicePasscode, \
        biometry, .applicationPassword) are released only after the user confirms the keychain passphrase in \
        pinentry.
        """

    static var usage: String {
        let synopsis = all.filter { !["manual", "completion", "version", "help"].contains($0.name) }
            .map { "[--\($0.name)\($0.value.map { " \($0)" } ?? "")]" }.joined(separator: " ")
        var lines = ["Usage: latchkeyd \(synopsis)", "", description, "", sshAgent, "", protectedItems, "", "Options:"]
        let width = all.map { display($0).count }.max() ?? 0
        for option in all {
            lines.append(
                "  " + padded(display(option), to: width) + "  " + option.help)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` with spaces after it to `width` characters.
    private static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    /// At least four upper-case hexadecimal digits (troff's Unicode escape).
    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    static func display(_ option: AgentOption) -> String { "--\(option.name)" + (option.value.map { " \($0)" } ?? "") }

    private static func roff(_ text: String) -> String {
        var out = text.replacing("\\", with: "\\e").replacing("-", with: "\\-")
        // troff reads ASCII: anything else as its Unicode escape (an em dash is \[u2014]).
        out = out.unicodeScalars.map { $0.isASCII ? String($0) : "\\[u" + hex4($0.value) + "]" }
            .joined()
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }

    static var manual: String {
        var lines = [
            ".TH LATCHKEYD 1 \"\" \"latchkeyd \(ProductVersion.number)\" \"User Commands\"", ".SH NAME",
            "latchkeyd \\- the Latchkey agent",
            ".SH SYNOPSIS", ".B latchkeyd", "[\\fIoptions\\fR]", ".SH DESCRIPTION", roff(description), ".PP",
            roff(sshAgent), ".PP", roff(protectedItems),
            ".SH OPTIONS",
        ]
        for option in all { lines += [".TP", "\\fB\(roff(display(option)))\\fR", roff(option.help)] }
        lines += [".SH SEE ALSO", "latchkey(1), pinentry(1), ssh-add(1), ssh(1)"]
        return lines.joined(separator: "\n") + "\n"
    }

    static func completion(_ shell: String) -> String? {
        let words = all.map { "--\($0.name)" }
        switch shell {
        case "bash":
            return """
                # bash completion for latchkeyd (written by `latchkeyd --completion bash`)
                _latchkeyd() {
                    local current="${COMP_WORDS[COMP_CWORD]}" previous="${COMP_WORDS[COMP_CWORD-1]}"
                    case "$previous" in
                        --keychain|--socket|--pinentry|--ssh-agent-socket) COMPREPLY=($(compgen -f -- "$current")); return ;;
                        --backup-directory) COMPREPLY=($(compgen -d -- "$current")); return ;;
                        --completion) COMPREPLY=($(compgen -W "bash zsh fish" -- "$current")); return ;;
                        --wait-for-keychain|--backup-every|--backup-keep) COMPREPLY=(); return ;;
                    esac
                    COMPREPLY=($(compgen -W "\(words.joined(separator: " "))" -- "$current"))
                }
                complete -F _latchkeyd latchkeyd

                """
        case "zsh":
            let specs = all.map { option -> String in
                let help = option.help.replacing("'", with: "'\\''").replacing("[", with: "\\[")
                    .replacing("]", with: "\\]").replacing(":", with: "\\:")
                let value =
                    option.value.map { name in
                        name == "shell"
                            ? ":shell:(bash zsh fish)"
                            : ["seconds", "span", "count"].contains(name) ? ":\(name): " : ":\(name):_files"
                    } ?? ""
                return "'--\(option.name)[\(help)]\(value)'"
            }
            return
                "#compdef latchkeyd\n# zsh completion for latchkeyd (written by `latchkeyd --completion zsh`)\n_arguments \(specs.joined(separator: " "))\n"
        case "fish":
            var lines = [
                "# fish completion for latchkeyd (written by `latchkeyd --completion fish`)",
                "complete -c latchkeyd -f",
            ]
            for option in all {
                var line = "complete -c latchkeyd -l \(option.name)"
                if let value = option.value {
                    line +=
                        option.name == "completion"
                        ? " -x -a 'bash zsh fish'" : ["seconds", "span", "count"].contains(value) ? " -x" : " -r -F"
                }
                lines.append(line + " -d '\(option.help.replacing("'", with: "\\'"))'")
            }
            return lines.joined(separator: "\n") + "\n"
        default:
            return nil
        }
    }
}
