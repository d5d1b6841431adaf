import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `latchkeyd --secret-service` on a private session bus (a `dbus-daemon` of the test's own, configured with
/// no service directories, so nothing else is activated in its place), driven by the clients people use:
/// libsecret's `secret-tool` (DH session) and Python's `secretstorage`, plus raw calls for the errors.
@Suite(.serialized, .dedicatedThreads) struct SecretServiceTests {
    /// A sandbox with its own session bus; the agent provides the Secret Service on it.
    final class Desktop {
        let sandbox: AgentSandbox
        let bus: SpawnedProcess
        let socketPath: String
        var address: String { "unix:path=" + socketPath }
        var environment: [String: String] {
            sandbox.environment.merging(["DBUS_SESSION_BUS_ADDRESS": address]) { _, new in new }
        }

        /// A desktop whose bus, agent and clients run as `user` (nil: the test's own), with `agentArguments`.
        init(
            pinentryAnswer: String? = nil, startingTheAgent: Bool = true, agentArguments: [String] = [],
            busDirectory: String? = nil,
            busPolicy: String = "", user: (uid: uid_t, gid: gid_t)? = nil, sandbox existing: AgentSandbox? = nil
        ) throws {
            sandbox = try existing ?? AgentSandbox(user: user)
            socketPath = (busDirectory ?? sandbox.directory.path) + "/session-bus"
            let configuration = sandbox.directory.file("session-bus.conf")
            try PrivateBusConfiguration.text(socketPath: socketPath, extraPolicy: busPolicy).write(
                toFile: configuration, atomically: true, encoding: .utf8)
            let (daemon, words) = sandbox.asUser(
                "/usr/bin/dbus-daemon", ["--config-file=" + configuration, "--nofork", "--nopidfile"])
            bus = try SpawnedProcess(
                daemon, words, environment: ["PATH": "/usr/bin:/bin"], log: sandbox.directory.file("session-bus.log"))
            let socket = socketPath
            try waitUntil("the session bus") { FileManager.default.fileExists(atPath: socket) }
            sandbox.agentEnvironment["DBUS_SESSION_BUS_ADDRESS"] = address
            if let pinentryAnswer {
                sandbox.agentEnvironment["LATCHKEY_PINENTRY"] = TestTools.directory + "/fake-pinentry.py"
                sandbox.agentEnvironment["FAKE_PINENTRY_LOG"] = sandbox.directory.file("pinentry.log")
                sandbox.agentEnvironment["FAKE_PINENTRY_ANSWER"] = sandbox.directory.file("pinentry.answer")
                try (pinentryAnswer + "\n").write(
                    toFile: sandbox.directory.file("pinentry.answer"), atomically: true, encoding: .utf8)
            }
            if startingTheAgent {
                try sandbox.start(
                    HelperProcess.product("latchkeyd"), ["--verbose", "--secret-service"] + agentArguments)
            }
        }

        deinit {
            sandbox.stop()
            bus.stop()
        }

        /// Checks every file of the keychain's directory (the database, its journal, the device key) for the
        /// words, in UTF-8.
        func expectNothingInTheClear(_ words: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
            let directory = URL(fileURLWithPath: sandbox.keychainPath).deletingLastPathComponent().path
            let files = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(files.contains { $0.hasSuffix(".keychain") }, sourceLocation: sourceLocation)
            for name in files {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
                for word in words {
                    #expect(
                        bytes.range(of: Data(word.utf8)) == nil, "\(word) in \(name)", sourceLocation: sourceLocation)
                }
            }
        }

        func secretTool(_ arguments: String..., input: String? = nil) throws -> HelperProcess.Output {
            let (program, words) = sandbox.asUser("/usr/bin/secret-tool", arguments)
            return try HelperProcess.run(program, words, environment: environment, input: input.map { Data($0.utf8) })
        }

        /// Runs a Python script (Debian's python3, with `secretstorage` and `dbus`) on the session bus.
        func python(_ script: String, _ arguments: String...) throws -> HelperProcess.Output {
            try run("/usr/bin/python3", ["-c", script] + arguments)
        }

        /// Runs a program on the session bus, as the desktop's user.
        func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> HelperProcess.Output {
            let (program, words) = sandbox.asUser(executable, arguments)
            return try HelperProcess.run(program, words, environment: environment, input: input.map { Data($0.utf8) })
        }
    }

    @Test func secretToolStoresLooksUpSearchesAndClearsLatchkeyItems() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        #expect(
            desktop.sandbox.agentLog.contains("serving the Secret Service (org.freedesktop.secrets) on the session bus")
        )
        let stored = try desktop.secretTool(
            "store", "--label=Mail", "service", "mail", "user", "alice", input: "s3cret")
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(
            try desktop.secretTool("store", "--label=Other", "service", "mail", "user", "bob", input: "open").status
                == 0)
        #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").stdout == "s3cret")
        // Storing again with the same attributes replaces the item (secret-tool asks to).
        #expect(
            try desktop.secretTool(
                "store", "--label=Mail again", "service", "mail", "user", "alice", input: "n3w-s3cret"
            ).status == 0)
        #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").stdout == "n3w-s3cret")

        let search = try desktop.secretTool("search", "--all", "service", "mail")
        #expect(search.status == 0, "\(search.stderr)")
        let labels = search.stdout.split(separator: "\n").filter { $0.hasPrefix("label = ") }.sorted()
        #expect(labels == ["label = Mail again", "label = Other"])
        // secret-tool writes the attributes to its standard error.
        #expect(
            search.stderr.contains("attribute.user = alice\n") && search.stderr.contains("attribute.service = mail\n"),
            "\(search.stderr)")

        // They are keychain items: the CLI sees them, in the Secret Service's group.
        let dump = try desktop.sandbox.cli("dump-keychain", "-d")
        #expect(dump.stdout.contains("\"agrp\"<blob>=\"org.freedesktop.secrets\""))
        #expect(dump.stdout.contains("\"ss.user\"<blob>=\"alice\""), "\(dump.stdout)")
        #expect(dump.stdout.contains("data:\n\"n3w-s3cret\""), "\(dump.stdout)")

        // On disk, nothing of it in the clear: not the secret, the label or an attribute's value.
        try desktop.expectNothingInTheClear(["n3w-s3cret", "Mail again", "alice", "open"])

        #expect(try desktop.secretTool("clear", "service", "mail", "user", "bob").status == 0)
        #expect(try desktop.secretTool("lookup", "service", "mail", "user", "bob").status == 1)
        #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").stdout == "n3w-s3cret")

        // (`secret-tool lock` of Debian 12's libsecret 0.20.5 crashes once Lock has answered, with GNOME Keyring
        // too: Lock is tested through raw calls in badInputOnTheBusIsAnErrorAndLosesNothing.)
    }

    static let secretStorage = """
        import sys, secretstorage
        bus = secretstorage.dbus_init()
        collection = secretstorage.get_default_collection(bus)
        print("collection", collection.collection_path, collection.get_label(), collection.is_locked())
        item = collection.create_item("Token", {"app": "ci", "kind": "api"}, b"t0ken", replace=True)
        print("created", item.get_label(), sorted(item.get_attributes().items()))
        found = list(collection.search_items({"app": "ci"}))
        print("found", len(found), found[0].get_secret())
        found[0].set_label("Token 2")
        found[0].set_attributes({"app": "ci", "kind": "deploy"})
        again = list(secretstorage.search_items(bus, {"kind": "deploy"}))
        print("changed", again[0].get_label(), sorted(again[0].get_attributes().items()), again[0].get_secret_content_type())
        again[0].set_secret(b"rotated", "application/octet-stream")
        print("secret", again[0].get_secret(), again[0].get_secret_content_type())
        print("old attribute gone", list(secretstorage.search_items(bus, {"kind": "api"})) == [])
        again[0].delete()
        print("deleted", list(collection.search_items({"app": "ci"})) == [])
        """

    @Test func pythonSecretStorageDoesEverythingThroughTheDHSession() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        let run = try desktop.python(Self.secretStorage)
        #expect(run.status == 0, "\(run.stderr)")
        try desktop.expectNothingInTheClear(["t0ken", "rotated", "Token 2", "deploy"])
        #expect(
            run.stdout == """
                collection /org/freedesktop/secrets/aliases/default Login False
                created Token [('app', 'ci'), ('kind', 'api')]
                found 1 b't0ken'
                changed Token 2 [('app', 'ci'), ('kind', 'deploy')] text/plain
                secret b'rotated' application/octet-stream
                old attribute gone True
                deleted True

                """)
    }

    static let rawCalls = """
        import sys, dbus
        bus = dbus.SessionBus()
        service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
        def error(call):
            try:
                call()
                return "no error"
            except dbus.exceptions.DBusException as failure:
                return failure.get_dbus_name()
        print("unknown algorithm", error(lambda: service.OpenSession("dh-unknown", dbus.String("", variant_level=1))))
        print("bad public value", error(lambda: service.OpenSession("dh-ietf1024-sha256-aes128-cbc-pkcs7", dbus.ByteArray(b"\\x01", variant_level=1))))
        output, session = service.OpenSession("plain", dbus.String("", variant_level=1))
        print("plain", repr(str(output)), session.startswith("/org/freedesktop/secrets/session/"))
        print("alias", service.ReadAlias("default"), service.ReadAlias("nothing"))
        print("unknown collection", error(lambda: dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/collection/nothing"), "org.freedesktop.Secret.Collection").SearchItems({})))
        collection = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/collection/login"), "org.freedesktop.Secret.Collection")
        secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"plain secret"), "text/plain"), signature="oayays")
        item, prompt = collection.CreateItem({"org.freedesktop.Secret.Item.Label": "Raw", "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"raw": "1"}, signature="ss")}, secret, False)
        print("created", prompt)
        secrets = service.GetSecrets([item], session)
        print("secret", bytes(secrets[item][2]))
        other = dbus.SessionBus(private=True)
        foreign = dbus.Interface(other.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
        print("foreign session", error(lambda: foreign.GetSecrets([item], session)))
        missing = item[:-4] + "0000"
        print("missing item", error(lambda: dbus.Interface(bus.get_object("org.freedesktop.secrets", missing), "org.freedesktop.Secret.Item").GetSecret(session)))
        print("not an object", error(lambda: dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/elsewhere"), "org.freedesktop.Secret.Item").GetSecret(session)))
        dbus.Interface(bus.get_object("org.freedesktop.secrets", session), "org.freedesktop.Secret.Session").Close()
        print("closed session", error(lambda: service.GetSecrets([item], session)))
        print("collection delete", error(lambda: collection.Delete()))
        """

    @Test func errorsAreTheOnesClientsExpect() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        let run = try desktop.python(Self.rawCalls)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout == """
                unknown algorithm org.freedesktop.DBus.Error.NotSupported
                bad public value org.freedesktop.DBus.Error.InvalidArgs
                plain '' True
                alias /org/freedesktop/secrets/collection/login /
                unknown collection org.freedesktop.Secret.Error.NoSuchObject
                created /
                secret b'plain secret'
                foreign session org.freedesktop.Secret.Error.NoSession
                missing item org.freedesktop.Secret.Error.NoSuchObject
                not an object org.freedesktop.DBus.Error.UnknownObject
                closed session org.freedesktop.Secret.Error.NoSession
                collection delete org.freedesktop.DBus.Error.NotSupported

                """)
    }

    static let lockedLookup = """
        import sys, dbus
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.SessionBus()
        service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
        unlocked, locked = service.SearchItems({"service": "mail"})
        print("search while locked", len(unlocked), len(locked))
        done, prompt = service.Unlock(locked)
        print("unlock", len(done), prompt.startswith("/org/freedesktop/secrets/prompt/"))
        loop = GLib.MainLoop()
        def completed(dismissed, result):
            print("completed", bool(dismissed), len(result))
            loop.quit()
        bus.add_signal_receiver(completed, "Completed", "org.freedesktop.Secret.Prompt", None, prompt)
        dbus.Interface(bus.get_object("org.freedesktop.secrets", prompt), "org.freedesktop.Secret.Prompt").Prompt("")
        GLib.timeout_add_seconds(20, loop.quit)
        loop.run()
        unlocked, locked = service.SearchItems({"service": "mail"})
        print("search after", len(unlocked), len(locked))
        """

    @Test(arguments: [
        ("pin:" + AgentSandbox.passphrase, "completed False 1\nsearch after 1 0\n"),
        ("cancel", "completed True 0\nsearch after 0 1\n"),
    ])
    func aLockedKeychainListsItsMatchesAsLockedAndUnlocksThroughAPrompt(_ answer: String, _ expected: String) throws {
        let desktop = try Desktop(pinentryAnswer: answer)
        try desktop.sandbox.unlock()
        #expect(
            try desktop.secretTool("store", "--label=Mail", "service", "mail", "user", "alice", input: "s3cret").status
                == 0)
        #expect(try desktop.sandbox.cli("lock-keychain").status == 0)
        let run = try desktop.python(Self.lockedLookup)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "search while locked 0 1\nunlock 0 True\n" + expected, "\(desktop.sandbox.agentLog)")
        let asked = desktop.sandbox.file(desktop.sandbox.directory.file("pinentry.log"))
        #expect(asked.contains("GETPIN"), "\(asked)")
    }

    @Test func theReadmeSessionRuns() throws {
        let desktop = try Desktop(startingTheAgent: false)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        let session = try #require(blocks.first { $0.contains("LATCHKEY_SECRET_SERVICE=1 latchkey unlock-keychain") })
        var environment = desktop.environment.merging(desktop.sandbox.agentEnvironment) { _, new in new }
        environment["LATCHKEY_PASSPHRASE"] = AgentSandbox.passphrase
        environment["PATH"] =
            URL(fileURLWithPath: HelperProcess.product("latchkey")).deletingLastPathComponent().path + ":/usr/bin:/bin"
        // The session starts an agent, which outlives it: stopped by its pid (in the keychain's agent lock) after.
        defer {
            let holder = desktop.sandbox.file(desktop.sandbox.keychainPath + ".agent-lock")
            if let pid = holder.split(separator: " ").first.flatMap({ Int32($0) }), pid > 0 { kill(pid, SIGTERM) }
        }
        let output = try HelperProcess.run("/bin/bash", ["-c", "set -e\n" + session], environment: environment)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout == "s3cret", "\(output.stderr)")
    }

    static let signalsAndLockedProperties = """
        import sys, dbus
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.SessionBus()
        heard = []
        bus.add_signal_receiver(lambda item: heard.append("ItemCreated"), "ItemCreated", "org.freedesktop.Secret.Collection")
        bus.add_signal_receiver(lambda item: heard.append("ItemChanged"), "ItemChanged", "org.freedesktop.Secret.Collection")
        bus.add_signal_receiver(lambda item: heard.append("ItemDeleted"), "ItemDeleted", "org.freedesktop.Secret.Collection")
        bus.add_signal_receiver(lambda interface, changed, invalidated, path=None: heard.append("PropertiesChanged " + interface.split(".")[-1] + " " + ",".join(invalidated)),
                                "PropertiesChanged", "org.freedesktop.DBus.Properties", path_keyword="path")
        service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
        output, session = service.OpenSession("plain", dbus.String("", variant_level=1))
        collection = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/collection/login"), "org.freedesktop.Secret.Collection")
        secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"v1"), "text/plain"), signature="oayays")
        item, prompt = collection.CreateItem({"org.freedesktop.Secret.Item.Label": "One", "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"k": "v"}, signature="ss")}, secret, False)
        properties = dbus.Interface(bus.get_object("org.freedesktop.secrets", item), "org.freedesktop.DBus.Properties")
        properties.Set("org.freedesktop.Secret.Item", "Label", dbus.String("Two", variant_level=1))
        print("label", properties.Get("org.freedesktop.Secret.Item", "Label"))
        dbus.Interface(bus.get_object("org.freedesktop.secrets", item), "org.freedesktop.Secret.Item").Delete()
        loop = GLib.MainLoop()
        GLib.timeout_add(300, loop.quit)
        loop.run()
        print("\\n".join(heard))
        secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"v2"), "text/plain"), signature="oayays")
        item, prompt = collection.CreateItem({"org.freedesktop.Secret.Item.Label": "Kept"}, secret, False)
        print(item)
        """

    static let lockedProperties = """
        import sys, dbus
        bus = dbus.SessionBus()
        properties = dbus.Interface(bus.get_object("org.freedesktop.secrets", sys.argv[1]), "org.freedesktop.DBus.Properties")
        values = properties.GetAll("org.freedesktop.Secret.Item")
        print("locked", bool(values["Locked"]), dict(values["Attributes"]), repr(str(values["Label"])))
        collection = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/collection/login"), "org.freedesktop.DBus.Properties")
        print("collection locked", bool(collection.Get("org.freedesktop.Secret.Collection", "Locked")))
        service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
        output, session = service.OpenSession("plain", dbus.String("", variant_level=1))
        try:
            dbus.Interface(bus.get_object("org.freedesktop.secrets", sys.argv[1]), "org.freedesktop.Secret.Item").GetSecret(session)
            print("secret given")
        except dbus.exceptions.DBusException as failure:
            print("secret", failure.get_dbus_name())
        """

    @Test func changesAreSignalledAndALockedItemSaysSo() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        let run = try desktop.python(Self.signalsAndLockedProperties)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(
            Array(lines.dropLast()) == [
                "label Two", "ItemCreated", "PropertiesChanged Collection Items", "ItemChanged",
                "PropertiesChanged Item Label,Modified",
                "ItemDeleted", "PropertiesChanged Collection Items",
            ])
        // The client's connection is gone: its session went with it.
        try waitUntil("the agent to close the session") {
            desktop.sandbox.agentLog.contains("closed 1 Secret Service session(s) of :")
        }
        #expect(try desktop.sandbox.cli("lock-keychain").status == 0)
        let locked = try desktop.python(Self.lockedProperties, try #require(lines.last))
        #expect(
            locked.stdout
                == "locked True {} ''\ncollection locked True\nsecret org.freedesktop.Secret.Error.IsLocked\n",
            "\(locked.stderr)")
    }

    @Test func secretServiceItemsTravelInBackups() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        #expect(
            try desktop.secretTool("store", "--label=Mail", "service", "mail", "user", "alice", input: "s3cret").status
                == 0)
        let backup = desktop.sandbox.directory.file("backup.lkb")
        let exported = try HelperProcess.run(
            HelperProcess.product("latchkey"), ["export", "-o", backup, "--backup-passphrase-fd", "0"],
            environment: desktop.sandbox.withPassphrase, input: Data("backup words\n".utf8))
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(try desktop.secretTool("clear", "service", "mail", "user", "alice").status == 0)
        #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").status == 1)
        let imported = try HelperProcess.run(
            HelperProcess.product("latchkey"), ["import", "-i", backup, "--backup-passphrase-fd", "0"],
            environment: desktop.sandbox.withPassphrase, input: Data("backup words\n".utf8))
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").stdout == "s3cret")
    }

    static let sessionCollection = """
        import sys, dbus
        bus = dbus.SessionBus()
        service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
        properties = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.DBus.Properties")
        print("collections", [str(path) for path in properties.Get("org.freedesktop.Secret.Service", "Collections")])
        path = service.ReadAlias("session")
        print("alias", path)
        if sys.argv[1] == "store":
            output, session = service.OpenSession("plain", dbus.String("", variant_level=1))
            collection = dbus.Interface(bus.get_object("org.freedesktop.secrets", path), "org.freedesktop.Secret.Collection")
            secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"for now"), "text/plain"), signature="oayays")
            item, prompt = collection.CreateItem({"org.freedesktop.Secret.Item.Label": "Ephemeral", "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"scope": "session"}, signature="ss")}, secret, True)
            print("item in session", item.startswith(path + "/"))
            unlocked, locked = service.SearchItems({"scope": "session"})
            print("found", [str(found) == str(item) for found in unlocked], len(locked))
            print("secret", bytes(service.GetSecrets(unlocked, session)[item][2]))
            label = dbus.Interface(bus.get_object("org.freedesktop.secrets", item), "org.freedesktop.DBus.Properties").Get("org.freedesktop.Secret.Item", "Label")
            print("label", label)
        else:
            unlocked, locked = service.SearchItems({"scope": "session"})
            print("after restart", len(unlocked), len(locked))
        """

    @Test func theSessionCollectionLivesInTheAgentsMemoryOnly() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        var run = try desktop.python(Self.sessionCollection, "store")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout == """
                collections ['/org/freedesktop/secrets/collection/login', '/org/freedesktop/secrets/collection/session']
                alias /org/freedesktop/secrets/collection/session
                item in session True
                found [True] 0
                secret b'for now'
                label Ephemeral

                """)
        // Not in the keychain; gone when the agent stops.
        #expect(!(try desktop.sandbox.cli("dump-keychain").stdout.contains("Ephemeral")))
        desktop.sandbox.stop()
        try desktop.sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--secret-service"])
        try desktop.sandbox.unlock()
        run = try desktop.python(Self.sessionCollection, "check")
        #expect(run.stdout.hasSuffix("after restart 0 0\n"), "\(run.stderr)")
    }

    static let pythonKeyring = """
        import keyring
        from keyring.backends import SecretService
        keyring.set_keyring(SecretService.Keyring())
        keyring.set_password("example.org", "alice", "k3yring")
        print(keyring.get_password("example.org", "alice"))
        keyring.delete_password("example.org", "alice")
        print(keyring.get_password("example.org", "alice"))
        """

    @Test func pythonKeyringKeepsItsPasswordsInTheKeychain() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        let run = try desktop.python(Self.pythonKeyring)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "k3yring\nNone\n")
    }

    static let collections = """
        import sys, dbus
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.SessionBus()
        heard = []
        for member in ["CollectionCreated", "CollectionChanged", "CollectionDeleted"]:
            bus.add_signal_receiver(lambda path, member=member: heard.append(member), member, "org.freedesktop.Secret.Service")
        service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
        properties = lambda path: dbus.Interface(bus.get_object("org.freedesktop.secrets", path), "org.freedesktop.DBus.Properties")
        if sys.argv[1] == "make":
            path, prompt = service.CreateCollection({"org.freedesktop.Secret.Collection.Label": dbus.String("Work Passwords", variant_level=1)}, "work")
            print("made", path, prompt)
            again, prompt = service.CreateCollection({"org.freedesktop.Secret.Collection.Label": dbus.String("Other", variant_level=1)}, "work")
            print("same alias, same collection", again == path, str(service.ReadAlias("work")) == str(path))
            output, session = service.OpenSession("plain", dbus.String("", variant_level=1))
            collection = dbus.Interface(bus.get_object("org.freedesktop.secrets", path), "org.freedesktop.Secret.Collection")
            secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"vpn"), "text/plain"), signature="oayays")
            item, prompt = collection.CreateItem({"org.freedesktop.Secret.Item.Label": "VPN", "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"host": "vpn"}, signature="ss")}, secret, False)
            print("item in it", item.startswith(path + "/"))
            unlocked, locked = service.SearchItems({"host": "vpn"})
            print("found", [str(found) for found in unlocked] == [str(item)])
            properties(path).Set("org.freedesktop.Secret.Collection", "Label", dbus.String("Work", variant_level=1))
            print("label", properties(path).Get("org.freedesktop.Secret.Collection", "Label"))
            print("collections", [str(p).split("/")[-1] for p in properties("/org/freedesktop/secrets").Get("org.freedesktop.Secret.Service", "Collections")])
        else:
            path = service.ReadAlias("work")
            print("after restart", path, properties(path).Get("org.freedesktop.Secret.Collection", "Label"), len(service.SearchItems({"host": "vpn"})[0]))
            dbus.Interface(bus.get_object("org.freedesktop.secrets", path), "org.freedesktop.Secret.Collection").Delete()
            print("deleted", len(service.SearchItems({"host": "vpn"})[0]), service.ReadAlias("work"))
        loop = GLib.MainLoop()
        GLib.timeout_add(300, loop.quit)
        loop.run()
        print(" ".join(heard))
        """

    @Test func collectionsAreMadeRenamedAliasedKeptAndDeleted() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        var run = try desktop.python(Self.collections, "make")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout == """
                made /org/freedesktop/secrets/collection/work_passwords /
                same alias, same collection True True
                item in it True
                found True
                label Work
                collections ['login', 'session', 'work_passwords']
                CollectionCreated CollectionChanged

                """)
        // Its items are keychain items of their own service; the collection outlives the agent.
        #expect(
            try desktop.sandbox.cli("dump-keychain").stdout.contains(
                "\"svce\"<blob>=\"org.freedesktop.secrets/work_passwords\""))
        desktop.sandbox.stop()
        try desktop.sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--secret-service"])
        try desktop.sandbox.unlock()
        run = try desktop.python(Self.collections, "check")
        #expect(
            run.stdout == """
                after restart /org/freedesktop/secrets/collection/work_passwords Work 1
                deleted 0 /
                CollectionDeleted

                """, "\(run.stderr)")
        #expect(!(try desktop.sandbox.cli("dump-keychain").stdout.contains("work_passwords")))
    }

    /// The start of the scripts that call the bus raw: `error(call)` gives a call's D-Bus error name.
    static let callsWithErrors = """
        import sys, dbus
        bus = dbus.SessionBus()
        def error(call):
            try:
                call()
                return "no error"
            except dbus.exceptions.DBusException as failure:
                return failure.get_dbus_name()

        """

    static let aliases =
        callsWithErrors + """
            service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
            label = lambda path: dbus.Interface(bus.get_object("org.freedesktop.secrets", path), "org.freedesktop.DBus.Properties").Get("org.freedesktop.Secret.Collection", "Label")
            work = "/org/freedesktop/secrets/collection/work"
            if sys.argv[1] == "move":
                made, prompt = service.CreateCollection({"org.freedesktop.Secret.Collection.Label": dbus.String("Work", variant_level=1)}, "")
                print("made", made, service.ReadAlias("default"))
                service.SetAlias("default", made)
                print("default", service.ReadAlias("default"), label("/org/freedesktop/secrets/aliases/default"))
                again, prompt = service.CreateCollection({"org.freedesktop.Secret.Collection.Label": dbus.String("Other", variant_level=1)}, "default")
                print("asking for default gives it", again == made)
            else:
                service.SetAlias("team", work)
                print("team", service.ReadAlias("team"), label("/org/freedesktop/secrets/aliases/team"))
                service.SetAlias("team", "/")
                print("team removed", service.ReadAlias("team"), error(lambda: label("/org/freedesktop/secrets/aliases/team")))
                print("default to session", error(lambda: service.SetAlias("default", "/org/freedesktop/secrets/collection/session")))
                print("login moved", error(lambda: service.SetAlias("login", work)))
                print("session removed", error(lambda: service.SetAlias("session", "/")))
                print("another alias to login", error(lambda: service.SetAlias("team", "/org/freedesktop/secrets/collection/login")))
                print("a bad name", error(lambda: service.SetAlias("no-dashes", work)))
                print("no such collection", error(lambda: service.SetAlias("team", "/org/freedesktop/secrets/collection/nothing")))
                service.SetAlias("default", "/")
                print("default back", service.ReadAlias("default"), label("/org/freedesktop/secrets/aliases/default"))
                service.SetAlias("default", work)
                service.SetAlias("default", "/org/freedesktop/secrets/collection/login")
                print("default to login", service.ReadAlias("default"), service.ReadAlias("login"), service.ReadAlias("session"))
            """

    @Test func theDefaultAliasMovesAndOtherAliasesComeAndGo() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        var run = try desktop.python(Self.aliases, "move")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout == """
                made /org/freedesktop/secrets/collection/work /org/freedesktop/secrets/collection/login
                default /org/freedesktop/secrets/collection/work Work
                asking for default gives it True

                """)
        // secret-tool stores into the default collection, now Work: an item of that collection's service.
        #expect(try desktop.secretTool("store", "--label=Build token", "app", "ci", input: "t0ken").status == 0)
        #expect(
            try desktop.sandbox.cli("dump-keychain").stdout.contains("\"svce\"<blob>=\"org.freedesktop.secrets/work\""))
        #expect(try desktop.secretTool("lookup", "app", "ci").stdout == "t0ken")
        // The alias outlives the agent.
        desktop.sandbox.stop()
        try desktop.sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--secret-service"])
        try desktop.sandbox.unlock()
        run = try desktop.python(Self.aliases, "check")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout == """
                team /org/freedesktop/secrets/collection/work Work
                team removed / org.freedesktop.DBus.Error.UnknownObject
                default to session org.freedesktop.DBus.Error.NotSupported
                login moved org.freedesktop.DBus.Error.NotSupported
                session removed org.freedesktop.DBus.Error.NotSupported
                another alias to login org.freedesktop.DBus.Error.NotSupported
                a bad name org.freedesktop.DBus.Error.InvalidArgs
                no such collection org.freedesktop.Secret.Error.NoSuchObject
                default back /org/freedesktop/secrets/collection/login Login
                default to login /org/freedesktop/secrets/collection/login /org/freedesktop/secrets/collection/login /org/freedesktop/secrets/collection/session

                """)
        #expect(try desktop.secretTool("lookup", "app", "ci").stdout == "t0ken", "moving the alias moves no item")
    }

    static let badInput =
        callsWithErrors + """
            secrets = bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets")
            service = dbus.Interface(secrets, "org.freedesktop.Secret.Service")
            raw = lambda member, signature, arguments: bus.call_blocking("org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", member, signature, arguments)
            print("wrong signature", error(lambda: raw("SearchItems", "s", ("x",))))
            print("missing argument", error(lambda: raw("OpenSession", "s", ("plain",))))
            for size in [0, 64, 127, 129, 1000]:
                print("dh public key of", size, "bytes", error(lambda: service.OpenSession("dh-ietf1024-sha256-aes128-cbc-pkcs7", dbus.ByteArray(b"\\x07" * size, variant_level=1))))
            output, session = service.OpenSession("plain", dbus.String("", variant_level=1))
            collection = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/collection/login"), "org.freedesktop.Secret.Collection")
            def create(attributes, value, label="L"):
                secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(value), "text/plain"), signature="oayays")
                return error(lambda: collection.CreateItem({"org.freedesktop.Secret.Item.Label": label, "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary(attributes, signature="ss")}, secret, False))
            print("huge secret", create({"a": "1"}, b"x" * (17 << 20)))
            print("huge attribute", create({"a": "x" * 70000}, b"v"))
            print("many attributes", create(dict(("k%d" % i, "v") for i in range(5000)), b"v"))
            print("a good one still", create({"good": "1"}, b"kept"))
            # A DH session's secret with a wrong IV or length, or padding that is not PKCS #7: sealed with the
            # session's real key, so the padding is wrong for certain (random bytes decrypt to valid padding about
            # one time in 256), beside one sealed right.
            import os
            from secretstorage.dhcrypto import Session as Exchange, int_to_bytes
            from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
            exchange = Exchange()
            output, dh = service.OpenSession("dh-ietf1024-sha256-aes128-cbc-pkcs7", dbus.ByteArray(int_to_bytes(exchange.my_public_key), variant_level=1))
            exchange.set_server_public_key(int.from_bytes(bytes(output), "big"))
            def sealed(plaintext):
                iv = os.urandom(16)
                encryptor = Cipher(algorithms.AES(exchange.aes_key), modes.CBC(iv)).encryptor()
                return iv, encryptor.update(plaintext) + encryptor.finalize()
            def create_dh(parameters, value, attributes={}):
                secret = dbus.Struct((dh, dbus.ByteArray(parameters), dbus.ByteArray(value), "text/plain"), signature="oayays")
                return error(lambda: collection.CreateItem({"org.freedesktop.Secret.Item.Label": "x", "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary(attributes, signature="ss")}, secret, False))
            print("short iv", create_dh(b"short", b"\\x00" * 16))
            print("not whole blocks", create_dh(os.urandom(16), b"\\x00" * 15))
            print("padding of 0", create_dh(*sealed(b"secret" + b"\\x00" * 10)))
            print("padding of 17", create_dh(*sealed(b"secret" + b"\\x11" * 10)))
            print("padding of 3 over other bytes", create_dh(*sealed(b"secret" + b"\\x07" * 8 + b"\\x05\\x03")))
            print("good padding", create_dh(*sealed(b"secret" + b"\\x0a" * 10), {"padding": "good"}))
            prompt = service.Unlock([])[1]
            print("nothing to unlock", prompt)
            service.Lock([])
            unlocked, locked = service.SearchItems({"good": "1"})
            print("locked", len(unlocked), len(locked))
            done, prompt = service.Unlock(locked)
            dbus.Interface(bus.get_object("org.freedesktop.secrets", prompt), "org.freedesktop.Secret.Prompt").Dismiss()
            print("prompt dismissed twice", error(lambda: dbus.Interface(bus.get_object("org.freedesktop.secrets", prompt), "org.freedesktop.Secret.Prompt").Dismiss()))
            xml = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/collection/login"), "org.freedesktop.DBus.Introspectable").Introspect()
            print("introspection", all(name in xml for name in ["org.freedesktop.Secret.Collection", "CreateItem", "org.freedesktop.DBus.Properties"]))
            """

    @Test func badInputOnTheBusIsAnErrorAndLosesNothing() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        #expect(
            try desktop.secretTool("store", "--label=Mail", "service", "mail", "user", "alice", input: "s3cret").status
                == 0)
        let run = try desktop.python(Self.badInput)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout == """
                wrong signature org.freedesktop.DBus.Error.InvalidArgs
                missing argument org.freedesktop.DBus.Error.InvalidArgs
                dh public key of 0 bytes org.freedesktop.DBus.Error.InvalidArgs
                dh public key of 64 bytes no error
                dh public key of 127 bytes no error
                dh public key of 129 bytes org.freedesktop.DBus.Error.InvalidArgs
                dh public key of 1000 bytes org.freedesktop.DBus.Error.InvalidArgs
                huge secret org.freedesktop.DBus.Error.InvalidArgs
                huge attribute org.freedesktop.DBus.Error.InvalidArgs
                many attributes org.freedesktop.DBus.Error.InvalidArgs
                a good one still no error
                short iv org.freedesktop.DBus.Error.InvalidArgs
                not whole blocks org.freedesktop.DBus.Error.InvalidArgs
                padding of 0 org.freedesktop.DBus.Error.InvalidArgs
                padding of 17 org.freedesktop.DBus.Error.InvalidArgs
                padding of 3 over other bytes org.freedesktop.DBus.Error.InvalidArgs
                good padding no error
                nothing to unlock /
                locked 0 1
                prompt dismissed twice org.freedesktop.Secret.Error.NoSuchObject
                introspection True

                """)
        // Nothing lost, and the provider still serves.
        try desktop.sandbox.unlock()
        #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").stdout == "s3cret")
        #expect(try desktop.secretTool("lookup", "good", "1").stdout == "kept")
        #expect(try desktop.secretTool("lookup", "padding", "good").stdout == "secret")
    }

    @Test func theBusStartsTheProviderAndStartsItAgainAfterItIsKilled() throws {
        // The shipped activation file hands the name to the systemd user unit; here the bus starts latchkeyd
        // itself (there is no systemd), from a service directory of the test's own.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let shipped = try String(
            contentsOf: root.appendingPathComponent("contrib/systemd/org.freedesktop.secrets.service"), encoding: .utf8)
        #expect(shipped.contains("[D-BUS Service]\nName=org.freedesktop.secrets\n"))
        #expect(shipped.contains("\nSystemdService=latchkeyd.service\n"))
        let services = TemporaryDirectory()
        let desktop = try Desktop(startingTheAgent: false, busPolicy: "<servicedir>\(services.path)</servicedir>")
        let sandbox = desktop.sandbox
        try """
        [D-BUS Service]
        Name=org.freedesktop.secrets
        Exec=\(HelperProcess.product("latchkeyd")) --verbose --secret-service --keychain \(sandbox.keychainPath) --socket \(sandbox.socketPath)
        """.write(toFile: services.file("org.freedesktop.secrets.service"), atomically: true, encoding: .utf8)
        func agentPID() -> Int32? {
            sandbox.file(sandbox.keychainPath + ".agent-lock").split(separator: " ").first.flatMap { Int32($0) }
        }
        defer { if let pid = agentPID() { kill(pid, SIGTERM) } }
        for round in 1...2 {
            // Any call starts it; it starts locked, and the command line unlocks it.
            let started = try desktop.python(
                "import dbus; print(dbus.Interface(dbus.SessionBus().get_object('org.freedesktop.secrets', '/org/freedesktop/secrets'), 'org.freedesktop.Secret.Service').ReadAlias('default'))"
            )
            #expect(
                started.stdout == "/org/freedesktop/secrets/collection/login\n", "round \(round): \(started.stderr)")
            try waitUntil("the agent's socket") { FileManager.default.fileExists(atPath: sandbox.socketPath) }
            try sandbox.unlock()
            if round == 1 {
                #expect(
                    try desktop.secretTool("store", "--label=Mail", "service", "mail", "user", "alice", input: "s3cret")
                        .status == 0)
                let pid = try #require(agentPID())
                #expect(kill(pid, SIGKILL) == 0)
                try waitUntil("the agent to die") { kill(pid, 0) != 0 }
                // A killed agent leaves its socket behind.
                try? FileManager.default.removeItem(atPath: sandbox.socketPath)
            } else {
                #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").stdout == "s3cret")
            }
        }
    }

    @Test func importCopiesEveryItemOfGnomeKeyringOnce() throws {
        let desktop = try Desktop(startingTheAgent: false)
        let sandbox = desktop.sandbox
        // GNOME Keyring on the same private bus, unlocked with its own password at start.
        let home = sandbox.directory.file("gnome")
        try FileManager.default.createDirectory(
            atPath: home + "/run", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try "gnome password".write(toFile: home + "/password", atomically: true, encoding: .utf8)
        let gnome = try SpawnedProcess(
            "/bin/sh",
            [
                "-c",
                "exec /usr/bin/gnome-keyring-daemon --foreground --unlock --components=secrets < \"$HOME/password\"",
            ],
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": home, "XDG_DATA_HOME": home + "/data",
                "XDG_RUNTIME_DIR": home + "/run",
                "DBUS_SESSION_BUS_ADDRESS": desktop.address,
            ],
            log: sandbox.directory.file("gnome-keyring.log"))
        defer { gnome.stop() }
        try waitUntil("GNOME Keyring to take the name") {
            (try? desktop.python("import dbus; print(dbus.SessionBus().name_has_owner('org.freedesktop.secrets'))"))?
                .stdout == "True\n"
        }
        #expect(
            try desktop.secretTool("store", "--label=GK Mail", "service", "mail", "user", "alice", input: "one").status
                == 0)
        #expect(
            try desktop.secretTool("store", "--label=GK Web", "service", "web", "user", "bob", input: "two").status == 0
        )

        func importFromGnome() throws -> HelperProcess.Output {
            try HelperProcess.run(
                HelperProcess.product("latchkey"), ["import", "--from-secret-service", "-k", sandbox.keychainPath],
                environment: sandbox.withPassphrase.merging(["DBUS_SESSION_BUS_ADDRESS": desktop.address]) { _, new in
                    new
                })
        }
        var run = try importFromGnome()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "copied 2 items from org.freedesktop.secrets (Login: 2)\n")
        run = try importFromGnome()
        #expect(
            run.stdout == "copied 0 items from org.freedesktop.secrets\nskipped 2 already in the keychain\n",
            "\(run.stderr)")
        // Without a provider on the bus: a clear failure, nothing changed.
        gnome.stop()
        try waitUntil("GNOME Keyring to leave the bus") {
            (try? desktop.python("import dbus; print(dbus.SessionBus().name_has_owner('org.freedesktop.secrets'))"))?
                .stdout == "False\n"
        }
        run = try importFromGnome()
        #expect(run.status != 0)
        #expect(
            run.stderr.hasPrefix("latchkey: import: cannot read the Secret Service org.freedesktop.secrets: "),
            "\(run.stderr)")

        // Latchkey takes over the name, and the programs find their secrets.
        try sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--secret-service"])
        try sandbox.unlock()
        #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").stdout == "one")
        #expect(try desktop.secretTool("lookup", "service", "web", "user", "bob").stdout == "two")
        try desktop.expectNothingInTheClear(["GK Mail", "GK Web", "alice"])
    }

    static let libsecret = """
        import gi
        gi.require_version("Secret", "1")
        from gi.repository import Secret
        schema = Secret.Schema.new("org.example.Mail", Secret.SchemaFlags.NONE,
                                   {"server": Secret.SchemaAttributeType.STRING, "port": Secret.SchemaAttributeType.INTEGER})
        print(Secret.password_store_sync(schema, {"server": "imap.example.org", "port": "993"}, Secret.COLLECTION_DEFAULT, "IMAP", "imap pw", None))
        print(Secret.password_lookup_sync(schema, {"server": "imap.example.org", "port": "993"}, None))
        service = Secret.Service.get_sync(Secret.ServiceFlags.LOAD_COLLECTIONS, None)
        items = service.search_sync(schema, {"server": "imap.example.org"}, Secret.SearchFlags.ALL | Secret.SearchFlags.LOAD_SECRETS, None)
        print(len(items), items[0].get_label(), sorted(items[0].get_attributes().items()), items[0].get_secret().get_text())
        print(Secret.password_clear_sync(schema, {"server": "imap.example.org"}, None))
        print(Secret.password_lookup_sync(schema, {"server": "imap.example.org", "port": "993"}, None))
        """

    @Test func libsecretThroughGObjectIntrospection() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        let run = try desktop.python(Self.libsecret)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout == """
                True
                imap pw
                1 IMAP [('port', '993'), ('server', 'imap.example.org'), ('xdg:schema', 'org.example.Mail')] imap pw
                True
                None

                """)
    }

    static let findMail = """
        import secretstorage
        bus = secretstorage.dbus_init()
        print(len(list(secretstorage.search_items(bus, {"service": "mail"}))))
        """

    @Test func isolatedEachProgramSeesItsOwnItemsAndWhatItsRegistrationGrants() throws {
        let desktop = try Desktop(agentArguments: ["--secret-service-policy", "isolated"])
        try desktop.sandbox.unlock()
        #expect(desktop.sandbox.agentLog.contains("Secret Service items: each program sees its own and its groups'"))
        #expect(
            try desktop.secretTool("store", "--label=Mail", "service", "mail", "user", "alice", input: "s3cret").status
                == 0)
        #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").stdout == "s3cret")
        // Another program (python3, unregistered) does not see secret-tool's item, nor secret-tool python's.
        var run = try desktop.python(Self.findMail)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "0\n")
        run = try desktop.python(
            "import secretstorage; secretstorage.get_default_collection(secretstorage.dbus_init()).create_item('Py', {'owner': 'python'}, b'py')"
        )
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try desktop.secretTool("lookup", "owner", "python").status == 1)
        // The item went to secret-tool's own group; registering python3 for that group lets it see the item.
        let secretTool = URL(fileURLWithPath: "/usr/bin/secret-tool").resolvingSymlinksInPath().path
        #expect(
            try desktop.sandbox.cli("dump-keychain").stdout.contains("\"agrp\"<blob>=\"secret-service:\(secretTool)\""))
        let python = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path
        try desktop.sandbox.register(python, appID: "python", groups: ["python", "secret-service:" + secretTool])
        run = try desktop.python(Self.findMail)
        #expect(run.stdout == "1\n", "\(run.stderr)")
    }

    static let anotherUsersSearch = """
        import dbus
        bus = dbus.SessionBus()
        service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
        try:
            service.SearchItems({"service": "mail"})
            print("answered")
        except dbus.exceptions.DBusException as failure:
            print(failure.get_dbus_name())
        """

    @Test(.enabled(if: getuid() == 0 && getpwnam("nobody") != nil, "acting as another user needs root"))
    func programsOfAnotherUserAreRefused() throws {
        // A bus that lets any user connect, in a directory any user can reach: only the provider refuses.
        let open = TemporaryDirectory()
        #expect(chmod(open.path, 0o755) == 0)
        let desktop = try Desktop(
            busDirectory: open.path,
            busPolicy: "<allow_anonymous/><policy context=\"default\"><allow user=\"*\"/></policy>")
        #expect(chmod(desktop.socketPath, 0o777) == 0)
        try desktop.sandbox.unlock()
        #expect(
            try desktop.secretTool("store", "--label=Mail", "service", "mail", "user", "alice", input: "s3cret").status
                == 0)
        let entry = try #require(getpwnam("nobody"))
        let run = try HelperProcess.run(
            "/usr/bin/setpriv",
            [
                "--reuid=\(entry.pointee.pw_uid)", "--regid=\(entry.pointee.pw_gid)", "--clear-groups",
                "/usr/bin/python3",
                "-c", Self.anotherUsersSearch,
            ],
            environment: ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": desktop.address, "HOME": "/"])
        #expect(run.stdout == "org.freedesktop.DBus.Error.AccessDenied\n", "\(run.stderr)")
        #expect(desktop.sandbox.agentLog.contains("is not the agent's user"))
    }

    /// Another provider holding the name (GNOME Keyring still running in the session being switched) no
    /// longer stops the agent: it serves its socket, says who holds the name, waits in the bus's queue, and
    /// provides the Secret Service as soon as that provider leaves.
    @Test func anotherProviderOnTheBusKeepsTheNameUntilItLeaves() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        #expect(try desktop.secretTool("store", "--label=First", "owner", "first", input: "one").status == 0)
        let second = try AgentSandbox()
        second.agentEnvironment["DBUS_SESSION_BUS_ADDRESS"] = desktop.address
        try second.start(HelperProcess.product("latchkeyd"), ["--verbose", "--secret-service"])
        try second.unlock()
        let firstPID = try #require(desktop.sandbox.agent?.pid)
        let executable = HelperProcess.product("latchkeyd")
        #expect(
            second.agentLog.range(
                of:
                    #"another provider holds org\.freedesktop\.secrets \(:1\.[0-9]+, pid \#(firstPID), \#(executable)\): the Secret Service waits for the name and takes it when that provider leaves\n"#,
                options: .regularExpression) != nil, "\(second.agentLog)")
        #expect(!second.agentLog.contains("serving the Secret Service"))
        // Its own socket serves meanwhile.
        #expect(try second.cli("add-generic-password", "-a", "a", "-s", "s", "-w", "w").status == 0)
        #expect(try desktop.secretTool("lookup", "owner", "first").stdout == "one")

        desktop.sandbox.stop()
        try waitUntil("the name handed over") {
            second.agentLog.contains(
                "serving the Secret Service (org.freedesktop.secrets) on the session bus: the provider that held it left\n"
            )
        }
        // Now the second keychain answers: the first one's item is not in it, and a new one goes there.
        #expect(try desktop.secretTool("lookup", "owner", "first").status == 1)
        #expect(try desktop.secretTool("store", "--label=Second", "owner", "second", input: "two").status == 0)
        #expect(try desktop.secretTool("lookup", "owner", "second").stdout == "two")
        #expect(try second.cli("dump-keychain").stdout.contains(#""ss.owner"<blob>="second""#))
    }
}
