import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What tests of several targets share: the scripts in Tests/Tools and the unprivileged user they run as.
public enum TestTools {
    /// Tests/Tools: the Python helpers (fake pinentry, fake logind, the race scripts...).
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Tools").path
    /// The `nobody` user's uid and gid (nil on a system without one).
    public static let nobody: (uid: uid_t, gid: gid_t)? = getpwnam("nobody").map {
        ($0.pointee.pw_uid, $0.pointee.pw_gid)
    }
}
