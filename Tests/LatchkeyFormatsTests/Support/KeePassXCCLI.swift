import Foundation
import LatchkeyTestSupport

/// `keepassxc-cli` (Debian's keepassxc), run with the sandbox's home and its password on standard input.
struct KeePassXCCLI {
    let sandbox: FormatsSandbox

    @discardableResult
    func run(_ arguments: [String], input: String) throws -> HelperProcess.Output {
        try HelperProcess.run(
            "/usr/bin/keepassxc-cli", arguments,
            environment: [
                "HOME": sandbox.home, "XDG_CONFIG_HOME": sandbox.home + "/.config",
                "XDG_CACHE_HOME": sandbox.home + "/.cache", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
                "QT_QPA_PLATFORM": "offscreen",
            ], input: Data(input.utf8), timeout: 120)
    }

    /// Makes a database from KeePass XML (`keepassxc-cli import`), protected by `password`.
    func importXML(_ xml: String, to database: String, password: String) throws {
        let file = try sandbox.write(UUID().uuidString + ".xml", xml)
        let made = try run(["import", "-q", "-p", "-t", "100", file, database], input: "\(password)\n\(password)\n")
        precondition(made.status == 0, made.stderr)
    }

    /// The database's XML as `keepassxc-cli export` writes it (values in the clear).
    func exportXML(_ database: String, password: String, keyFile: String? = nil) throws -> String {
        let output = try run(
            ["export", "-q"] + (keyFile.map { ["-k", $0] } ?? []) + [database], input: password + "\n")
        precondition(output.status == 0, output.stderr)
        return output.stdout
    }
}
