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
    package static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
}
