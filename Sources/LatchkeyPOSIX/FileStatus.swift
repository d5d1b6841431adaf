import Glibc

/// What `lstat`, `stat` or `fstat` says about a file: its type, permissions, owner, size and identity.
package struct FileStatus: Equatable, Hashable, Sendable {
    /// The type of file.
    package enum Kind: Sendable {
        case regular, directory, symbolicLink, socket, fifo, other
    }

    /// The type of file.
    package let kind: Kind
    /// The permission bits, with set-user-id, set-group-id and sticky (`mode & 07777`).
    package let permissions: UInt32
    /// The owner's user id.
    package let owner: UInt32
    /// The size in bytes.
    package let size: Int64
    /// The device and inode: the file's identity.
    package let device: UInt64, inode: UInt64
    /// The inode's change time, which no program can set: it moves whenever the file is written or replaced.
    package let changeSeconds: Int64, changeNanoseconds: Int64
    /// How many directory entries name the file: 0 for one that was deleted while open or running.
    package let linkCount: UInt64

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFSOCK: kind = .socket
        case S_IFIFO: kind = .fifo
        default: kind = .other
        }
        permissions = UInt32(info.st_mode & 0o7777)
        owner = info.st_uid
        size = Int64(info.st_size)
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        changeSeconds = Int64(info.st_ctim.tv_sec)
        changeNanoseconds = Int64(info.st_ctim.tv_nsec)
        linkCount = UInt64(info.st_nlink)
    }

    /// The status of `path` itself (`lstat`: a symbolic link is reported as one), or, with
    /// `followingLinks`, of what it points to (`stat`). Nil when the path does not exist or cannot be read.
    package static func of(path: String, followingLinks: Bool = false) -> FileStatus? {
        var info = stat()
        let result = followingLinks ? stat(path, &info) : lstat(path, &info)
        return result == 0 ? FileStatus(info) : nil
    }

    /// The status of an open descriptor (`fstat`).
    package static func of(descriptor: FileDescriptor) -> FileStatus? {
        var info = stat()
        return fstat(descriptor.rawValue, &info) == 0 ? FileStatus(info) : nil
    }

    /// Whether the sticky bit is set (in a directory: only an entry's owner may rename or remove it).
    package var isSticky: Bool { permissions & UInt32(S_ISVTX) != 0 }
    /// Whether group or others may write it.
    package var isWritableByOthers: Bool { permissions & 0o022 != 0 }
    /// Whether group or others have any permission on it.
    package var isAccessibleByOthers: Bool { permissions & 0o077 != 0 }
    /// The permission bits as `0755`-style text (`01777` with the sticky bit).
    package var octalPermissions: String { "0" + String(permissions & 0o7777, radix: 8) }
}
