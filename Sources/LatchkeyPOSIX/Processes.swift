import CPOSIX
import Glibc

/// What `/proc` tells about another process, and the hardening a process applies to itself.
package enum Processes {
    /// The process's start time in clock ticks after boot (`/proc/<pid>/stat`, field 22). A pid that is
    /// reused by a new process gets a new start time, so (pid, start time) names one process for good.
    package static func startTime(of pid: Int32) -> UInt64? {
        guard let bytes = try? Files.read("/proc/\(pid)/stat", limit: 4_096) else { return nil }  // Gone: no time.
        return startTime(statLine: bytes[...])
    }

    /// The start time (field 22) of a `/proc/<pid>/stat` line.
    package static func startTime(statLine bytes: ArraySlice<UInt8>) -> UInt64? {
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

    /// Makes this process's real and saved groups its effective group when they differ. pam_latchkey starts
    /// the `latchkey` tool with another real group, so that the kernel leaves it not dumpable from its exec
    /// (an exec whose effective group is not the real one changes privilege); the tool takes its own group
    /// back first thing. That keeps it not dumpable: only a change of an effective id touches the flag.
    /// Throws the error of `setresgid` (a process may always take its effective group).
    package static func adoptEffectiveGroup() throws(Errno) {
        guard latchkey_adopt_effective_group() == 0 else { throw Errno.current }
    }

    /// The Yama LSM's `kernel.yama.ptrace_scope` (0: a process may trace any process of its user; 1: only
    /// its descendants; 2: only with CAP_SYS_PTRACE; 3: none), read from `file`; nil when Yama is not enabled
    /// or the value cannot be read.
    package static func ptraceScope(file: String = "/proc/sys/kernel/yama/ptrace_scope") -> Int? {
        guard let bytes = try? Files.read(file, limit: 64) else { return nil }  // No Yama: no setting.
        return Int(String(decoding: bytes.filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self))
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

    /// Sets the environment variable `name` to `value` unless it is set already (`setenv(…, 0)`). glibc's
    /// environment is not thread-safe: call it once, early (a `static let` initializer).
    package static func setDefault(_ name: String, _ value: String) {
        setenv(name, value, 0)
    }
}
