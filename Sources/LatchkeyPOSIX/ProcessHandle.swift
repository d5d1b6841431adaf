import CPOSIX
import Glibc

/// A handle on one process (a pidfd): it never comes to name a later process that reuses the pid. It also
/// holds the process's `/proc/<pid>` directory, opened while the pidfd showed the process alive: a look at the
/// process's files through it needs no path lookup of `/proc/<pid>`, and fails once that process is gone
/// instead of reaching another.
package final class ProcessHandle: Sendable {
    private let descriptor: FileDescriptor
    /// `/proc/<pid>` (`O_PATH`), or -1 when it could not be opened.
    private let directory: Int32
    /// The process id, in this process's pid namespace.
    package let pid: Int32

    /// A handle on the process now running as `pid`; nil where the kernel has no pidfds or the process is gone.
    package init?(pid: Int32) {
        let fd = latchkey_pidfd_open(pid)
        guard fd >= 0 else { return nil }
        descriptor = FileDescriptor(rawValue: fd)
        self.pid = pid
        directory = latchkey_open_directory_path("/proc/\(pid)")
    }

    /// Takes over `pidfd` (from `SO_PEERPIDFD`): the handle closes it. Nil (and the descriptor closed) when
    /// the process has exited already or is not visible in this process's pid namespace.
    package init?(adopting pidfd: FileDescriptor) {
        guard let pid = Self.pid(ofPidfd: pidfd), pid > 0 else {
            pidfd.close()
            return nil
        }
        descriptor = pidfd
        self.pid = pid
        directory = latchkey_open_directory_path("/proc/\(pid)")
        // The directory was opened by pid: it is this process's only if the process was still alive after.
        if latchkey_pidfd_exited(pidfd.rawValue) != 0 { return nil }
    }

    deinit {
        descriptor.close()
        if directory >= 0 { FileDescriptor(rawValue: directory).close() }
    }

    /// The pid a pidfd stands for, from its `fdinfo` (`Pid:`): -1 once the process has exited, 0 when it is
    /// not in this process's pid namespace; nil when it cannot be read.
    private static func pid(ofPidfd pidfd: FileDescriptor) -> Int32? {
        // No fdinfo: no pid.
        guard let bytes = try? Files.read("/proc/self/fdinfo/\(pidfd.rawValue)", limit: 4_096) else { return nil }
        for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("Pid:".utf8)) {
            let value = line.dropFirst(4).filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
            return Int32(String(decoding: value, as: UTF8.self))
        }
        return nil
    }

    /// Whether the process has exited (one `poll`, no `/proc` read). A handle that cannot be polled counts
    /// as exited.
    package var hasExited: Bool { latchkey_pidfd_exited(descriptor.rawValue) != 0 }

    /// The status of the file the process runs now (`/proc/<pid>/exe`, followed), through the directory
    /// opened with the handle (by path when it could not be opened); nil when it cannot be looked at (the
    /// process ended, or is not dumpable).
    package var executableStatus: FileStatus? {
        guard directory >= 0 else { return FileStatus.of(path: "/proc/\(pid)/exe", followingLinks: true) }
        var info = stat()
        return fstatat(directory, "exe", &info, 0) == 0 ? FileStatus(info) : nil
    }

    /// The path of the executable the process runs, byte for byte as the kernel gives it (`readlink` of
    /// `exe` through the directory); nil when it cannot be read.
    package var executablePathBytes: [UInt8]? { linkBytes("exe") }

    /// The target of a link in the process's directory (`exe`, `root`, `fd/3`), exactly as the kernel has it.
    package func linkBytes(_ name: String) -> [UInt8]? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count =
            directory >= 0
            ? readlinkat(directory, name, &buffer, buffer.count - 1)
            : readlink("/proc/\(pid)/\(name)", &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return buffer.prefix(count).map { UInt8(bitPattern: $0) }
    }

    /// The numbers of the descriptors the process has open (`fd/`); nil when they cannot be listed.
    func descriptorNumbers() -> [Int32]? {
        let fd = openRelative("fd", O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { return nil }
        guard let listing = fdopendir(fd) else {
            FileDescriptor(rawValue: fd).close()
            return nil
        }
        defer { closedir(listing) }
        var numbers: [Int32] = []
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let number = Int32(name) { numbers.append(number) }
        }
        return numbers
    }

    /// The open flags of descriptor `number` (`fdinfo/<n>`, `flags:` in octal, `O_CLOEXEC` among them); nil
    /// when it is not open (any more) or cannot be read.
    func descriptorFlags(_ number: Int32) -> UInt32? {
        guard let info = readSmall("fdinfo/\(number)", limit: 1_024) else { return nil }
        for line in info.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("flags:".utf8)) {
            let digits = line.dropFirst(6).filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
            return UInt32(String(decoding: digits, as: UTF8.self), radix: 8)
        }
        return nil
    }

    /// Opens a file by its path relative to the process's directory (by `/proc/<pid>/…` when the directory
    /// could not be opened); -1 when it cannot be.
    private func openRelative(_ relative: String, _ flags: Int32) -> Int32 {
        directory >= 0
            ? openat(directory, relative, flags | O_CLOEXEC) : open("/proc/\(pid)/\(relative)", flags | O_CLOEXEC)
    }

    /// One read of at most `limit` bytes of a `/proc` file of the process (they are made whole at each read).
    private func readSmall(_ relative: String, limit: Int) -> ArraySlice<UInt8>? {
        let fd = openRelative(relative, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { FileDescriptor(rawValue: fd).close() }
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return buffer[0..<count]
    }

    /// Up to `limit` bytes of a file as the process sees it, by a path relative to its directory
    /// (`root/.flatpak-info`: through its own root); nil when it cannot be opened or is not a regular file.
    package func readFile(_ relative: String, limit: Int) -> [UInt8]? {
        let fd = openRelative(relative, O_RDONLY | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { FileDescriptor(rawValue: fd).close() }
        guard let status = FileStatus.of(descriptor: FileDescriptor(rawValue: fd)), status.kind == .regular,
            status.size <= Int64(limit)
        else {
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.size) + 1)
        var total = 0
        while total < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + total, $0.count - total) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            total += count
        }
        return total <= limit ? Array(bytes.prefix(total)) : nil
    }

    /// The process's state letter (`stat`, field 3): `R`, `S`, `D`, `T` (stopped), `t` (traced), `Z`…; nil
    /// when it cannot be read.
    package var state: Character? {
        guard let line = statLine(), let close = line.lastIndex(of: UInt8(ascii: ")")), close + 2 < line.endIndex else {
            return nil
        }
        return Character(Unicode.Scalar(line[close + 2]))
    }

    private func statLine() -> ArraySlice<UInt8>? { readSmall("stat", limit: 4_096) }

    /// The process's group and session (`stat`, fields 5 and 6); nil when they cannot be read.
    package var groupAndSession: (group: Int32, session: Int32)? {
        guard let line = statLine(), let close = line.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = line[(close + 1)...].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3 (state): the group is field 5, the session field 6.
        guard fields.count > 3, let group = Int32(String(decoding: fields[2], as: UTF8.self)),
            let session = Int32(String(decoding: fields[3], as: UTF8.self))
        else { return nil }
        return (group, session)
    }

    /// The pids of the children its main thread started (`task/<pid>/children`); empty when there are none
    /// or they cannot be read.
    package var children: [Int32] {
        guard let bytes = readSmall("task/\(pid)/children", limit: 65_536) else { return [] }
        return bytes.split(separator: UInt8(ascii: " ")).compactMap { Int32(String(decoding: $0, as: UTF8.self)) }
    }

    /// The process's start time in clock ticks after boot (`stat`, field 22), read through the directory.
    package var startTime: UInt64? { statLine().flatMap(Processes.startTime(statLine:)) }

    /// The namespace of `kind` the process is in: from the pidfd (Linux 6.11), else through the directory's
    /// `ns/` links; nil when neither can be read (the process ended, or this process may not look).
    package func namespace(_ kind: Namespace.Kind) -> Namespace? {
        let raw = latchkey_pidfd_namespace(descriptor.rawValue, kind.raw)
        if raw >= 0 {
            let fd = FileDescriptor(rawValue: raw)
            defer { fd.close() }
            return FileStatus.of(descriptor: fd).map(Namespace.init)
        }
        guard directory >= 0 else { return nil }
        var info = stat()
        guard fstatat(directory, "ns/\(kind.link)", &info, 0) == 0, !hasExited else { return nil }
        return Namespace(FileStatus(info))
    }
}

/// A Linux namespace, as the kernel names it: the device and inode of its `nsfs` file.
package struct Namespace: Hashable, Sendable {
    /// The namespaces a process may be in that decide who it is.
    package enum Kind: CaseIterable, Sendable {
        case user, pid, mount

        /// The name of its link in `/proc/<pid>/ns/`.
        package var link: String {
            switch self {
            case .user: "user"
            case .pid: "pid"
            case .mount: "mnt"
            }
        }

        var raw: latchkey_namespace {
            switch self {
            case .user: LATCHKEY_NAMESPACE_USER
            case .pid: LATCHKEY_NAMESPACE_PID
            case .mount: LATCHKEY_NAMESPACE_MOUNT
            }
        }
    }

    /// The nsfs file's device and inode.
    package let device: UInt64, inode: UInt64

    init(_ status: FileStatus) {
        device = status.device
        inode = status.inode
    }

    /// The namespace of `kind` this process is in (`/proc/self/ns/…`); nil when it cannot be read.
    package static func current(_ kind: Kind) -> Namespace? {
        FileStatus.of(path: "/proc/self/ns/\(kind.link)", followingLinks: true).map(Namespace.init)
    }
}
