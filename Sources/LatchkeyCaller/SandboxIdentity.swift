package import LatchkeyPOSIX

/// What the platform itself says a process is, independently of the program it runs: the app ID of the
/// Flatpak sandbox it is in, or the LSM label that confines it (docs/LATCHKEY-SECURITY.md, "Who is calling").
package enum SandboxIdentity {
    /// This process's own mount namespace, read once (every connection compares with it).
    private static let ownMount = Namespace.current(.mount)

    /// The app ID of a Flatpak sandbox the process runs in: its `/.flatpak-info` (`[Application]` or
    /// `[Runtime]` `name=`), read through its own root, when it is in a mount namespace of its own; nil
    /// otherwise, or when the ID is not a valid one. (As xdg-desktop-portal reads it.)
    package static func flatpakApp(_ handle: ProcessHandle) -> String? {
        guard let theirs = handle.namespace(.mount), let mine = ownMount, theirs != mine,
            let bytes = handle.readFile("root/.flatpak-info", limit: 64 << 10), !handle.hasExited
        else { return nil }
        var group = ""
        var names: [String: String] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("[") && line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
            } else if line.hasPrefix("name=") {
                names[group] = String(line.dropFirst(5))
            }
        }
        guard let name = names["Runtime"] ?? names["Application"], isValidAppID(name) else { return nil }
        return name
    }

    /// Flatpak's rule for an app ID: three or more elements joined by dots, each of ASCII letters, digits, `_`
    /// (and `-` in the last one), none starting with a digit; at most 255 bytes.
    package static func isValidAppID(_ id: String) -> Bool {
        let elements = id.split(separator: ".", omittingEmptySubsequences: false)
        guard id.utf8.count <= 255, elements.count >= 3 else { return false }
        for (index, element) in elements.enumerated() {
            guard let first = element.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
            let last = index == elements.count - 1
            for scalar in element.unicodeScalars {
                let allowed =
                    ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
                    || scalar == "_" || (last && scalar == "-")
                guard allowed else { return false }
            }
        }
        return true
    }

    /// The name of a label that confines the process: an AppArmor profile in enforce mode (`name (enforce)`)
    /// as `apparmor:<profile>`, an SELinux context whose type is not unconfined as `selinux:<type>`; nil for
    /// none, `unconfined`, or a profile in complain mode (which confines nothing).
    package static func confiningLabel(_ label: [UInt8]?) -> String? {
        guard let label, !label.isEmpty, let text = String(validating: label, as: UTF8.self) else { return nil }
        if text.contains(":") {
            let fields = text.split(separator: ":")
            guard fields.count >= 3, !fields[2].contains("unconfined") else { return nil }
            return "selinux:" + fields[2]
        }
        guard text.hasSuffix(" (enforce)") else { return nil }
        let profile = String(text.dropLast(" (enforce)".count))
        guard !profile.isEmpty, profile != "unconfined" else { return nil }
        return "apparmor:" + profile
    }
}
