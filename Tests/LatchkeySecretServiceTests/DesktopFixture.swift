import Foundation
import LatchkeyTestSupport
import Testing

/// A user's desktop for `latchkey desktop`: a private session bus whose service directories are the user's
/// (`~/.local/share/dbus-1/services`, first) and a system root's (`/usr/share/dbus-1/services`), the root holding
/// Debian's GNOME Keyring files (its units, its autostart entry, its activation file — which starts the real
/// gnome-keyring-daemon, unlocked with its password, as its PAM module would at login) and the package's
/// latchkeyd.service and activation file. No systemd user manager runs: the test starts latchkeyd as the
/// user's unit would.
final class DesktopFixture {
    typealias Desktop = SecretServiceTests.Desktop
    let desktop: Desktop
    let system = TemporaryDirectory()
    var home: String { desktop.sandbox.directory.path }
    var root: String { system.path }

    init() throws {
        let sandbox = try AgentSandbox()
        let home = sandbox.directory.path
        try Self.layOut(system: system.path, home: home)
        desktop = try Desktop(
            startingTheAgent: false,
            busPolicy: "<servicedir>\(home)/data/dbus-1/services</servicedir>"
                + "<servicedir>\(system.path)/usr/share/dbus-1/services</servicedir>",
            sandbox: sandbox)
        // GNOME Keyring's activation runs as the bus starts it; its environment is written beside it.
        try """
        #!/bin/sh
        export HOME='\(home)' XDG_DATA_HOME='\(home)/gnome-data' XDG_RUNTIME_DIR='\(home)/gnome-run'
        export DBUS_SESSION_BUS_ADDRESS='\(desktop.address)'
        exec /usr/bin/gnome-keyring-daemon --foreground --unlock --components=secrets < '\(home)/gnome-password'
        """.write(toFile: system.file("gnome-keyring-activation"), atomically: true, encoding: .utf8)
        chmod(system.file("gnome-keyring-activation"), 0o755)
    }

