import FoundationEssentials

/// The D-Bus session activation files and autostart entries of a desktop, as the bus and the session read them.
enum DesktopBusFiles {
    /// One activation file that names org.freedesktop.secrets.
    struct ActivationFile: Equatable {
        let path: String
        let exec: String
        let systemdService: String?
    }

    /// Every activation file naming `name`, in the bus's order (the user's directory first: the first wins).
    static func activationFiles(_ paths: DesktopPaths, name: String = "org.freedesktop.secrets") -> [ActivationFile] {
        var found: [ActivationFile] = []
        for directory in [paths.userBusServices] + paths.systemBusServiceDirectories {
            for entry in (FileManager.default.contentsOfDirectoryIfPresent(directory)).sorted()
            where entry.hasSuffix(".service") {
                let path = directory + "/" + entry
                // A link that leads nowhere (the package removed) is skipped by the bus too.
                guard let data = FileManager.default.contents(atPath: path) else { continue }
                let file = KeyValueFile(text: String(decoding: data, as: UTF8.self))
                guard file.value("D-BUS Service", "Name") == name else { continue }
                found.append(
                    ActivationFile(
                        path: path, exec: file.value("D-BUS Service", "Exec") ?? "",
                        systemdService: file.value("D-BUS Service", "SystemdService")))
            }
        }
        return found
    }

    /// An autostart entry's copy that hides it (`Hidden=true`, as the XDG autostart specification says a user's
    /// copy does), everything else kept.
    static func hidden(_ entry: String) -> String {
        var file = KeyValueFile(text: entry)
        file.set("Desktop Entry", "Hidden", "true")
        return file.text
    }

    /// Whether the user's copy of an autostart entry hides it.
    static func isHidden(_ paths: DesktopPaths, _ entry: String) -> Bool {
        guard let text = FileManager.default.textIfRegularFile(paths.userAutostart + "/" + entry) else { return false }
        return KeyValueFile(text: text).value("Desktop Entry", "Hidden") == "true"
    }
}

extension FileManager {
    /// The names in a directory; none when it cannot be read.
    func contentsOfDirectoryIfPresent(_ path: String) -> [String] {
        do {
            return try contentsOfDirectory(atPath: path)
        } catch {
            return []  // A directory that is not there holds nothing to read.
        }
    }
}
