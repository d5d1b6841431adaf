import CPOSIX
import Glibc

/// The Unix sockets of this network namespace as the kernel's socket diagnostics report them
/// (`NETLINK_SOCK_DIAG`): which socket each is connected to, and the address each is bound to — a socket a
/// listener accepted carries the listener's address, so "connected to the bus" is "its peer has the bus's
/// address".
package struct SocketTable: Sendable {
    /// One socket: the inode of its peer (0: none) and its address (empty: none; an abstract name starts
    /// with a zero byte).
    package struct Entry: Sendable, Equatable {
        package let peer: UInt32
        package let address: [UInt8]
    }

    /// The sockets, by inode.
    package let entries: [UInt32: Entry]

    /// Reads the table now.
    package static func read() throws(Errno) -> SocketTable {
        var capacity = 1_024
        while true {
            var raw = [latchkey_unix_socket](repeating: latchkey_unix_socket(), count: capacity)
            let count = raw.withUnsafeMutableBufferPointer { latchkey_unix_sockets($0.baseAddress, $0.count) }
            guard count >= 0 else { throw Errno.current }
            if count > capacity {
                capacity = Int(count) + 256  // Sockets may come while it reads again.
                continue
            }
            var entries: [UInt32: Entry] = [:]
            entries.reserveCapacity(Int(count))
            for socket in raw.prefix(Int(count)) {
                let address = withUnsafeBytes(of: socket.name) { Array($0.prefix(Int(socket.name_length))) }
                entries[socket.inode] = Entry(peer: socket.peer, address: address)
            }
            return SocketTable(entries: entries)
        }
    }

    /// The inode of the socket that socket `inode` is connected to (the kernel's exact query for one socket);
    /// nil when it is not connected. Throws `ENOENT` when no socket of this network namespace has that inode.
    package static func peer(of inode: UInt32) throws(Errno) -> UInt32? {
        var peer: UInt32 = 0
        guard latchkey_unix_socket_peer(inode, &peer) == 0 else { throw Errno.current }
        return peer == 0 ? nil : peer
    }

    /// The inode of the socket descriptor `fd` is, for `peer(of:)`; nil when it cannot be read.
    package static func inode(of fd: FileDescriptor) -> UInt32? {
        FileStatus.of(descriptor: fd).map { UInt32(truncatingIfNeeded: $0.inode) }
    }

    /// The address of the socket `inode` is connected to; nil when it is not connected or not listed.
    package func peerAddress(of inode: UInt32) -> [UInt8]? {
        guard let peer = entries[inode]?.peer, peer != 0 else { return nil }
        return entries[peer]?.address
    }
}

extension ProcessHandle {
    /// A socket the process holds open: its inode, and whether the descriptor closes at `exec`.
    package struct HeldSocket: Sendable, Equatable {
        package let inode: UInt32
        package let closesOnExec: Bool
    }

    /// The sockets the process holds (`fd/` and `fdinfo/` through the directory opened with the handle); nil
    /// when they cannot be listed (it ended, or this process may not look).
    package var heldSockets: [HeldSocket]? {
        guard let names = descriptorNumbers() else { return nil }
        var sockets: [HeldSocket] = []
        for number in names {
            guard let target = linkBytes("fd/\(number)"), target.starts(with: Array("socket:[".utf8)),
                target.last == UInt8(ascii: "]"),
                let inode = UInt32(String(decoding: target.dropFirst(8).dropLast(), as: UTF8.self))
            else { continue }
            // An fd that closed since the listing has no fdinfo: it is not held any more.
            guard let flags = descriptorFlags(number) else { continue }
            sockets.append(HeldSocket(inode: inode, closesOnExec: flags & UInt32(O_CLOEXEC) != 0))
        }
        return hasExited ? nil : sockets
    }
}
