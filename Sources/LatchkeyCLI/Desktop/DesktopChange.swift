import FoundationEssentials

/// One change `latchkey desktop enable` makes to the user's files, as its record keeps it: what it is, why, and
/// what was there before, so that `disable` can undo it exactly — and leave alone what the user changed since.
struct DesktopChange: Codable, Equatable {
    enum Kind: String, Codable {
        /// `path` becomes a symbolic link to `content`.
        case link
        /// `path` becomes a file holding `content`.
        case file
        /// In the key-value file `path` (INI sections, or none for an environment file), `key` = `content`.
        case setting
    }

    var kind: Kind
    var path: String
    var content: String
    var section: String? = nil
    var key: String? = nil
    /// A link's or a file's previous content (a link's target); a setting's previous value; nil: none.
    var previous: String? = nil
    /// What `previous` was: "link", "file", "value", or nil for nothing there before.
    var previousKind: String? = nil
    /// Whether the file of a setting existed before.
    var fileExisted = true
    /// Why, for the output: "keeps GNOME Keyring's unit gnome-keyring-daemon.service from starting".
    var why: String

    /// The step as the output and `--dry-run` print it.
    var description: String {
        switch kind {
        case .link: return "link \(path) -> \(content) (\(why))"
        case .file: return "write \(path) (\(why))"
        case .setting:
            let place = section.map { "[\($0)] " } ?? ""
            return "set \(place)\(key ?? "")=\(content) in \(path) (\(why))"
        }
    }

    /// The undo as the output and `--dry-run` print it.
    var undoDescription: String {
        switch kind {
        case .link, .file:
            return previousKind == nil ? "remove \(path)" : "restore \(path) as it was"
        case .setting:
            let place = section.map { "[\($0)] " } ?? ""
            return previous.map { "set \(place)\(key ?? "")=\($0) in \(path) again" }
                ?? "remove \(place)\(key ?? "") from \(path)"
        }
    }

    /// Whether the change is in place now.
    var isInPlace: Bool {
        switch kind {
        case .link: return FileManager.default.destinationOfSymbolicLinkIfPresent(path) == content
        case .file: return FileManager.default.textIfRegularFile(path) == content
        case .setting:
            return KeyValueFile(text: FileManager.default.textIfRegularFile(path) ?? "").value(section, key ?? "")
                == content
        }
    }

    /// Makes the change, first noting what was there (so `undo` restores it). Returns false when it was in
    /// place already (nothing done).
    mutating func apply() throws -> Bool {
        if isInPlace { return false }
        let manager = FileManager.default
        try manager.createDirectory(
            atPath: PathText(path).directory, withIntermediateDirectories: true, attributes: nil)
        switch kind {
        case .link, .file:
            if let target = manager.destinationOfSymbolicLinkIfPresent(path) {
                (previous, previousKind) = (target, "link")
            } else if let text = manager.textIfRegularFile(path) {
                (previous, previousKind) = (text, "file")
            }
            if previousKind != nil { try manager.removeItem(atPath: path) }
            if kind == .link {
                try manager.createSymbolicLink(atPath: path, withDestinationPath: content)
            } else {
                try Data(content.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            }
        case .setting:
            let text = manager.textIfRegularFile(path)
            fileExisted = text != nil
            var file = KeyValueFile(text: text ?? "")
            previous = file.value(section, key ?? "")
            previousKind = previous == nil ? nil : "value"
            file.set(section, key ?? "", content)
            try Data(file.text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        }
        return true
    }

    /// Undoes the change when it is still as it was made; returns false (and leaves the file) when the user
    /// has changed it since, or it is gone.
    func undo() throws -> Bool {
        guard isInPlace else { return false }
        let manager = FileManager.default
        switch kind {
        case .link, .file:
            try manager.removeItem(atPath: path)
            switch previousKind {
            case "link": try manager.createSymbolicLink(atPath: path, withDestinationPath: previous ?? "")
            case "file": try Data((previous ?? "").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            default: break
            }
        case .setting:
            var file = KeyValueFile(text: manager.textIfRegularFile(path) ?? "")
            if let previous {
                file.set(section, key ?? "", previous)
            } else {
                file.remove(section, key ?? "")
            }
            if !fileExisted && file.isEmpty {
                try manager.removeItem(atPath: path)
            } else {
                try Data(file.text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            }
        }
        return true
    }
}

/// A path's directory, without Foundation's NSString.
struct PathText {
    let path: String
    init(_ path: String) { self.path = path }

    var directory: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

extension FileManager {
    /// The target of the symbolic link at `path`; nil when there is none.
    func destinationOfSymbolicLinkIfPresent(_ path: String) -> String? {
        do {
            return try destinationOfSymbolicLink(atPath: path)
        } catch {
            return nil  // Not a link, or nothing there: both mean "no link".
        }
    }

    /// The text of the regular file at `path` (not following a final symbolic link); nil when there is none.
    func textIfRegularFile(_ path: String) -> String? {
        guard destinationOfSymbolicLinkIfPresent(path) == nil, let data = contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
