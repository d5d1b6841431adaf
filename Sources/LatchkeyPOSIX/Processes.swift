import CPOSIX
import Glibc

/// What `/proc` tells about another process, and the hardening a process applies to itself.
package enum Processes {
    /// The process's start time in clock ticks after boot (`/proc/<pid>/stat`, field 22). A pid that is
    /// reused by a new process gets a new start time, so (pid, start time) names one process for good.
    package static func startTime(of pid: Int32) -> UInt64? {
        guard let bytes = try? Files.read("/proc/\(pid)/stat", limit: 4_096) else { return nil }  // Gone: no time.
        // The command name (field 2) is in parentheses and may hold spaces or parentheses: fields after it
        // are counted from the last ')'.
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3 (state); the start time is field 22.
        guard fields.count > 19 else { return nil }
        return UInt64(String(decoding: fields[19], as: UTF8.self))
    }

    /// The path of the executable a process runs (`/proc/<pid>/exe`), or nil when it cannot be read (the
    /// process ended, or made itself not dumpable and this process may not look).
    package static func executablePath(of pid: Int32) -> String? { Files.linkTarget("/proc/\(pid)/exe") }

    /// Whether a process with this pid exists.
    package static func exists(_ pid: Int32) -> Bool { kill(pid, 0) == 0 || errno == EPERM }

    /// No core files for this process (`RLIMIT_CORE` 0, soft and hard): a crash cannot write a passphrase
    /// or a key to disk. Returns whether the limit took.
    @discardableResult
    package static func disableCoreDumps() -> Bool {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        return setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none) == 0
    }

    /// Marks this process not dumpable (`PR_SET_DUMPABLE` 0): no core file, and another process of the same
    /// user can no longer ptrace it or read its memory or its `/proc` links (only a privileged one can).
    package static func setNotDumpable() throws(Errno) {
        guard latchkey_set_not_dumpable() == 0 else { throw Errno.current }
    }

    /// Whether this process is dumpable.
    package static var isDumpable: Bool { latchkey_dumpable() == 1 }
}

/// This process's environment, as far as secrets in it are concerned.
package enum Environment {
    /// Removes `name` from the environment after overwriting its value in place with zeros, so the bytes are
    /// gone from this process's memory (and from `/proc/<pid>/environ`), not only from `getenv`'s view.
    /// Call it before any other thread reads the environment: glibc's environment is not thread-safe.
    package static func scrub(_ name: String) {
        let prefix = Array((name + "=").utf8)
        var index = 0
        while let entry = environ[index] {
            if memcmp(entry, prefix, prefix.count) == 0 {
                memset(entry + prefix.count, 0, strlen(entry + prefix.count))
            }
            index += 1
        }
        unsetenv(name)
    }
}

/// A handle on one process (a pidfd): it never comes to name a later process that reuses the pid. It also
/// holds the process's `/proc/<pid>` directory, opened with it: a look at the process's files through it
/// needs no path lookup of `/proc/<pid>`, and fails once that process is gone instead of reaching another.
package final class ProcessHandle: Sendable {
    private let descriptor: Int32
    /// `/proc/<pid>` (`O_PATH`), or -1 when it could not be opened.
    private let directory: Int32
    private let pid: Int32

    /// A handle on the process now running as `pid`; nil where the kernel has no pidfds or the process is gone.
    package init?(pid: Int32) {
        let fd = latchkey_pidfd_open(pid)
        guard fd >= 0 else { return nil }
        descriptor = fd
        self.pid = pid
        directory = latchkey_open_directory_path("/proc/\(pid)")
    }

    deinit {
        Descriptors.close(descriptor)
        if directory >= 0 { Descriptors.close(directory) }
    }

    /// Whether the process has exited (one `poll`, no `/proc` read). A handle that cannot be polled counts
    /// as exited.
    package var hasExited: Bool { latchkey_pidfd_exited(descriptor) != 0 }

    /// The status of the file the process runs now (`/proc/<pid>/exe`, followed), through the directory
    /// opened with the handle (by path when it could not be opened); nil when it cannot be looked at (the
    /// process ended, or is not dumpable).
    package var executableStatus: FileStatus? {
        guard directory >= 0 else { return FileStatus.of(path: "/proc/\(pid)/exe", followingLinks: true) }
        var info = stat()
        return fstatat(directory, "exe", &info, 0) == 0 ? FileStatus(info) : nil
    }
}
