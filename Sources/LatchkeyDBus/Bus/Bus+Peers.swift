import CSystemd
package import LatchkeyPOSIX

/// Who is on the bus: what the daemon recorded of each connection, and the bus's names.
extension Bus {
    /// What the bus daemon recorded of a connection when it connected (`GetConnectionCredentials`): its
    /// user, its process, and the security label its LSM gave it (an AppArmor profile such as
    /// `snap.app.app (enforce)`, an SELinux context), when the daemon reports one.
    package struct PeerCredentials: Sendable, Equatable {
        /// The user id.
        package let uid: UInt32
        /// The process id (in the daemon's pid namespace).
        package let pid: Int32
        /// The LSM label's bytes (without a terminating zero), or nil when the daemon reports none.
        package let securityLabel: [UInt8]?

        /// Credentials as given.
        package init(uid: UInt32, pid: Int32, securityLabel: [UInt8]?) {
            self.uid = uid
            self.pid = pid
            self.securityLabel = securityLabel
        }
    }

    /// What the daemon recorded of `peer` (a unique name) when it connected.
    package func connectionCredentials(of peer: String) throws(BusError) -> PeerCredentials {
        let reply = try call(
            "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionCredentials"
        ) { (message) throws(BusError) in try message.append(peer) }
        var uid: UInt32?
        var pid: UInt32?
        var label: [UInt8]?
        _ = try reply.enter("a", "{sv}")
        while try reply.enter("e", "sv") {
            let key = try reply.readString()
            guard let (type, contents) = try reply.peek(), type == "v" else {
                throw BusError(
                    operation: "GetConnectionCredentials", code: -Errno.badMessage.rawValue, detail: "no variant")
            }
            _ = try reply.enter("v", contents)
            switch (key, contents) {
            case ("UnixUserID", "u"): uid = try reply.readUInt32()
            case ("ProcessID", "u"): pid = try reply.readUInt32()
            case ("LinuxSecurityLabel", "ay"):
                // The daemon includes the label's terminating zero.
                var bytes = try reply.readBytes()
                if bytes.last == 0 { bytes.removeLast() }
                label = bytes
            default: try reply.skip()
            }
            try reply.exit()
            try reply.exit()
        }
        try reply.exit()
        guard let uid, let pid, pid <= UInt32(Int32.max) else {
            throw BusError(
                operation: "asking who \(peer) is", code: -Errno.badMessage.rawValue, detail: "the bus did not say")
        }
        return PeerCredentials(uid: uid, pid: Int32(pid), securityLabel: label)
    }

    /// The process the daemon recorded for a connection (`GetConnectionUnixProcessID`).
    package func processID(of peer: String) throws(BusError) -> Int32 {
        let reply = try call(
            "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionUnixProcessID"
        ) { (message) throws(BusError) in try message.append(peer) }
        return Int32(truncatingIfNeeded: try reply.readUInt32())
    }

    /// The unique name (`:1.42`) of the connection that owns the well-known `name` (`GetNameOwner`).
    package func owner(of name: String) throws(BusError) -> String {
        let reply = try call(
            "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetNameOwner"
        ) { (message) throws(BusError) in try message.append(name) }
        return try reply.readString()
    }

    /// Every name on the bus, unique (`:1.42`) and well-known (`ListNames`).
    package func names() throws(BusError) -> [String] {
        let reply = try call(
            "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ListNames")
        var names: [String] = []
        _ = try reply.enter("a", "s")
        while try reply.peek() != nil { names.append(try reply.readString()) }
        try reply.exit()
        return names
    }

    /// The descriptor of this connection's socket (sd-bus's own: never closed or read by the caller).
    package var socketDescriptor: FileDescriptor? {
        let fd = latchkey_sd_bus_get_fd(bus)
        return fd >= 0 ? FileDescriptor(rawValue: fd) : nil
    }

    /// The user and process of a peer, as the bus daemon knows them (from its socket credentials).
    package func credentials(of peer: String) throws(BusError) -> (uid: UInt32, pid: Int32) {
        var creds: OpaquePointer?
        let mask = UInt64(SD_BUS_CREDS_EUID) | UInt64(SD_BUS_CREDS_PID)
        let code = latchkey_sd_bus_get_name_creds(bus, peer, mask, &creds)
        guard code >= 0, let creds else { throw BusError(operation: "asking who \(peer) is", code: code, detail: nil) }
        defer { _ = latchkey_sd_bus_creds_unref(creds) }
        var uid: uid_t = 0
        var pid: pid_t = 0
        guard latchkey_sd_bus_creds_get_euid(creds, &uid) >= 0, latchkey_sd_bus_creds_get_pid(creds, &pid) >= 0 else {
            throw BusError(
                operation: "asking who \(peer) is", code: -Errno.badMessage.rawValue, detail: "the bus did not say")
        }
        return (uid, pid)
    }
}
