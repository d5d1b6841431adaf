/// Shell completions for `latchkey`, written from the same command table as `latchkey help` (so they cannot
/// drift from the commands): `latchkey completion bash|zsh|fish`.
enum Completions {
    static let shells = ["bash", "zsh", "fish"]

    static func script(for shell: String, commands: [Command]) -> String? {
        switch shell {
        case "bash": bash(commands)
        case "zsh": zsh(commands)
        case "fish": fish(commands)
        default: nil
        }
    }

    /// Every spelling of a command's options: `-a`, `--account`.
    static func words(_ option: OptionSpec) -> [String] {
        (option.short.map { ["-\($0)"] } ?? []) + (option.long.map { ["--\($0)"] } ?? [])
    }

    private static func bash(_ commands: [Command]) -> String {
        var lines = [
            "# bash completion for latchkey (written by `latchkey completion bash`)",
            "_latchkey() {",
            "    local current=\"${COMP_WORDS[COMP_CWORD]}\"",
            "    if [ \"$COMP_CWORD\" -eq 1 ]; then",
            "        COMPREPLY=($(compgen -W \"\(commands.map(\.name).joined(separator: " ")) help\" -- \"$current\"))",
            "        return",
            "    fi",
            "    local options=\"\"",
            "    case \"${COMP_WORDS[1]}\" in",
        ]
        for command in commands {
            lines.append(
                "        \(command.name)) options=\"\(command.options.flatMap(words).joined(separator: " "))\" ;;")
        }
        lines += [
            "        help) COMPREPLY=($(compgen -W \"\(commands.map(\.name).joined(separator: " "))\" -- \"$current\")); return ;;",
            "    esac",
            "    if [[ \"$current\" == -* ]]; then",
            "        COMPREPLY=($(compgen -W \"$options\" -- \"$current\"))",
            "    else",
            "        COMPREPLY=($(compgen -f -- \"$current\"))",
            "    fi",
            "}",
            "complete -F _latchkey latchkey",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Text inside single quotes for zsh and fish: a quote becomes `'\''`.
    private static func quoted(_ text: String) -> String { text.replacing("'", with: "'\\''") }

    private static func zsh(_ commands: [Command]) -> String {
        var lines = [
            "#compdef latchkey",
            "# zsh completion for latchkey (written by `latchkey completion zsh`)",
            "_latchkey() {",
            "    local -a commands",
            "    commands=(",
        ]
        for command in commands {
            lines.append("        '\(command.name):\(quoted(zshEscaped(command.summary)))'")
        }
        lines += [
            "    )",
            "    if (( CURRENT == 2 )); then",
            "        _describe 'command' commands",
            "        return",
            "    fi",
            "    case $words[2] in",
        ]
        for command in commands {
            var specs: [String] = []
            for option in command.options {
                let help = quoted(zshEscaped(option.help))
                let value = option.argument == .none ? "" : ":\(option.valueName):"
                for word in words(option) { specs.append("'\(word)[\(help)]\(value)'") }
            }
            specs.append("'*:keychain:_files'")
            lines.append("        \(command.name)) _arguments \(specs.joined(separator: " ")) ;;")
        }
        lines += ["    esac", "}", "_latchkey \"$@\""]
        return lines.joined(separator: "\n") + "\n"
    }

    /// zsh's `_describe` and `_arguments` give `:` and brackets meaning: escape them in help text.
    private static func zshEscaped(_ text: String) -> String {
        text.replacing("\\", with: "\\\\").replacing(":", with: "\\:").replacing("[", with: "\\[")
            .replacing("]", with: "\\]")
    }

    private static func fish(_ commands: [Command]) -> String {
        var lines = [
            "# fish completion for latchkey (written by `latchkey completion fish`)",
            "complete -c latchkey -f",
        ]
        for command in commands {
            lines.append(
                "complete -c latchkey -n __fish_use_subcommand -a \(command.name) -d '\(quoted(command.summary))'")
        }
        for command in commands {
            for option in command.options {
                var line = "complete -c latchkey -n '__fish_seen_subcommand_from \(command.name)'"
                if let short = option.short { line += " -s \(short)" }
                if let long = option.long { line += " -l \(long)" }
                if option.argument != .none { line += " -r" }
                lines.append(line + " -d '\(quoted(option.help))'")
            }
            lines.append("complete -c latchkey -n '__fish_seen_subcommand_from \(command.name)' -F")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
