import FoundationEssentials

/// Where a user's desktop keeps what `latchkey desktop` and `latchkey doctor --desktop` read and write: the
/// user's own directories (XDG base directories) and the system's (under `LATCHKEY_SYSTEM_ROOT`, "/" unless
/// set: another root to read the system's files from, such as a mounted system or a test's tree).
struct DesktopPaths {
    let home: String
    let configHome: String
    let dataHome: String
    let stateHome: String
    let runtimeDirectory: String?
    /// The root the system's files are read under; "" for "/".
    let systemRoot: String

    init(environment: [String: String]) {
        let home = environment["HOME"] ?? "/"
        self.home = home
        func base(_ variable: String, _ fallback: String) -> String {
            guard let value = environment[variable], value.hasPrefix("/") else { return home + "/" + fallback }
            return value
        }
        configHome = base("XDG_CONFIG_HOME", ".config")
        dataHome = base("XDG_DATA_HOME", ".local/share")
        stateHome = base("XDG_STATE_HOME", ".local/state")
        runtimeDirectory = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        let root = environment["LATCHKEY_SYSTEM_ROOT"] ?? "/"
        systemRoot = root == "/" ? "" : (root.hasSuffix("/") ? String(root.dropLast()) : root)
    }

    /// A system path (absolute) under the system root.
    func system(_ path: String) -> String { systemRoot + path }

    /// The record of what `desktop enable` changed.
    var record: String { stateHome + "/latchkey/desktop.json" }
    /// The user's systemd user units.
    var userUnits: String { configHome + "/systemd/user" }
    /// The user's D-Bus session services, which win over the system's.
    var userBusServices: String { dataHome + "/dbus-1/services" }
    /// The user's autostart entries, which hide or replace the system's of the same name.
    var userAutostart: String { configHome + "/autostart" }
    /// latchkeyd's environment file (`EnvironmentFile=` of its unit).
    var agentEnvironment: String { configHome + "/latchkey/latchkeyd.env" }
    /// xdg-desktop-portal's routing for this user.
    var portalsConf: String { configHome + "/xdg-desktop-portal/portals.conf" }

    /// The system's directories of user units, in systemd's order (the first holding a unit wins).
    var systemUnitDirectories: [String] {
        ["/etc/systemd/user", "/usr/local/lib/systemd/user", "/usr/lib/systemd/user", "/lib/systemd/user"].map(system)
    }
    /// The system's D-Bus session service directories, in the bus's order.
    var systemBusServiceDirectories: [String] {
        ["/usr/local/share/dbus-1/services", "/usr/share/dbus-1/services"].map(system)
    }
    /// The system's autostart directory.
    var systemAutostart: String { system("/etc/xdg/autostart") }

    /// Where a user unit is installed: the user's own first, then the system's; nil when nowhere.
    func unitFile(_ name: String) -> String? {
        ([userUnits] + systemUnitDirectories).map { $0 + "/" + name }.first {
            FileManager.default.fileExists(atPath: $0)
        }
    }

    /// The installed latchkeyd.service the user's links point at (the system's: the user's own copy, from
    /// a manual install, is enabled by its name alone).
    var agentUnit: String? {
        systemUnitDirectories.map { $0 + "/latchkeyd.service" }.first { FileManager.default.fileExists(atPath: $0) }
            ?? (FileManager.default.fileExists(atPath: userUnits + "/latchkeyd.service")
                ? userUnits + "/latchkeyd.service" : nil)
    }

    /// The package's activation file for org.freedesktop.secrets (linked into the user's services).
    var packagedActivationFile: String {
        system("/usr/share/latchkey/dbus-1/services/org.freedesktop.secrets.service")
    }
}
