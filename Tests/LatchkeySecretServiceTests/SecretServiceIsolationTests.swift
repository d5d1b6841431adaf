import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The second review's attacks on the Secret Service's isolated policy (issue 30, points 2, 3 and 6), each
/// run on a private bus by an unprivileged user whose agent, bus and programs are all its own.
@Suite(.serialized, .dedicatedThreads) struct SecretServiceIsolationTests {
    typealias Desktop = SecretServiceTests.Desktop
    static let secretTool = URL(fileURLWithPath: "/usr/bin/secret-tool").resolvingSymlinksInPath().path
    static let python = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path

    static func desktop() throws -> Desktop {
        let desktop = try Desktop(agentArguments: ["--secret-service-policy", "isolated"], user: TestTools.nobody)
        try desktop.sandbox.unlock()
        let stored = try desktop.secretTool(
            "store", "--label=Mail", "service", "mail", "user", "alice", input: "s3cret")
        #expect(stored.status == 0, "\(stored.stderr)")
        return desktop
    }

    /// The exec race: a process connects, forks, and execs the target in the connecting process; the child,
    /// which kept the connection, asks as the target. Targets: secret-tool itself, waiting for the password
    /// it reads before it connects on its own (the child gives it once done: the same secret), and a
    /// registered program that never touches the bus.
    @Test(arguments: ["secret-tool", "registered"])
    func aConnectionMadeBeforeAnExecIsNotTheNewProgramsOwn(_ kind: String) throws {
        let desktop = try Self.desktop()
        let target: [String]
        if kind == "registered" {
            try desktop.sandbox.register(
                "/usr/bin/sleep", appID: "sleeper", groups: ["secret-service:" + Self.secretTool])
            target = ["/usr/bin/sleep", "1"]
        } else {
            target = [Self.secretTool, "store", "--label=Mail", "service", "mail", "user", "alice"]
        }
        for round in 0..<5 {
            let result = desktop.sandbox.directory.file("race-\(round)")
            // (Its status is the target's.)
            _ = try desktop.run(
                "/usr/bin/python3",
                [
                    TestTools.directory + "/bus-exec-race.py", result,
                    #"{"service": "mail", "user": "alice"}"#, "s3cret",
                ] + target)
            try waitUntil("the attacker's result") { FileManager.default.fileExists(atPath: result) }
            let lines = try String(contentsOfFile: result, encoding: .utf8)
            #expect(
                lines == "error org.freedesktop.DBus.Error.AccessDenied\n",
                "round \(round): \(lines)\n\(desktop.sandbox.agentLog)")
        }
        // Refused when it joined the bus (if the agent looked after the exec) or at its first call (before).
        let log = desktop.sandbox.agentLog
        #expect(
            log.contains("opened by the program it runs now: a connection made before it ran that program")
                || log.contains("runs another program than when it connected"), "\(log)")
        // Nothing was read or overwritten, and secret-tool, asking on its own, is served.
        #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").stdout == "s3cret")
    }

    static let createWork = """
        import dbus, secretstorage, sys
        bus = secretstorage.dbus_init()
        work = secretstorage.create_collection(bus, "Work")
        work.create_item("Mine", {"owner": "python"}, b"mine")
        if sys.argv[1]:
            session = dbus.SessionBus()
            service = dbus.Interface(session.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
            service.SetAlias(sys.argv[1], dbus.ObjectPath(work.collection_path))
        print(work.collection_path)
        """

    static let readDefault = """
        import dbus
        bus = dbus.SessionBus()
        service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
        print(service.ReadAlias("default"))
        """

    /// One program points `default` at a collection it made: the others' `default` stays theirs, so
    /// secret-tool goes on storing in the login collection.
    @Test func anAliasSetByOneProgramMovesNoOtherProgramsItems() throws {
        let desktop = try Self.desktop()
        let made = try desktop.python(Self.createWork, "default")
        #expect(made.status == 0, "\(made.stderr)")
        let work = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(work == "/org/freedesktop/secrets/collection/work")
        #expect(try desktop.python(Self.readDefault).stdout == work + "\n")
        let other = try Self.copyOfPython(in: desktop, named: "other")
        let read = try desktop.run(other, ["-c", Self.readDefault])
        #expect(
            read.stdout == "/org/freedesktop/secrets/collection/login\n", "\(read.stderr)\n\(desktop.sandbox.agentLog)")
        #expect(try desktop.secretTool("store", "--label=Later", "service", "later", input: "later-secret").status == 0)
        let dump = try desktop.sandbox.cli("dump-keychain", "-d").stdout
        #expect(dump.contains("\"svce\"<blob>=\"org.freedesktop.secrets\""))
        #expect(!dump.contains("org.freedesktop.secrets/work\"\n    \"ss.service\"<blob>=\"later\""))
        #expect(try desktop.secretTool("lookup", "service", "later").stdout == "later-secret")
    }

    static let storeInWork = """
        import secretstorage
        bus = secretstorage.dbus_init()
        work = secretstorage.Collection(bus, "/org/freedesktop/secrets/collection/work")
        work.create_item("Theirs", {"owner": "other"}, b"theirs")
        """

    static let deleteWork = """
        import secretstorage
        bus = secretstorage.dbus_init()
        try:
            secretstorage.Collection(bus, "/org/freedesktop/secrets/collection/work").delete()
            print("deleted")
        except Exception as failure:
            print(type(failure).__name__, failure)
        """

    /// A program deletes a collection it made while another program's item is in it: refused, and nothing of
    /// either is lost; once only its own items are left, the collection goes with them.
    @Test func deletingACollectionNeverDeletesAnotherProgramsItems() throws {
        let desktop = try Self.desktop()
        #expect(try desktop.python(Self.createWork, "").status == 0)
        let other = try Self.copyOfPython(in: desktop, named: "other")
        let stored = try desktop.run(other, ["-c", Self.storeInWork])
        #expect(stored.status == 0, "\(stored.stderr)")
        let refused = try desktop.python(Self.deleteWork)
        #expect(
            refused.stdout.hasPrefix("SecretServiceNotAvailableException ") || refused.stdout.contains("AccessDenied"),
            "\(refused.stdout)")
        #expect(
            refused.stdout.contains(
                "the collection holds 1 item(s) of other programs; it is deleted only once they are gone"),
            "\(refused.stdout)")
        let dump = try desktop.sandbox.cli("dump-keychain", "-d").stdout
        #expect(dump.contains("data:\n\"theirs\"") && dump.contains("data:\n\"mine\""), "\(dump)")
        // The other program removes its item; then the collection and the first program's item go.
        #expect(
            try desktop.run(
                other,
                [
                    "-c",
                    "import secretstorage; [i.delete() for i in secretstorage.search_items(secretstorage.dbus_init(), {'owner': 'other'})]",
                ]
            ).status == 0)
        #expect(try desktop.python(Self.deleteWork).stdout == "deleted\n")
        #expect(!(try desktop.sandbox.cli("dump-keychain", "-d").stdout.contains("\"mine\"")))
    }

    static let storeOwned = """
        import secretstorage, sys
        secretstorage.get_default_collection(secretstorage.dbus_init()).create_item("Owned", {"owner": sys.argv[1]}, b"owned")
        """

    static let countOwned = """
        import secretstorage, sys
        print(len(list(secretstorage.search_items(secretstorage.dbus_init(), {"owner": sys.argv[1]}))))
        """

    /// Two programs whose paths differ only in bytes that are not UTF-8 (`…/\xff/python3`, `…/\xfe/python3`)
    /// are two programs. (Such a path cannot be a Swift string: the shell makes and runs them, by `printf`.)
    @Test func pathsThatAreNotUTF8AreKeptExactly() throws {
        let desktop = try Self.desktop()
        let base = desktop.sandbox.directory.file("bin")
        func path(_ byte: UInt8) -> String { "\"$(printf '\(base)/\\\(String(byte, radix: 8))/python3')\"" }
        for byte: UInt8 in [0o377, 0o376] {
            let made = try desktop.run(
                "/bin/sh", ["-c", "mkdir -p \"$(dirname \(path(byte)))\" && cp \(Self.python) \(path(byte))"])
            #expect(made.status == 0, "\(made.stderr)")
        }
        func run(_ byte: UInt8, _ script: String) throws -> String {
            try desktop.run("/bin/sh", ["-c", "exec \(path(byte)) -c \"$0\" ff", script]).stdout
        }
        #expect(try run(0o377, Self.storeOwned) == "")
        #expect(try run(0o377, Self.countOwned) == "1\n")
        #expect(try run(0o376, Self.countOwned) == "0\n")
        let dump = try desktop.sandbox.cli("dump-keychain").stdout
        // The group keeps the byte as `\xFF` (which dump-keychain, as macOS's `security`, shows with its
        // backslash in octal).
        #expect(dump.contains(#"secret-service:/\#(base.dropFirst())/\134xFF/python3""#), "\(dump)")
    }

    /// A program whose executable was deleted (an upgrade replaced it) is nobody: refused, with a log line
    /// that says why, and nothing is stored for the literal `<path> (deleted)`.
    @Test func aDeletedExecutableIsNeverAnIdentity() throws {
        let desktop = try Self.desktop()
        let copy = try Self.copyOfPython(in: desktop, named: "tool")
        let flag = desktop.sandbox.directory.file("go")
        let result = desktop.sandbox.directory.file("deleted-result")
        let script = """
            import os, sys, time, secretstorage
            while not os.path.exists(sys.argv[1]): time.sleep(0.01)
            try:
                secretstorage.get_default_collection(secretstorage.dbus_init()).create_item("Orphan", {"owner": "tool"}, b"orphan")
                outcome = "stored"
            except Exception as failure:
                outcome = str(failure)
            open(sys.argv[2] + ".partial", "w").write(outcome)
            os.rename(sys.argv[2] + ".partial", sys.argv[2])
            """
        let (program, words) = desktop.sandbox.asUser(copy, ["-c", script, flag, result])
        let running = try SpawnedProcess(program, words, environment: desktop.environment)
        defer { running.stop() }
        // Deleted once it runs (setpriv runs first, then execs the copy).
        try waitUntil("the copy to run") {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(running.pid)/exe")) == copy
        }
        try FileManager.default.removeItem(atPath: copy)
        #expect(FileManager.default.createFile(atPath: flag, contents: nil))
        try waitUntil("the deleted program's call") { FileManager.default.fileExists(atPath: result) }
        guard FileManager.default.fileExists(atPath: result) else {
            Issue.record("the agent's log: \(desktop.sandbox.agentLog)")
            return
        }
        let outcome = try String(contentsOfFile: result, encoding: .utf8)
        #expect(
            outcome.contains("runs a deleted executable (\(copy) (deleted)): a replaced program is nobody's identity"),
            "\(outcome)")
        #expect(desktop.sandbox.agentLog.contains("runs a deleted executable"))
        #expect(!(try desktop.sandbox.cli("dump-keychain").stdout.contains("(deleted)")))
    }

    /// A Flatpak sandbox as flatpak makes one (bubblewrap: a user, pid and mount namespace of its own, a root
    /// of tmpfs with `/usr` bound in, and `/.flatpak-info` naming the app), running python3 with secretstorage.
    static func inFlatpak(_ desktop: Desktop, app: String, _ script: String, _ arguments: [String] = []) throws
        -> HelperProcess.Output
    {
        let info = desktop.sandbox.directory.file("flatpak-info-\(app)")
        try "[Application]\nname=\(app)\n\n[Instance]\ninstance-id=1\n".write(
            toFile: info, atomically: true, encoding: .utf8)
        let directory = desktop.sandbox.directory.path
        let bwrap =
            [
                "--unshare-user", "--unshare-pid", "--die-with-parent", "--tmpfs", "/", "--ro-bind", "/usr", "/usr",
                "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
                "--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev", "--bind", directory, directory,
                "--ro-bind", info, "/.flatpak-info", "/usr/bin/python3", "-c", script,
            ] + arguments
        return try desktop.run("/usr/bin/bwrap", bwrap)
    }

    /// A Flatpak app acts as its app ID — whatever program it runs in its sandbox — and sees only its own
    /// items; another app, and the programs outside, see none of them.
    @Test func aFlatpakAppActsAsItsAppID() throws {
        let desktop = try Self.desktop()
        let stored = try Self.inFlatpak(desktop, app: "org.example.Notes", Self.storeOwned, ["notes"])
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(try Self.inFlatpak(desktop, app: "org.example.Notes", Self.countOwned, ["notes"]).stdout == "1\n")
        #expect(try Self.inFlatpak(desktop, app: "org.example.Other", Self.countOwned, ["notes"]).stdout == "0\n")
        #expect(try desktop.python(Self.countOwned, "notes").stdout == "0\n")
        #expect(
            try desktop.sandbox.cli("dump-keychain").stdout.contains("\"agrp\"<blob>=\"flatpak:org.example.Notes\""))
        #expect(desktop.sandbox.agentLog.contains("acts as the Flatpak app org.example.Notes"))
        // An app ID that is not one (two elements) is no identity: the program inside is looked at instead,
        // and from another user namespace it is refused.
        let bad = try Self.inFlatpak(desktop, app: "org.example", Self.countOwned, ["notes"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("runs in another user namespace than the agent"), "\(bad.stderr)")
    }

    /// A copy of Debian's python3 in the sandbox (another executable, so another program to the agent). Made
    /// by `cp` as the desktop's user, not by this process: a child another test spawns meanwhile would inherit
    /// this process's write descriptor of the copy, and running it would then fail (ETXTBSY).
    static func copyOfPython(in desktop: Desktop, named name: String) throws -> String {
        let path = desktop.sandbox.directory.file("bin/" + name)
        let made = try desktop.run(
            "/bin/sh", ["-c", "mkdir -p \"$(dirname \"$1\")\" && cp \"$0\" \"$1\"", python, path])
        #expect(made.status == 0, "\(made.stderr)")
        return path
    }
}
