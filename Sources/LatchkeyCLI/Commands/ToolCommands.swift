import FoundationEssentials

/// Commands about the tool itself: shell completions and the manual page, written from the command table.
enum ToolCommands {
    static let completion = Command(
        "completion", synopsis: "bash|zsh|fish", summary: "Print shell completions for latchkey.",
        details: """
            Prints a completion script for the shell named, written from the same table as `latchkey help`: \
            the commands with their summaries, each command's options, and file names for the keychain. \
            Install it with `latchkey completion bash > ~/.local/share/bash-completion/completions/latchkey`, \
            `latchkey completion zsh > ~/.zfunc/_latchkey` (with ~/.zfunc on $fpath), or \
            `latchkey completion fish > ~/.config/fish/completions/latchkey.fish`.
            """,
        options: [], positionals: 1...1
    ) { arguments, context in
        let shell = arguments.positionals[0]
        guard let script = Completions.script(for: shell, commands: LatchkeyCommandLine.commands) else {
            throw UsageError(
                message: "there are completions for \(Completions.shells.joined(separator: ", ")), not \"\(shell)\"")
        }
        context.stdout.write(script)
        return 0
    }

    static let manual = Command(
        "manual", synopsis: "", summary: "Print the manual page latchkey(1), in roff.",
        details: """
            Prints the manual page, written from the same table as `latchkey help`. Install it with \
            `latchkey manual > ~/.local/share/man/man1/latchkey.1`, then read it with `man latchkey`.
            """,
        options: [], positionals: 0...0
    ) { _, context in
        context.stdout.write(
            ManualPage.page(commands: LatchkeyCommandLine.commands, version: LatchkeyCommandLine.version))
        return 0
    }
}
