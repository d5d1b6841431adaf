import FoundationEssentials

/// The manual page `latchkey(1)`, in roff, written from the same command table as `latchkey help`:
/// `latchkey manual > latchkey.1`.
enum ManualPage {
    /// roff text: a backslash as `\e`, a leading `.` or `'` protected, dashes as `\-`, non-ASCII as `\[uXXXX]`.
    static func escaped(_ text: String) -> String {
        var out = text.replacing("\\", with: "\\e").replacing("-", with: "\\-")
        // troff reads ASCII: anything else as its Unicode escape (an em dash is \[u2014]).
        out = out.unicodeScalars.map { $0.isASCII ? String($0) : "\\[u" + $0.value.digits(4, radix: 16) + "]" }
            .joined()
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }

    static func page(commands: [Command], version: String) -> String {
        var lines = [
            ".TH LATCHKEY 1 \"\" \"latchkey \(version)\" \"User Commands\"",
            ".SH NAME",
            "latchkey \\- keep passwords, tokens and keys in an encrypted keychain",
            ".SH SYNOPSIS",
            ".B latchkey",
            ".I command",
            "[\\fIoptions\\fR] [\\fIkeychain\\fR]",
            ".SH DESCRIPTION",
            escaped(
                "Latchkey keeps passwords, tokens and keys in an encrypted keychain file, with the semantics of Apple's "
                    + "Keychain Services. The commands follow macOS security(1), so scripts written for it work with latchkey in "
                    + "its place. A command acts on the keychain named by its last argument (a path, or a name in "
                    + "$XDG_DATA_HOME/latchkey, ~/.local/share/latchkey by default), else on LATCHKEY_KEYCHAIN, else on the default keychain. The passphrase is asked "
                    + "for on the terminal; --passphrase-fd, --passphrase-file and LATCHKEY_PASSPHRASE (the least safe) supply "
                    + "it without one. When latchkeyd(1) serves the keychain and the program is registered with it, commands go "
                    + "through the agent and need no passphrase."),
            ".SH COMMANDS",
        ]
        for command in commands {
            lines += [
                ".SS \(escaped(command.name))", ".B latchkey \(escaped(command.name))", escaped(command.synopsis),
                ".PP",
                escaped(command.summary), ".PP", escaped(command.details),
            ]
            for option in command.options {
                lines += [".TP", "\\fB\(escaped(option.display))\\fR", escaped(option.help)]
            }
            if !command.exitStatuses.isEmpty {
                lines += [".PP", escaped("Exit statuses of latchkey \(command.name):")]
                for (status, meaning) in command.exitStatuses {
                    lines += [".TP", "\\fB\(status)\\fR", escaped(meaning)]
                }
            }
        }
        lines += [
            ".SH ENVIRONMENT",
            ".TP", "\\fBLATCHKEY_KEYCHAIN\\fR", escaped("The keychain to use when none is named."),
            ".TP", "\\fBLATCHKEY_PASSPHRASE\\fR",
            escaped(
                "The keychain passphrase, without a prompt. Every process of the user can read it: prefer a prompt, --passphrase-fd or a 0600 key file."
            ),
            ".TP", "\\fBLATCHKEY_AGENT_SOCKET\\fR",
            escaped(
                "The agent's socket (else $XDG_RUNTIME_DIR/latchkey/agent.sock, else ~/.local/state/latchkey/agent.sock)."
            ),
            ".TP", "\\fBLATCHKEY_APPLICATION_ID\\fR",
            escaped("The application the items of a command belong to (else \"latchkey\")."),
            ".TP", "\\fBLATCHKEY_BACKUP_PASSPHRASE\\fR",
            escaped("The passphrase of a backup for export and import, without a prompt."),
            ".SH EXIT STATUS",
            escaped(
                "0 on success; 64 for a usage error; otherwise the low byte of the keychain status, as security(1) exits: "
                    + "44 for errSecItemNotFound, 45 for errSecDuplicateItem, 51 for a wrong passphrase, 36 when nobody can be asked."
            ),
            ".SH SEE ALSO",
            "latchkeyd(1), security(1)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}
