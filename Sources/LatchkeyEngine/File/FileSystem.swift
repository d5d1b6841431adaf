package import FoundationEssentials
package import LatchkeyPOSIX

/// The engine's file rules, over LatchkeyPOSIX: exact modes whatever the umask, no file or directory that
/// another user could write, read or replace, companion files checked (or made) before SQLite opens them,
/// atomic no-replace renames and fsync. Every failure is a `KeychainError` naming the path.
package enum FileSystem {
    package static func status(_ path: String) -> FileStatus? { FileStatus.of(path: path) }

    package static func exists(_ path: String) -> Bool { status(path) != nil }

    private static func io(_ what: String, _ path: String, _ error: Errno) -> KeychainError {
        KeychainError(error == .noSpace ? .diskFull : .io, "cannot \(what) \(path): \(error)")
    }

    /// `path` made absolute (against the working directory) with `.` and `..` resolved by name and repeated
    /// slashes dropped — what `URL(fileURLWithPath:).standardizedFileURL.path` gives, without URL's parsing on
    /// the start path of every command (docs/DESIGN-NOTES.md, "The CLI's start"). Links are not followed.
    package static func standardizedPath(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : (CurrentProcess.workingDirectory ?? "/") + "/" + path
        // Over the UTF-8 bytes: a slash is one byte and never part of another character, and this runs
        // several times on every command's start, where Substring comparisons and `joined` cost more than
        // the whole rest of the path handling (docs/DESIGN-NOTES.md, "The CLI's start").
        let bytes = Array(absolute.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: "/") { end += 1 }
            let length = end - start
            if length == 0 || (length == 1 && bytes[start] == UInt8(ascii: ".")) {
                // An empty component (a repeated slash) or ".": nothing.
            } else if length == 2 && bytes[start] == UInt8(ascii: ".") && bytes[start + 1] == UInt8(ascii: ".") {
                while let last = result.popLast(), last != UInt8(ascii: "/") {}
            } else {
                result.append(UInt8(ascii: "/"))
                // A loop, not `append(contentsOf:)`, which runs unspecialized here (a generic lookup per call).
                for index in start..<end { result.append(bytes[index]) }
            }
            start = end + 1
        }
        return result.isEmpty ? "/" : String(decoding: result, as: UTF8.self)
    }

    /// The directory that holds `path`, as `NSString.deletingLastPathComponent` gives it: "/a/b" for
    /// "/a/b/c" and "/a/b/c/", "/" for "/a", "" for a name without a slash.
    package static func parentDirectory(of path: String) -> String {
        var path = Substring(path)
        while path.count > 1 && path.hasSuffix("/") { path = path.dropLast() }
        guard let slash = path.lastIndex(of: "/") else { return "" }
        var parent = path[..<slash]
        while parent.hasSuffix("/") { parent = parent.dropLast() }
        return parent.isEmpty ? "/" : String(parent)
    }

    /// Creates `path` and any missing parents with mode 0700 (set explicitly, so the umask cannot widen it).
    package static func createPrivateDirectory(_ path: String) throws(KeychainError) {
        if let existing = status(path) {
            guard existing.kind == .directory else { throw KeychainError(.io, "\(path) exists and is not a directory") }
            return
        }
        let parent = parentDirectory(of: path)
        if !parent.isEmpty, parent != path, !exists(parent) { try createPrivateDirectory(parent) }
        do {
            try Files.makeDirectory(path, mode: 0o700)
        } catch {
            guard error == .fileExists else { throw io("create directory", path, error) }
        }
    }

    /// Refuses a keychain directory that another user could write — sticky or not: in a sticky directory
    /// such as /tmp another user can still create the keychain's companion files before it does — or that
    /// belongs to another user, or is a symbolic link. Every directory above it must belong to root or to
    /// this user and be writable by no one else, unless it is sticky (then nobody else can rename what is in
    /// it), so the directory cannot be swapped from above.
    package static func requirePrivateDirectory(_ path: String, what: String) throws(KeychainError) {
        guard let info = status(path) else { throw KeychainError(.noSuchKeychain, "\(path) does not exist") }
        let me = CurrentProcess.effectiveUserID
        guard info.kind == .directory else {
            throw KeychainError(.writePermission, "\(what) \(path) is not a directory (a symbolic link?)")
        }
        guard !info.isWritableByOthers else {
            throw KeychainError(
                .writePermission,
                "\(what) \(path) is group- or world-writable (mode \(info.octalPermissions)), sticky or not; keep keychains in a private directory (chmod 700)"
            )
        }
        guard me == 0 || info.owner == me else {
            throw KeychainError(.writePermission, "\(what) \(path) belongs to another user (uid \(info.owner))")
        }
        var ancestor = URL(fileURLWithPath: path).standardizedFileURL
        while ancestor.path != "/" {
            ancestor.deleteLastPathComponent()
            guard let above = FileStatus.of(path: ancestor.path, followingLinks: true) else { continue }
            guard above.owner == 0 || above.owner == me || me == 0 else {
                throw KeychainError(
                    .writePermission,
                    "\(ancestor.path), above \(what) \(path), belongs to another user (uid \(above.owner))")
            }
            guard !above.isWritableByOthers || above.isSticky else {
                throw KeychainError(
                    .writePermission,
                    "\(ancestor.path), above \(what) \(path), is writable by others (mode \(above.octalPermissions)), who could replace it"
                )
            }
        }
    }

    /// Refuses a file that another user could read or write (any group or other permission bit: it holds a
    /// key or the sealed keybag, which a copy lets someone attack offline), that belongs to another user —
    /// or, given `owner`, to anyone but that user (root too must not open a companion someone else made) —
    /// or that is not a regular file.
    package static func requirePrivateFile(_ path: String, what: String, owner: UInt32? = nil) throws(KeychainError) {
        guard let info = status(path) else { throw KeychainError(.noSuchKeychain, "\(path) does not exist") }
        guard info.kind == .regular else {
            throw KeychainError(
                info.kind == .symbolicLink ? .writePermission : .invalidKeychain,
                info.kind == .symbolicLink
                    ? "\(what) \(path) is a symbolic link; Latchkey opens real files only"
                    : "\(what) \(path) is not a regular file")
        }
        let me = CurrentProcess.effectiveUserID
        guard owner.map({ info.owner == $0 }) ?? (me == 0 || info.owner == me) else {
            throw KeychainError(.writePermission, "\(what) \(path) belongs to another user (uid \(info.owner))")
        }
        guard !info.isAccessibleByOthers else {
            let how = info.isWritableByOthers ? "group- or world-writable" : "readable by others"
            throw KeychainError(
                .writePermission, "\(what) \(path) is \(how) (mode \(info.octalPermissions)); run chmod 600 on it")
        }
    }

    /// SQLite's companion files of a database (write-ahead log, shared memory): each one present must be a
    /// private file of this user; each one missing is created empty with mode 0600, so that no one else can
    /// have made it first (an empty log and an empty shared-memory file are what SQLite starts from).
    /// Returns the ones it created, for `removeUnusedCompanions` when the open fails after all.
    @discardableResult
    package static func prepareCompanions(of path: String) throws(KeychainError) -> [String] {
        let owner = status(path)?.owner ?? CurrentProcess.effectiveUserID
        var made: [String] = []
        for companion in [path + "-wal", path + "-shm"] {
            let created: Bool
            do {
                created = try Files.createEmptyIfAbsent(companion)
            } catch {
                removeUnusedCompanions(made)
                throw io("create", companion, error)
            }
            if created {
                made.append(companion)
            } else {
                try requirePrivateFile(companion, what: "the keychain's companion file", owner: owner)
            }
        }
        return made
    }

    /// Removes companion files `prepareCompanions` made that are still empty, so a refused file is left as
    /// it was found.
    package static func removeUnusedCompanions(_ paths: [String]) {
        for path in paths where status(path)?.size == 0 {
            try? Files.remove(path)  // Cleanup of an empty file this process made; left if it cannot go.
        }
    }

    /// Creates a new file with mode 0600 holding `contents`, fails if anything is at `path`, and syncs it.
    package static func createExclusiveFile(_ path: String, contents: Data) throws(KeychainError) {
        do {
            try Files.createExclusive(path, contents: [UInt8](contents))
        } catch {
            if error == .fileExists { throw KeychainError(.duplicateKeychain, "\(path) already exists") }
            throw io("create", path, error)
        }
    }

    /// Reads a whole small regular file (at most `limit` bytes; more is `errSecInvalidKeychain`).
    package static func readSmallFile(_ path: String, limit: Int) throws(KeychainError) -> Data {
        do {
            return Data(try Files.read(path, limit: limit))
        } catch {
            switch error {
            case .tooLarge: throw KeychainError(.invalidKeychain, "\(path) is larger than expected")
            case .notRegularFile: throw KeychainError(.invalidKeychain, "\(path) is not a regular file")
            case .system(let failure): throw io("read", path, failure)
            }
        }
    }

    /// Reads the first `count` bytes of a file (fewer if it is shorter).
    package static func readPrefix(_ path: String, count: Int) throws(KeychainError) -> Data {
        do {
            return Data(try Files.readPrefix(path, count: count))
        } catch {
            throw io("read", path, error)
        }
    }

    /// Gives `source` the name `destination` unless `destination` exists (hard link, then unlink), so a
    /// half-made file never appears under the final name and an existing file is never replaced.
    package static func moveNoReplace(_ source: String, to destination: String) throws(KeychainError) {
        do {
            try Files.link(source, to: destination)
        } catch {
            if error == .fileExists { throw KeychainError(.duplicateKeychain, "\(destination) already exists") }
            throw io("create", destination, error)
        }
        try? Files.remove(source)  // The new name is in place; a temporary name left behind holds nothing new.
    }

    /// Replaces `destination` with `source` atomically (rename).
    package static func replace(_ destination: String, with source: String) throws(KeychainError) {
        do {
            try Files.rename(source, to: destination)
        } catch {
            throw io("rename to", destination, error)
        }
    }

    /// Makes a directory's entries (new names, removed names) durable (best effort).
    package static func syncDirectory(_ path: String) { Files.syncDirectory(path) }

    /// Removes a file; a missing file is not an error.
    package static func removeFile(_ path: String) throws(KeychainError) {
        do {
            try Files.remove(path)
        } catch {
            throw io("remove", path, error)
        }
    }
}
