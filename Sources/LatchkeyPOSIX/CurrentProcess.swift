import Glibc

/// The identity this process acts with.
package enum CurrentProcess {
    /// `geteuid()`.
    package static var effectiveUserID: UInt32 { geteuid() }
    /// The real user id (the user who started the process).
    package static var userID: UInt32 { getuid() }
    /// `getpid()`.
    package static var id: Int32 { getpid() }
    /// The memory page size (`sysconf(_SC_PAGESIZE)`), the unit `mlock` works in.
    /// The path of the executable this process runs (`/proc/self/exe`); nil when it cannot be read.
    package static var executablePath: String? { Processes.executablePath(of: getpid()) }
    package static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// The home directory the user database gives the effective user (`getpwuid_r`), for when `HOME` is not
    /// set; "/" when the user has no entry (as Foundation's `NSHomeDirectory` answers then).
    package static var homeDirectory: String {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        let status = getpwuid_r(geteuid(), &entry, &buffer, buffer.count, &found)
        guard status == 0, found != nil, let directory = entry.pw_dir else { return "/" }
        let path = String(cString: directory)
        return path.isEmpty ? "/" : path
    }

    /// Ends the process with `status`, running exit handlers and flushing C's buffered streams (`exit`).
    package static func exit(_ status: Int32) -> Never { Glibc.exit(status) }

    /// The environment, read from `environ` now: each `NAME=value` entry once (the first of a repeated name,
    /// as `getenv` answers), entries without `=` or not UTF-8 skipped. What `ProcessInfo.processInfo.environment`
    /// gives, at a fraction of its cost at start (docs/DESIGN-NOTES.md, "The CLI's start").
    package static var environment: [String: String] {
        var entry = environ
        var count = 0
        while entry[count] != nil { count += 1 }
        var variables: [String: String] = [:]
        variables.reserveCapacity(count)
        while let pointer = entry.pointee {
            var length = 0
            while pointer[length] != 0 { length += 1 }
            let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
            if let equals = bytes.firstIndex(of: UInt8(ascii: "=")),
                let name = String(validating: bytes[..<equals], as: UTF8.self),
                let value = String(validating: bytes[(equals + 1)...], as: UTF8.self), variables[name] == nil
            {
                variables[name] = value
            }
            entry += 1
        }
        return variables
    }

    /// The working directory (`getcwd`); nil when it cannot be read (removed, or beyond `PATH_MAX`).
    package static var workingDirectory: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
