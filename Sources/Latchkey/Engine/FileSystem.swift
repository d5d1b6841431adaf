import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file-system calls of the engine (POSIX through Glibc): creating files and directories with exact
/// modes whatever the umask, refusing unsafe permissions, atomic no-replace renames, and fsync.
enum FileSystem {
    /// What `lstat` says about a path.
    struct Status {
        let mode: mode_t
        let owner: uid_t
        let size: Int64
        var isRegularFile: Bool { mode & S_IFMT == S_IFREG }
        var isDirectory: Bool { mode & S_IFMT == S_IFDIR }
        var isSymbolicLink: Bool { mode & S_IFMT == S_IFLNK }
        var permissions: mode_t { mode & 0o7777 }
    }

    static func status(_ path: String) -> Status? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Status(mode: info.st_mode, owner: info.st_uid, size: Int64(info.st_size))
    }

    static func exists(_ path: String) -> Bool { status(path) != nil }

    static func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    /// Creates `path` and any missing parents with mode 0700 (set explicitly, so the umask cannot widen it).
    static func createPrivateDirectory(_ path: String) throws(KeychainError) {
        if let existing = status(path) {
            guard existing.isDirectory else {
                throw KeychainError(.io, "\(path) exists and is not a directory")
            }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path, !exists(parent) { try createPrivateDirectory(parent) }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw KeychainError(.io, "cannot create directory \(path): \(errnoText())")
        }
        if chmod(path, 0o700) != 0 {
            throw KeychainError(.io, "cannot set mode 0700 on \(path): \(errnoText())")
        }
    }

    /// Refuses a file or directory others could write (or replace), or that belongs to another user.
    static func requireSafePermissions(_ path: String, what: String) throws(KeychainError) {
        guard let info = status(path) else { throw KeychainError(.noSuchKeychain, "\(path) does not exist") }
        if info.isSymbolicLink {
            throw KeychainError(.writePermission, "\(what) \(path) is a symbolic link; Latchkey opens real files only")
        }
        let sticky = info.permissions & mode_t(S_ISVTX) != 0
        if info.permissions & 0o022 != 0 && !(info.isDirectory && sticky) {
            let mode = String(info.permissions & 0o777, radix: 8)
            throw KeychainError(
                .writePermission,
                "\(what) \(path) is group- or world-writable (mode 0\(mode)); run chmod go-w on it")
        }
        let me = geteuid()
        if me != 0 && info.owner != me && !(info.isDirectory && sticky) {
            throw KeychainError(.writePermission, "\(what) \(path) belongs to another user (uid \(info.owner))")
        }
    }

    /// Creates a new file with mode 0600 holding `contents`, fails if it exists, and syncs it to disk.
    static func createExclusiveFile(_ path: String, contents: Data) throws(KeychainError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { throw KeychainError(.duplicateKeychain, "\(path) already exists") }
            throw KeychainError(.io, "cannot create \(path): \(errnoText())")
        }
        var failure: KeychainError?
        if fchmod(fd, 0o600) != 0 { failure = KeychainError(.io, "cannot set mode 0600 on \(path): \(errnoText())") }
        if failure == nil {
            failure = contents.withUnsafeBytes { bytes -> KeychainError? in
                var offset = 0
                while offset < bytes.count {
                    let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return KeychainError(errno == ENOSPC ? .diskFull : .io, "cannot write \(path): \(errnoText())")
                    }
                    offset += written
                }
                return nil
            }
        }
        if failure == nil && fsync(fd) != 0 { failure = KeychainError(.io, "cannot sync \(path): \(errnoText())") }
        close(fd)
        if let failure {
            unlink(path)
            throw failure
        }
    }

    /// Reads a whole small file (at most `limit` bytes).
    static func readSmallFile(_ path: String, limit: Int) throws(KeychainError) -> Data {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw KeychainError(.io, "cannot open \(path): \(errnoText())") }
        defer { close(fd) }
        var buffer = Data(count: limit + 1)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, limit + 1) }
        guard count >= 0 else { throw KeychainError(.io, "cannot read \(path): \(errnoText())") }
        guard count <= limit else { throw KeychainError(.invalidKeychain, "\(path) is larger than expected") }
        return buffer.prefix(count)
    }

    /// Reads the first `count` bytes of a file (fewer if it is shorter).
    static func readPrefix(_ path: String, count: Int) throws(KeychainError) -> Data {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw KeychainError(.io, "cannot open \(path): \(errnoText())") }
        defer { close(fd) }
        var buffer = Data(count: count)
        var total = 0
        while total < count {
            let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, count - total) }
            if got < 0 {
                if errno == EINTR { continue }
                throw KeychainError(.io, "cannot read \(path): \(errnoText())")
            }
            if got == 0 { break }
            total += got
        }
        return buffer.prefix(total)
    }

    /// Gives `source` the name `destination` unless `destination` exists (hard link, then unlink), so a
    /// half-made file never appears under the final name and an existing keychain is never replaced.
    static func moveNoReplace(_ source: String, to destination: String) throws(KeychainError) {
        if link(source, destination) != 0 {
            let code = errno
            if code == EEXIST { throw KeychainError(.duplicateKeychain, "\(destination) already exists") }
            throw KeychainError(.io, "cannot create \(destination): \(errnoText(code))")
        }
        unlink(source)
    }

    /// Replaces `destination` with `source` atomically (rename).
    static func replace(_ destination: String, with source: String) throws(KeychainError) {
        if rename(source, destination) != 0 {
            throw KeychainError(.io, "cannot rename to \(destination): \(errnoText())")
        }
    }

    /// Makes a directory's entries (new names, removed names) durable.
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }  // Best effort: some file systems do not allow opening directories.
        _ = fsync(fd)  // Result ignored for the same reason; the file contents themselves were synced.
        close(fd)
    }

    /// Removes a file; a missing file is not an error.
    static func removeFile(_ path: String) throws(KeychainError) {
        if unlink(path) != 0 && errno != ENOENT {
            throw KeychainError(.io, "cannot remove \(path): \(errnoText())")
        }
    }
}
