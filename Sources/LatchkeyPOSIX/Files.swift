import Glibc

/// File and directory calls with exact modes whatever the umask, no-follow opens, no-replace renames and
/// fsync — each retrying `EINTR` and throwing the `errno` of a failure.
package enum Files {
    /// Why a file could not be read whole.
    package enum ReadFailure: Error, Equatable {
        /// Not a regular file (a FIFO, a device, a directory, a symbolic link): never read, never waited on.
        case notRegularFile(FileStatus.Kind)
        /// Larger than the caller's limit; nothing was read.
        case tooLarge(Int64)
        /// A system call failed.
        case system(Errno)
    }

    /// Creates `path` (which must not exist; a symbolic link there is not followed) with `mode` set
    /// explicitly, writes `contents`, and syncs it to disk. On failure nothing is left behind.
    package static func createExclusive(_ path: String, contents: some Collection<UInt8>, mode: UInt32 = 0o600)
        throws(Errno)
    {
        try createExclusive(path, parts: [Array(contents)], mode: mode)
    }

    /// `createExclusive(_:contents:mode:)` of `parts` one after another, without joining them in memory first.
    package static func createExclusive(_ path: String, parts: [[UInt8]], mode: UInt32 = 0o600) throws(Errno) {
        let fd = try retryingInterrupts {
            open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
        }
        do throws(Errno) {
            guard fchmod(fd, mode_t(mode)) == 0 else { throw Errno.current }
            for part in parts { try FileDescriptor(rawValue: fd).writeAll(part) }
            guard fsync(fd) == 0 else { throw Errno.current }
            close(fd)
        } catch {
            close(fd)
            unlink(path)
            throw error
        }
    }

    /// Creates an empty file with `mode` unless something (anything, even a dangling link) is at `path`.
    /// Returns whether it created one.
    package static func createEmptyIfAbsent(_ path: String, mode: UInt32 = 0o600) throws(Errno) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
        if fd < 0 {
            if errno == EEXIST { return false }
            if errno == EINTR { return try createEmptyIfAbsent(path, mode: mode) }
            throw Errno.current
        }
        defer { close(fd) }
        guard fchmod(fd, mode_t(mode)) == 0 else { throw Errno.current }
        return true
    }

    /// Reads a whole regular file of at most `limit` bytes. A FIFO or device is refused without blocking
    /// (the open is non-blocking and checked with `fstat` before any read); a symbolic link is not followed.
    package static func read(_ path: String, limit: Int) throws(ReadFailure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ELOOP { throw .notRegularFile(.symbolicLink) }
            throw .system(Errno.current)
        }
        defer { close(fd) }
        guard let status = FileStatus.of(descriptor: FileDescriptor(rawValue: fd)) else { throw .system(Errno.current) }
        guard status.kind == .regular else { throw .notRegularFile(status.kind) }
        guard status.size <= Int64(limit) else { throw .tooLarge(status.size) }
        // Room for what the file says it holds and one byte more (to see it grew); more only as bytes come
        // (a /proc file says 0), never the whole limit up front.
        var bytes = [UInt8](repeating: 0, count: min(limit, max(Int(status.size), 4_096)) + 1)
        var total = 0
        while total <= limit {
            if total == bytes.count {
                bytes.append(contentsOf: repeatElement(0, count: min(bytes.count, limit + 1 - bytes.count)))
            }
            let room = bytes.count - total
            let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + total, room) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system(Errno.current)
            }
            if count == 0 { break }
            total += count
        }
        guard total <= limit else { throw .tooLarge(Int64(total)) }
        return Array(bytes.prefix(total))
    }

    /// The first `count` bytes of a file (fewer when it is shorter); symbolic links are not followed.
    package static func readPrefix(_ path: String, count: Int) throws(Errno) -> [UInt8] {
        let fd = try retryingInterrupts { open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        var total = 0
        while total < count {
            let got = try retryingInterrupts {
                bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + total, count - total) }
            }
            if got == 0 { break }
            total += got
        }
        return Array(bytes.prefix(total))
    }

    /// Hands the file's contents to `body` in chunks of up to 64 KiB, in order (symbolic links are followed:
    /// `/proc/<pid>/exe` is one). Throws on the first failed open or read.
    package static func forEachChunk(_ path: String, _ body: (UnsafeRawBufferPointer) -> Void) throws(Errno) {
        let fd = try retryingInterrupts { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = try retryingInterrupts {
                buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            }
            if count == 0 { return }
            buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
    }

    /// Opens `path` for writing from its start, emptied, created with `mode` when absent (close-on-exec); the
    /// caller closes the descriptor.
    package static func openTruncated(_ path: String, mode: UInt32 = 0o600) throws(Errno) -> FileDescriptor {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode_t(mode))
        guard descriptor >= 0 else { throw Errno.current }
        return FileDescriptor(rawValue: descriptor)
    }

    /// Opens `path` for appending (every write goes to the end), created with `mode` when absent; a symbolic
    /// link there is not followed. Close-on-exec; the caller closes the descriptor.
    package static func openForAppending(_ path: String, mode: UInt32 = 0o600) throws(Errno) -> FileDescriptor {
        let descriptor = try retryingInterrupts {
            open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
        }
        guard fchmod(descriptor, mode_t(mode)) == 0 else {
            let error = Errno.current
            close(descriptor)
            throw error
        }
        return FileDescriptor(rawValue: descriptor)
    }

    /// Cuts the file at `path` to `length` bytes.
    package static func truncate(_ path: String, to length: Int) throws(Errno) {
        _ = try retryingInterrupts { Glibc.truncate(path, off_t(length)) }
    }

    /// Gives `source` a second name, failing with `EEXIST` when `destination` exists (never replacing it).
    package static func link(_ source: String, to destination: String) throws(Errno) {
        guard Glibc.link(source, destination) == 0 else { throw Errno.current }
    }

    /// Renames atomically, replacing `destination`.
    package static func rename(_ source: String, to destination: String) throws(Errno) {
        guard Glibc.rename(source, destination) == 0 else { throw Errno.current }
    }

    /// Removes a file; a missing one is not an error.
    package static func remove(_ path: String) throws(Errno) {
        guard unlink(path) == 0 || errno == ENOENT else { throw Errno.current }
    }

    /// Removes an empty directory; a missing one is not an error.
    package static func removeDirectory(_ path: String) throws(Errno) {
        guard rmdir(path) == 0 || errno == ENOENT else { throw Errno.current }
    }

    /// Creates a directory with `mode` set explicitly (the umask cannot widen it); `EEXIST` when present.
    package static func makeDirectory(_ path: String, mode: UInt32) throws(Errno) {
        guard mkdir(path, mode_t(mode)) == 0 else { throw Errno.current }
        guard chmod(path, mode_t(mode)) == 0 else { throw Errno.current }
    }

    /// Sets a file's permission bits.
    package static func setPermissions(_ path: String, _ mode: UInt32) throws(Errno) {
        guard chmod(path, mode_t(mode)) == 0 else { throw Errno.current }
    }

    /// Makes a directory's entries (new names, removed names) durable. Best effort: some file systems do
    /// not let a directory be opened or synced, and the files themselves were synced already.
    package static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// Where a symbolic link points (`readlink`), or nil.
    package static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The names in a directory (without "." and ".."), or nil when it cannot be read.
    package static func entries(of directory: String) -> [String]? {
        guard let handle = opendir(directory) else { return nil }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

/// An exclusive `flock` on a file, held until the value is released (or the process ends, whatever way it
/// ends): one process at a time may hold it.
package final class FileLock: Sendable {
    private let descriptor: FileDescriptor

    private init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    deinit { descriptor.close() }

    /// Takes the lock on `path` (created 0600 when missing; a symbolic link is refused) and writes
    /// `contents` into the file for whoever finds it held. Nil when another process holds it.
    package static func acquire(_ path: String, contents: String) throws(Errno) -> FileLock? {
        let fd = try retryingInterrupts { open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let failure = Errno.current
            close(fd)
            if failure == .locked { return nil }
            throw failure
        }
        do throws(Errno) {
            // Written over from the start (a new descriptor's offset), then cut to its length: the last holder's
            // line is usually as long, so nothing is freed and allocated again on disk (a cut to zero first cost
            // an agent's start 0.3 ms).
            let bytes = Array(contents.utf8)
            try FileDescriptor(rawValue: fd).writeAll(bytes)
            guard ftruncate(fd, off_t(bytes.count)) == 0 else { throw Errno.current }
        } catch {
            close(fd)
            throw error
        }
        return FileLock(descriptor: FileDescriptor(rawValue: fd))
    }
}