    /// Debian's files of GNOME Keyring (copied from this machine, as its package installs them) and the
    /// package's of Latchkey, under `system`; GNOME Keyring's activation file starts the wrapper above.
    static func layOut(system: String, home: String) throws {
        let manager = FileManager.default
        for directory in [
            "usr/lib/systemd/user", "etc/xdg/autostart", "usr/share/dbus-1/services",
            "usr/share/latchkey/dbus-1/services",
        ] {
            try manager.createDirectory(atPath: system + "/" + directory, withIntermediateDirectories: true)
        }
        for unit in ["gnome-keyring-daemon.service", "gnome-keyring-daemon.socket"] {
            try manager.copyItem(
                atPath: "/usr/lib/systemd/user/" + unit, toPath: system + "/usr/lib/systemd/user/" + unit)
        }
        try manager.copyItem(
            atPath: "/etc/xdg/autostart/gnome-keyring-secrets.desktop",
            toPath: system + "/etc/xdg/autostart/gnome-keyring-secrets.desktop")
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        try manager.copyItem(
            atPath: repository + "/packaging/debian/latchkeyd.service",
            toPath: system + "/usr/lib/systemd/user/latchkeyd.service")
        try manager.copyItem(
            atPath: repository + "/packaging/debian/org.freedesktop.secrets.service",
            toPath: system + "/usr/share/latchkey/dbus-1/services/org.freedesktop.secrets.service")
        try """
        [D-BUS Service]
        Name=org.freedesktop.secrets
        Exec=\(system)/gnome-keyring-activation
        """.write(
            toFile: system + "/usr/share/dbus-1/services/org.freedesktop.secrets.service", atomically: true,
            encoding: .utf8)
        for directory in ["gnome-run", "data/dbus-1/services"] {
            try manager.createDirectory(
                atPath: home + "/" + directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        try "gnome password".write(toFile: home + "/gnome-password", atomically: true, encoding: .utf8)
    }

    /// What `latchkey desktop` gets: the user's directories, the system root, the bus, the keychain's passphrase
    /// (the agent, when it runs, serves the keychain instead).
    var environment: [String: String] {
        desktop.sandbox.withPassphrase.merging([
            "DBUS_SESSION_BUS_ADDRESS": desktop.address, "XDG_STATE_HOME": home + "/state",
            "XDG_RUNTIME_DIR": home + "/run", "LATCHKEY_SYSTEM_ROOT": root,
        ]) { _, new in new }
    }

    func latchkey(_ arguments: String...) throws -> HelperProcess.Output {
        try HelperProcess.run(HelperProcess.product("latchkey"), arguments, environment: environment)
    }

    /// Who holds org.freedesktop.secrets: its executable's base name, or "" for no one.
    func owner() throws -> String {
        try desktop.python(
            """
            import dbus, os
            bus = dbus.SessionBus()
            if bus.name_has_owner('org.freedesktop.secrets'):
                driver = dbus.Interface(bus.get_object('org.freedesktop.DBus', '/org/freedesktop/DBus'), 'org.freedesktop.DBus')
                pid = driver.GetConnectionUnixProcessID('org.freedesktop.secrets')
                print(os.path.basename(os.readlink('/proc/%d/exe' % pid)), pid)
            """
        ).stdout.split(separator: " ").first.map(String.init) ?? ""
    }

    /// Every item the provider holding the name serves, as "label|attributes|content type|secret (hex)", sorted;
    /// without `xdg:schema` (GNOME Keyring adds it where the creator gave none) and, unless `contentTypes`, with
    /// every content type "text/plain" (GNOME Keyring 42 keeps none: it answers text/plain for every item).
    func items(contentTypes: Bool = true) throws -> [String] {
        let output = try desktop.python(
            """
            import secretstorage, sys
            bus = secretstorage.dbus_init()
            rows = []
            for collection in secretstorage.get_all_collections(bus):
                for item in collection.get_all_items():
                    attributes = ','.join('%s=%s' % pair for pair in sorted(item.get_attributes().items()) if pair[0] != 'xdg:schema')
                    rows.append('%s|%s|%s|%s' % (item.get_label(), attributes, item.get_secret_content_type() if sys.argv[1] == 'keep' else 'text/plain', item.get_secret().hex()))
            print('\\n'.join(sorted(rows)))
            """, contentTypes ? "keep" : "plain")
        #expect(output.status == 0, "\(output.stderr)")
        return output.stdout.split(separator: "\n").map(String.init)
    }

    /// Rows of `items()` as GNOME Keyring gives them back: every content type text/plain.
    static func plain(_ rows: [String]) -> [String] {
        rows.map { row in
            var fields = row.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            if fields.count >= 4 { fields[fields.count - 2] = "text/plain" }
            return fields.joined(separator: "|")
        }.sorted()
    }

    /// Stores `count` items of every kind through the provider that holds the name (activating it): plain and
    /// binary secrets (NUL and 0xFF bytes), an empty one, one of 4 KiB, Unicode labels and values, one to eight
    /// attributes, with and without an xdg:schema, text/plain and application/octet-stream.
    func store(_ count: Int, prefix: String) throws {
        let output = try desktop.python(
            """
            import secretstorage, sys
            count, prefix = int(sys.argv[1]), sys.argv[2]
            bus = secretstorage.dbus_init()
            collection = secretstorage.get_default_collection(bus)
            for n in range(count):
                kind = n % 5
                attributes = {'batch': prefix, 'n': str(n)}
                for extra in range(n % 7):
                    attributes['extra%d' % extra] = 'välue %d ✓' % extra
                if kind == 1:
                    attributes['xdg:schema'] = 'org.example.Password'
                if kind == 0:
                    secret, content = ('secret %s %d' % (prefix, n)).encode(), 'text/plain'
                elif kind == 1:
                    secret, content = bytes([0, 255, n % 256, 10, 13]) * 3, 'application/octet-stream'
                elif kind == 2:
                    secret, content = (b'x' * 4096) + prefix.encode(), 'text/plain'
                elif kind == 3:
                    secret, content = ('пароль %s %d 🔑' % (prefix, n)).encode(), 'text/plain'
                else:
                    secret, content = (b'' if n == 4 else b'\\x00'), 'application/octet-stream'
                collection.create_item('Ítem %s %d — %s' % (prefix, n, 'kind %d' % kind), attributes, secret, content_type=content)
            """, String(count), prefix)
        #expect(output.status == 0, "\(output.stderr)")
    }

    /// Every file under the user's home that `desktop` may change (config, data's D-Bus services, state).
    func userFiles() -> [String: String] {
        var files: [String: String] = [:]
        for top in ["config", "data/dbus-1", "state"] {
            let base = home + "/" + top
            guard let walker = FileManager.default.enumerator(atPath: base) else { continue }
            while let relative = walker.nextObject() as? String {
                let path = base + "/" + relative
                // Not a link (it throws), or not a text file (a directory): each is what the next branch asks.
                if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
                    files[top + "/" + relative] = "-> " + target
                } else if let text = try? String(contentsOfFile: path, encoding: .utf8) {
                    files[top + "/" + relative] = text
                }
            }
        }
        return files
    }
}
