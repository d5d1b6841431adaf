import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// `Collection.Label` is read-write (the Secret Service specification's introspection), for every collection:
/// `login` (the default) keeps a new label across restarts, `session` in the agent's memory; each rename emits
/// `CollectionChanged`. And every property of the Service, Collection and Item interfaces has the type and
/// access the specification gives it.
@Suite(.serialized, .dedicatedThreads) struct CollectionLabelTests {
    typealias Desktop = SecretServiceTests.Desktop

    static let rename = """
        import sys, dbus
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.SessionBus()
        heard = []
        bus.add_signal_receiver(lambda path: heard.append("CollectionChanged " + path.split("/")[-1]), "CollectionChanged", "org.freedesktop.Secret.Service")
        bus.add_signal_receiver(lambda interface, changed, invalidated, path=None: heard.append("PropertiesChanged " + path.split("/")[-1] + " " + ",".join(invalidated)),
                                "PropertiesChanged", "org.freedesktop.DBus.Properties", path_keyword="path")
        properties = lambda path: dbus.Interface(bus.get_object("org.freedesktop.secrets", path), "org.freedesktop.DBus.Properties")
        label = lambda path: str(properties(path).Get("org.freedesktop.Secret.Collection", "Label"))
        login, default, session = "/org/freedesktop/secrets/collection/login", "/org/freedesktop/secrets/aliases/default", "/org/freedesktop/secrets/collection/session"
        if sys.argv[1] == "rename":
            print("before", label(login), label(session))
            properties(default).Set("org.freedesktop.Secret.Collection", "Label", dbus.String("Personal", variant_level=1))
            properties(session).Set("org.freedesktop.Secret.Collection", "Label", dbus.String("Just now", variant_level=1))
            print("after", label(login), label(default), label(session))
            print("GetAll", str(properties(login).GetAll("org.freedesktop.Secret.Collection")["Label"]))
        else:
            print("restarted", label(login), label(default), label(session))
        loop = GLib.MainLoop()
        GLib.timeout_add(300, loop.quit)
        loop.run()
        print(" ".join(heard))
        """

    @Test func theDefaultCollectionsLabelIsSetReadBackAndKept() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        var run = try desktop.python(Self.rename, "rename")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout == """
                before Login Session
                after Personal Personal Just now
                GetAll Personal
                CollectionChanged login PropertiesChanged login Label CollectionChanged session PropertiesChanged session Label

                """)
        // The new label is sealed in the keychain like every label.
        try desktop.expectNothingInTheClear(["Personal"])
        desktop.sandbox.stop()
        try desktop.sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--secret-service"])
        try desktop.sandbox.unlock()
        run = try desktop.python(Self.rename, "check")
        #expect(run.stdout == "restarted Personal Personal Session\n\n", "\(run.stderr)")
        // No Secret Service client sees the item that keeps it.
        #expect(try desktop.secretTool("search", "--all", "service", "org.freedesktop.secrets.labels").stdout == "")
    }

    @Test func aLabelMustBeAString() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        let run = try desktop.python(
            SecretServiceTests.callsWithErrors + """
                properties = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/collection/login"), "org.freedesktop.DBus.Properties")
                print(error(lambda: properties.Set("org.freedesktop.Secret.Collection", "Label", dbus.UInt32(7, variant_level=1))))
                print(properties.Get("org.freedesktop.Secret.Collection", "Label"))
                """)
        #expect(run.stdout == "org.freedesktop.DBus.Error.InvalidArgs\nLogin\n", "\(run.stderr)")
    }

    /// The specification's properties (org.freedesktop.Secret.{Service,Collection,Item}.xml): name, type, access.
    static let specification: [(interface: String, name: String, type: String, access: String)] = [
        ("org.freedesktop.Secret.Service", "Collections", "ao", "read"),
        ("org.freedesktop.Secret.Collection", "Items", "ao", "read"),
        ("org.freedesktop.Secret.Collection", "Label", "s", "readwrite"),
        ("org.freedesktop.Secret.Collection", "Locked", "b", "read"),
        ("org.freedesktop.Secret.Collection", "Created", "t", "read"),
        ("org.freedesktop.Secret.Collection", "Modified", "t", "read"),
        ("org.freedesktop.Secret.Item", "Locked", "b", "read"),
        ("org.freedesktop.Secret.Item", "Attributes", "a{ss}", "readwrite"),
        ("org.freedesktop.Secret.Item", "Label", "s", "readwrite"),
        ("org.freedesktop.Secret.Item", "Created", "t", "read"),
        ("org.freedesktop.Secret.Item", "Modified", "t", "read"),
    ]

    static let access =
        SecretServiceTests.callsWithErrors + """
            import xml.etree.ElementTree as tree
            service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
            output, session = service.OpenSession("plain", dbus.String("", variant_level=1))
            login = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/collection/login"), "org.freedesktop.Secret.Collection")
            secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"pw"), "text/plain"), signature="oayays")
            item, prompt = login.CreateItem({"org.freedesktop.Secret.Item.Label": "Mail", "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"app": "mail"}, signature="ss")}, secret, False)
            paths = {"Service": "/org/freedesktop/secrets", "Collection": "/org/freedesktop/secrets/collection/login", "Item": item}
            values = {"ao": dbus.Array([], signature="o", variant_level=1), "s": dbus.String("New", variant_level=1), "b": dbus.Boolean(True, variant_level=1),
                      "t": dbus.UInt64(1, variant_level=1), "a{ss}": dbus.Dictionary({"app": "mail2"}, signature="ss", variant_level=1)}
            def signature(value):
                if isinstance(value, dbus.Array): return "a" + value.signature
                if isinstance(value, dbus.Dictionary): return "a{" + value.signature + "}"
                return {dbus.String: "s", dbus.Boolean: "b", dbus.UInt64: "t"}.get(type(value), type(value).__name__)
            for line in sys.stdin.read().split("\\n"):
                if not line: continue
                interface, name, kind, access = line.split(" ")
                path = paths[interface.split(".")[-1]]
                proxy = bus.get_object("org.freedesktop.secrets", path)
                xml = tree.fromstring(dbus.Interface(proxy, "org.freedesktop.DBus.Introspectable").Introspect())
                declared = [(p.get("type"), p.get("access")) for i in xml.findall("interface") if i.get("name") == interface for p in i.findall("property") if p.get("name") == name]
                properties = dbus.Interface(proxy, "org.freedesktop.DBus.Properties")
                value = properties.Get(interface, name)
                set_result = error(lambda: properties.Set(interface, name, values[kind]))
                in_all = name in properties.GetAll(interface)
                print(interface.split(".")[-1], name, declared, signature(value), set_result, in_all)
            """

    @Test func everyPropertyHasTheSpecificationsTypeAndAccess() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        let lines = Self.specification.map { "\($0.interface) \($0.name) \($0.type) \($0.access)" }.joined(
            separator: "\n")
        let run = try desktop.run("/usr/bin/python3", ["-c", Self.access], input: lines + "\n")
        #expect(run.status == 0, "\(run.stderr)")
        let expected =
            Self.specification.map { property in
                let set = property.access == "readwrite" ? "no error" : "org.freedesktop.DBus.Error.PropertyReadOnly"
                return
                    "\(property.interface.split(separator: ".").last!) \(property.name) [('\(property.type)', '\(property.access)')] \(property.type) \(set) True"
            }.joined(separator: "\n") + "\n"
        #expect(run.stdout == expected, "\(run.stderr)")
    }
}
