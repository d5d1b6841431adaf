import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

/// `latchkey access list|add|remove` without an agent (the keychain opened with its passphrase): exact
/// output, a program added as it is now and taken off by its path, a second removal is 44, a bad item or
/// program is a usage error, and `export`/`import` carry the list.
@Suite(.dedicatedThreads) struct AccessCommandTests {
    let sandbox = CLISandbox()

    /// The item `service` names, by its persistent reference in hex.
    func reference(_ service: String, keychain: String? = nil) throws -> String {
        let database = try KeychainDatabase.open(at: keychain ?? sandbox.defaultKeychain)
        try database.unlock(with: Passphrase(CLISandbox.passphrase))
        let found = try database.copyMatching(
            ItemQuery(.genericPassword, matching: [.service: .string(service)], returning: .reference),
            caller: CallerIdentity(applicationIdentifier: "test", accessGroups: ["*"]))
        return Hex.encode(try #require(found.first?.persistentReference))
    }

    @Test func addListAndRemoveAProgram() throws {
        try sandbox.createKeychain()
        try sandbox.run(
            "add-generic-password", "-a", "alice", "-s", "mail", "-l", "Mail", "--password-stdin", input: "pw")
        let item = try reference("mail")
        #expect(try sandbox.run("access", "list").stdout == "")
        let env = URL(fileURLWithPath: "/usr/bin/env").resolvingSymlinksInPath().path
        let added = try sandbox.run("access", "add", item, "/usr/bin/env")
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout == "\(env) may now read item \(item)\n")
        #expect(
            try sandbox.run("access", "add", item, "/usr/bin/env").stdout
                == "\(env) was already on the list of item \(item)\n")
        #expect(try sandbox.run("access", "add", item, "flatpak:org.example.App").status == 0)

        let digest = Hex.encode(try #require(FileDigest.of(path: env)).prefix(8))
        let listed = try sandbox.run("access", "list")
        let dated = listed.stdout.replacingOccurrences(
            of: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#, with: "<DATE>", options: .regularExpression)
        #expect(
            dated == """
                \(item) genp label=Mail service=mail account=alice
                    executable \(env) \(digest) added <DATE> by latchkey access add
                    flatpak org.example.App added <DATE> by latchkey access add

                """)
        #expect(try sandbox.run("access", "list", item).stdout == listed.stdout)

        #expect(
            try sandbox.run("access", "remove", item, "/usr/bin/env").stdout
                == "\(env) may no longer read item \(item)\n")
        let again = try sandbox.run("access", "remove", item, "/usr/bin/env")
        #expect(again.status == 44)
        #expect(again.stderr.contains("\(env) is not on the list of item \(item)"), "\(again.stderr)")
        #expect(try sandbox.run("access", "remove", item, "flatpak:org.example.App").status == 0)
        #expect(
            try sandbox.run("access", "list", item).stdout
                == "\(item) genp label=Mail service=mail account=alice\n    (no programs besides its access group's)\n")
        #expect(try sandbox.run("access", "list").stdout == "")
    }

    @Test func badItemsProgramsAndActionsAreRefused() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "alice", "-s", "mail", "--password-stdin", input: "pw")
        let item = try reference("mail")
        let notHex = try sandbox.run("access", "list", "xyz")
        #expect(notHex.status == 64)
        #expect(
            notHex.stderr.contains("'xyz' is not an item's persistent reference (64 hex digits)"), "\(notHex.stderr)")
        let relative = try sandbox.run("access", "add", item, "tool")
        #expect(relative.status == 206, "errSecParam's low byte: \(relative.stderr)")
        #expect(
            relative.stderr.contains(
                "name a program as an absolute path, flatpak:<app ID>, apparmor:<profile> or selinux:<type>, not tool"))
        #expect(try sandbox.run("access", "grant", item, "/usr/bin/env").status == 64)
        #expect(try sandbox.run("access", "add", item).status == 64)
        let notOurs = String(repeating: "0", count: 8) + item.dropFirst(8)
        #expect(try sandbox.run("access", "add", notOurs, "/usr/bin/env").status == 206, "not a reference: errSecParam")
        let gone = item.dropLast(8) + String(repeating: "0", count: 8)
        #expect(try sandbox.run("access", "add", String(gone), "/usr/bin/env").status == 44, "no such item")
    }

    @Test func anItemIsNamedByItsServiceOrServerAndAccount() throws {
        try sandbox.createKeychain()
        for account in ["alice", "bob"] {
            try sandbox.run("add-generic-password", "-a", account, "-s", "mail", "--password-stdin", input: "pw")
        }
        try sandbox.run("add-internet-password", "-a", "carol", "-s", "example.com", "--password-stdin", input: "pw")
        let alice = try reference("mail")  // The first of the two (alice's).
        let env = URL(fileURLWithPath: "/usr/bin/env").resolvingSymlinksInPath().path
        #expect(
            try sandbox.run("access", "add", "-s", "mail", "-a", "alice", "/usr/bin/env").stdout
                == "\(env) may now read item \(alice)\n")
        let listed = try sandbox.run("access", "list", "-s", "mail", "-a", "alice").stdout
        #expect(listed.hasPrefix("\(alice) genp label=mail service=mail account=alice\n    executable \(env) "))
        let several = try sandbox.run("access", "add", "-s", "mail", "/usr/bin/env")
        #expect(several.status == 64)
        #expect(
            several.stderr.contains(
                "that names 2 items; add -a, or name the item by its reference (latchkey access list)"))
        #expect(try sandbox.run("access", "add", "--server", "example.com", "flatpak:org.example.App").status == 0)
        #expect(try sandbox.run("access", "list").stdout.contains(" inet "))
        #expect(try sandbox.run("access", "add", "-s", "nothing", "/usr/bin/env").status == 44)
        #expect(try sandbox.run("access", "add", "-a", "alice", alice, "/usr/bin/env").status == 64)
        #expect(try sandbox.run("access", "add", "-s", "mail", "-a", "alice", alice, "/usr/bin/env").status == 64)
        #expect(
            try sandbox.run("access", "remove", "-s", "mail", "-a", "alice", "/usr/bin/env").stdout
                == "\(env) may no longer read item \(alice)\n")
    }

    @Test func exportAndImportCarryTheList() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "alice", "-s", "mail", "--password-stdin", input: "pw")
        #expect(try sandbox.run("access", "add", try reference("mail"), "apparmor:tool").status == 0)
        let backup = sandbox.directory.file("backup.lkb")
        let environment = sandbox.unattended.merging(["LATCHKEY_BACKUP_PASSPHRASE": "backup"]) { _, new in new }
        #expect(try sandbox.run(["export", "-o", backup], environment: environment).status == 0)
        try sandbox.createKeychain("other")
        let imported = try sandbox.run(["import", "-i", backup, "other"], environment: environment)
        #expect(imported.stdout == "added 1, updated 0, skipped 0\n", "\(imported.stderr)")
        let other = sandbox.directory.path + "/data/latchkey/other.keychain"
        let item = try reference("mail", keychain: other)
        let listed = try sandbox.run("access", "list", "-k", "other").stdout
        #expect(
            listed.hasPrefix("\(item) genp label=mail service=mail account=alice\n    confined apparmor:tool added "))
        #expect(listed.hasSuffix(" by backup\n"))
    }
}
