import FoundationEssentials

/// A Secret Service provider Latchkey takes `org.freedesktop.secrets` over from, and what it uses to take the
/// name — each file and unit by name, for `desktop enable` to neutralize and `doctor --desktop` to report.
struct DesktopPeer: Equatable {
    /// Its key in the record and `--json`: `gnome-keyring`, `kwallet`, `keepassxc`, `oo7`.
    let id: String
    /// Its name for people.
    let name: String
    /// The executables (base names) that provide the name.
    let programs: [String]
    /// Its systemd user units that start it (each kept from starting by a drop-in condition).
    let units: [String]
    /// Its autostart entries that start the Secret Service (each hidden by a copy with `Hidden=true`).
    let autostart: [String]
    /// Settings that turn its Secret Service off: (file under the config home, section, key, value).
    let settings: [(file: String, section: String, key: String, value: String)]

    static func == (left: DesktopPeer, right: DesktopPeer) -> Bool { left.id == right.id }

    static let gnomeKeyring = DesktopPeer(
        id: "gnome-keyring", name: "GNOME Keyring", programs: ["gnome-keyring-daemon"],
        units: ["gnome-keyring-daemon.service", "gnome-keyring-daemon.socket"],
        autostart: ["gnome-keyring-secrets.desktop"], settings: [])
    static let kwallet = DesktopPeer(
        id: "kwallet", name: "KWallet", programs: ["ksecretd", "kwalletd6", "kwalletd5"],
        units: ["plasma-ksecretd.service"], autostart: [],
        settings: [("kwalletrc", "org.freedesktop.secrets", "apiEnabled", "false")])
    static let keepassxc = DesktopPeer(
        id: "keepassxc", name: "KeePassXC", programs: ["keepassxc"], units: [], autostart: [],
        settings: [("keepassxc/keepassxc.ini", "FdoSecrets", "Enabled", "false")])
    static let oo7 = DesktopPeer(
        id: "oo7", name: "oo7", programs: ["oo7-daemon"], units: ["oo7-daemon.service"], autostart: [], settings: [])

    static let all = [gnomeKeyring, kwallet, keepassxc, oo7]

    /// The peer whose program this is (a path or a base name).
    static func providing(program: String) -> DesktopPeer? {
        let base = program.split(separator: "/").last.map(String.init) ?? program
        return all.first { $0.programs.contains(base) }
    }

    /// The peer by its key.
    static func named(_ id: String) -> DesktopPeer? { all.first { $0.id == id } }

    /// The peers installed on this system: a unit, an autostart entry or an activation file of theirs.
    static func installed(_ paths: DesktopPaths) -> [DesktopPeer] {
        all.filter { peer in
            peer.units.contains { paths.unitFile($0) != nil }
                || peer.autostart.contains { FileManager.default.fileExists(atPath: paths.systemAutostart + "/" + $0) }
                || DesktopBusFiles.activationFiles(paths).contains { file in
                    peer.programs.contains { file.exec.contains($0) }
                }
        }
    }

    /// The changes that keep this peer from taking the name at the next login, each named: a drop-in for each
    /// of its installed units that stops it from starting while Latchkey's unit is installed (so removing the
    /// package gives the peer its session back), a hidden copy of each autostart entry, its own setting off.
    func changes(_ paths: DesktopPaths, agentUnit: String) -> [DesktopChange] {
        var changes: [DesktopChange] = []
        for unit in units where paths.unitFile(unit) != nil {
            changes.append(
                DesktopChange(
                    kind: .file, path: paths.userUnits + "/\(unit).d/latchkey.conf",
                    content: """
                        # Written by `latchkey desktop enable`: Latchkey provides org.freedesktop.secrets for this user
                        # while it is installed. `latchkey desktop disable` removes this file.
                        [Unit]
                        ConditionPathExists=!\(agentUnit)

                        """,
                    why: "keeps \(name)'s unit \(unit) from starting while latchkeyd.service is installed"))
        }
        for entry in autostart {
            let system = paths.systemAutostart + "/" + entry
            guard let original = FileManager.default.textIfRegularFile(system) else { continue }
            changes.append(
                DesktopChange(
                    kind: .file, path: paths.userAutostart + "/" + entry,
                    content: DesktopBusFiles.hidden(original),
                    why: "hides \(name)'s autostart entry \(system)"))
        }
        for setting in settings {
            changes.append(
                DesktopChange(
                    kind: .setting, path: paths.configHome + "/" + setting.file, content: setting.value,
                    section: setting.section, key: setting.key,
                    why: "turns \(name)'s Secret Service off"))
        }
        return changes
    }
}
