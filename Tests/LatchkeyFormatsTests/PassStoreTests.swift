import Foundation
import LatchkeyEngine
import LatchkeyFormats
import LatchkeyTestSupport
import Testing

/// A `pass` store made by `pass` itself with a throwaway GPG key (no passphrase, in a GNUPGHOME of the
/// test's own), imported with `latchkey import --from pass`, which decrypts through the same `gpg`.
@Suite(.serialized, .dedicatedThreads) struct PassStoreTests {
    /// The sandbox with a GPG key and a store of three entries: one line, several lines, non-ASCII names.
    final class Store {
        let sandbox: FormatsSandbox
        var gnupg: String { sandbox.directory.file("gnupg") }
        var store: String { sandbox.directory.file("store") }
        var environment: [String: String] {
            [
                "HOME": sandbox.home, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "GNUPGHOME": gnupg,
                "PASSWORD_STORE_DIR": store,
            ]
        }

        init() throws {
            sandbox = try FormatsSandbox()
            try FileManager.default.createDirectory(
                atPath: gnupg, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let key = try run(
                "/usr/bin/gpg",
                [
                    "--batch", "--quiet", "--passphrase", "", "--quick-gen-key", "Latchkey Test <test@example.com>",
                    "default", "default", "never",
                ])
            precondition(key.status == 0, key.stderr)
            let listed = try run("/usr/bin/gpg", ["--list-keys", "--with-colons"]).stdout
            let fingerprint = listed.split(separator: "\n").first { $0.hasPrefix("fpr:") }!.split(
                separator: ":", omittingEmptySubsequences: false)[9]
            let initialized = try run("/usr/bin/pass", ["init", String(fingerprint)])
            precondition(initialized.status == 0, initialized.stderr)
            try insert("mail/work", "hunter2\n")
            try insert("web/exämple.com", "pässwörd\nlogin: bob\nurl: https://example.com\n")
            try insert("top", "only a line")
        }

        deinit {
            // gpg started an agent for this GNUPGHOME: it goes with the test.
            _ = try? run("/usr/bin/gpgconf", ["--kill", "all"])
        }

        func insert(_ name: String, _ content: String) throws {
            let made = try run("/usr/bin/pass", ["insert", "-m", name], input: content)
            precondition(made.status == 0, made.stderr)
        }

        func run(_ program: String, _ arguments: [String], input: String? = nil) throws -> HelperProcess.Output {
            try HelperProcess.run(program, arguments, environment: environment, input: input.map { Data($0.utf8) })
        }

        func latchkey(_ arguments: [String], _ extra: [String: String] = [:]) throws -> HelperProcess.Output {
            try sandbox.latchkey(arguments, environment.merging(extra) { _, new in new })
        }
    }

    @Test func aStorePassMadeIsImportedOnceWithPasswordsAndNotes() throws {
        let store = try Store()
        let keychain = store.sandbox.keychain
        let first = try store.latchkey(["import", "--from", "pass", "-k", keychain])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stdout
                == "imported 3 items from \(store.store): 3 generic passwords\nalready in the keychain: 0\nskipped: 0\n"
        )
        let again = try store.latchkey(["import", "--from", "pass", store.store, "-k", keychain])
        #expect(again.stdout == "imported 0 items from \(store.store)\nalready in the keychain: 3\nskipped: 0\n")
        let web = try store.latchkey(["find-generic-password", "-s", "web/exämple.com", "-w", keychain])
        // "pässwörd": -w prints a secret that is not ASCII in hexadecimal, as security does.
        #expect(web.stdout == "70c3a4737377c3b67264\n", "\(web.stderr)")
        let found = try store.latchkey(["find-generic-password", "-s", "web/exämple.com", keychain]).stdout
        #expect(found.contains("\"icmt\"<blob>=0x"), "\(found)")
        #expect(found.contains("login: bob\\012url: https://example.com\""), "\(found)")
        #expect(try store.latchkey(["find-generic-password", "-s", "top", "-w", keychain]).stdout == "only a line\n")
        #expect(try store.latchkey(["find-generic-password", "-s", "mail/work", "-w", keychain]).stdout == "hunter2\n")
    }

    @Test func withoutTheKeyNothingIsImported() throws {
        let store = try Store()
        let before = try store.sandbox.dump()
        let empty = store.sandbox.directory.file("no-keys")
        try FileManager.default.createDirectory(
            atPath: empty, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let refused = try store.latchkey(
            ["import", "--from", "pass", "-k", store.sandbox.keychain], ["GNUPGHOME": empty])
        #expect(refused.status == 51)
        #expect(
            refused.stderr
                == "latchkey: import: The user name or passphrase you entered is not correct. (gpg could not decrypt \(store.store)/mail/work.gpg: gpg: decryption failed: No secret key)\n"
        )
        #expect(try store.sandbox.dump() == before)
        _ = try HelperProcess.run(
            "/usr/bin/gpgconf", ["--kill", "all"], environment: ["GNUPGHOME": empty, "PATH": "/usr/bin:/bin"])
        // No store there: the keychain's own "no such keychain" is not the answer; the path is named.
        let missing = try store.latchkey([
            "import", "--from", "pass", store.sandbox.directory.file("nowhere"), "-k", store.sandbox.keychain,
        ])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("nowhere is not a password store (no such directory)"), "\(missing.stderr)")
    }
}
