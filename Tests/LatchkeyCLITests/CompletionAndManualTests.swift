import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCLI

/// Shell completions and manual pages come from the same tables as `--help`, so they cannot drift from the
/// commands: every command and every option of each appears, each script parses in its shell, bash's
/// completes as a user would see it, and each page renders without a roff warning.
@Suite(.dedicatedThreads) struct CompletionAndManualTests {
    let sandbox = CLISandbox()

    func latchkey(_ arguments: String...) throws -> String {
        let output = try sandbox.run(arguments, environment: sandbox.environment)
        #expect(output.status == 0, "\(output.stderr)")
        return output.stdout
    }

    func latchkeyd(_ arguments: String...) throws -> String {
        let output = try HelperProcess.run(
            HelperProcess.product("latchkeyd"), arguments, environment: sandbox.environment)
        #expect(output.status == 0, "\(output.stderr)")
        return output.stdout
    }

    /// Runs `shell` with `arguments`, the script on standard input.
    func check(_ shell: String, _ arguments: [String], script: String) throws -> HelperProcess.Output {
        try HelperProcess.run(
            shell, arguments, environment: ["PATH": "/usr/bin:/bin", "HOME": sandbox.directory.path],
            input: Data(script.utf8))
    }

    @Test func everyCommandAndOptionIsCompletedInEveryShell() throws {
        let bash = try latchkey("completion", "bash")
        let zsh = try latchkey("completion", "zsh")
        let fish = try latchkey("completion", "fish")
        for command in LatchkeyCommandLine.commands {
            let spellings = command.options.flatMap(Completions.words)
            let bashLine =
                bash.split(separator: "\n").first { $0.hasPrefix("        \(command.name)) options=") }.map(String.init)
                ?? ""
            #expect(
                bashLine == "        \(command.name)) options=\"\(spellings.joined(separator: " "))\" ;;",
                "bash: \(command.name)")
            let zshLine =
                zsh.split(separator: "\n").first { $0.hasPrefix("        \(command.name)) _arguments") }.map(
                    String.init) ?? ""
            #expect(zsh.contains("'\(command.name):"), "zsh lists \(command.name)")
            for word in spellings { #expect(zshLine.contains("'\(word)["), "zsh: \(command.name) \(word)") }
            #expect(
                fish.contains("complete -c latchkey -n __fish_use_subcommand -a \(command.name) -d "),
                "fish lists \(command.name)")
            for option in command.options {
                var expected = "complete -c latchkey -n '__fish_seen_subcommand_from \(command.name)'"
                if let short = option.short { expected += " -s \(short)" }
                if let long = option.long { expected += " -l \(long)" }
                #expect(fish.contains(expected), "fish: \(command.name) \(option.display)")
            }
        }
        #expect(try check("/usr/bin/zsh", ["-n"], script: zsh).status == 0)
        #expect(try check("/usr/bin/fish", ["--no-execute"], script: fish).status == 0)
        #expect(try check("/bin/bash", ["-n"], script: bash).status == 0)
    }

    @Test func bashCompletesAsAUserSeesIt() throws {
        let script = try latchkey("completion", "bash")
        func complete(_ words: [String]) throws -> String {
            let quoted = words.map { "'\($0)'" }.joined(separator: " ")
            let run = try check(
                "/bin/bash", [],
                script: script
                    + "COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _latchkey; echo \"${COMPREPLY[*]}\"\n")
            #expect(run.status == 0, "\(run.stderr)")
            return run.stdout
        }
        #expect(try complete(["latchkey", "add-gen"]) == "add-generic-password\n")
        let find = try #require(LatchkeyCommandLine.command(named: "find-generic-password"))
        let expected = find.options.flatMap(Completions.words).filter { $0.hasPrefix("--acc") }
        #expect(!expected.isEmpty)
        #expect(try complete(["latchkey", "find-generic-password", "--acc"]) == expected.joined(separator: " ") + "\n")
        #expect(try complete(["latchkey", "help", "doc"]) == "doctor\n")
        #expect(try complete(["latchkey", "completion", "--h"]) == "--help\n")
    }

    @Test func unknownShellsAreAUsageError() throws {
        let output = try sandbox.run(["completion", "tcsh"], environment: sandbox.environment)
        #expect(output.status == 64)
        #expect(
            output.stderr.hasPrefix("latchkey: completion: there are completions for bash, zsh, fish, not \"tcsh\"\n"))
    }

    @Test func theManualPagesRenderAndNameEveryOption() throws {
        let page = try latchkey("manual")
        for command in LatchkeyCommandLine.commands {
            #expect(page.contains(".SS \(ManualPage.escaped(command.name))\n"), "\(command.name)")
            for option in command.options {
                #expect(
                    page.contains("\\fB\(ManualPage.escaped(option.display))\\fR"), "\(command.name) \(option.display)")
            }
        }
        let agentPage = try latchkeyd("--manual")
        for option in [
            "keychain", "socket", "pinentry", "wait\\-for\\-keychain", "verbose", "completion", "manual", "help",
        ] {
            #expect(agentPage.contains("\\fB\\-\\-\(option)"), "latchkeyd --\(option)")
        }
        for text in [page, agentPage] {
            let rendered = try check("/usr/bin/groff", ["-man", "-ww", "-z"], script: text)
            #expect(rendered.status == 0 && rendered.stderr == "", "groff: \(rendered.stderr)")
        }
    }

    @Test func theReadmesInstallStepsRun() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let block = try #require(
            readme.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
                .first { $0.contains("latchkey completion bash") })
        var environment = sandbox.environment
        environment["PATH"] = URL(fileURLWithPath: sandbox.binary).deletingLastPathComponent().path + ":/usr/bin:/bin"
        let run = try HelperProcess.run("/bin/bash", ["-e", "-c", block], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        let home = environment["HOME"] ?? ""
        #expect(
            try String(contentsOfFile: home + "/.local/share/bash-completion/completions/latchkey", encoding: .utf8)
                == (try latchkey("completion", "bash")))
        #expect(
            try String(contentsOfFile: home + "/.local/share/man/man1/latchkeyd.1", encoding: .utf8)
                == (try latchkeyd("--manual")))
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/man/man1/latchkey.1"))
    }

    @Test func latchkeydCompletesItsOptions() throws {
        let bash = try latchkeyd("--completion", "bash")
        #expect(
            bash.contains(
                "compgen -W \"--keychain --socket --pinentry --secret-service --secret-service-policy --secret-service-sync --program-identity --ssh-agent-socket --no-ssh-agent --no-lock-on-session-lock --no-sync --no-access-log --wait-for-keychain --unlock-unattended --backup-directory --backup-every --backup-keep --verbose --manual --completion --version --help\""
            ))
        #expect(try check("/usr/bin/zsh", ["-n"], script: try latchkeyd("--completion", "zsh")).status == 0)
        #expect(try check("/usr/bin/fish", ["--no-execute"], script: try latchkeyd("--completion", "fish")).status == 0)
        #expect(try check("/bin/bash", ["-n"], script: bash).status == 0)
        let help = try latchkeyd("--help")
        #expect(
            help.hasPrefix(
                "Usage: latchkeyd [--keychain path] [--socket path] [--pinentry program] [--secret-service] [--secret-service-policy shared|isolated] [--secret-service-sync] [--program-identity executable|platform] [--ssh-agent-socket path] [--no-ssh-agent] [--no-lock-on-session-lock] [--no-sync] [--no-access-log] [--wait-for-keychain seconds] [--unlock-unattended] [--backup-directory path] [--backup-every span] [--backup-keep count] [--verbose]\n"
            ))
    }
}
