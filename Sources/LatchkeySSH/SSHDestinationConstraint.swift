package import FoundationEssentials

/// Where a key may be used (`ssh-add -h`, OpenSSH's `restrict-destination-v00@openssh.com`, `PROTOCOL.agent`
/// §2): one allowed hop, from a host (none: from this machine) to a host, each named by its host keys or
/// its certificate authorities, optionally as a user. Stored with the key, so it holds after the agent
/// restarts.
package struct SSHDestinationConstraint: Codable, Hashable, Sendable {
    /// A key that names a host: its own key, or (`isCA`) an authority whose host certificates name it.
    package struct KeySpec: Codable, Hashable, Sendable {
        package let blob: Data
        package let isCA: Bool

        package init(blob: Data, isCA: Bool) {
            self.blob = blob
            self.isCA = isCA
        }
    }

    /// One end of the hop.
    package struct Hop: Codable, Hashable, Sendable {
        /// A user name pattern (`to` only); nil for any user.
        package let user: String?
        /// The host's name (for certificates' principals); nil for this machine (`from` only).
        package let hostname: String?
        /// The host's keys; empty for this machine (`from` only).
        package let keys: [KeySpec]

        package init(user: String?, hostname: String?, keys: [KeySpec]) {
            self.user = user
            self.hostname = hostname
            self.keys = keys
        }

        static func read(_ reader: inout SSHReader) throws(SSHWireError) -> Hop {
            let user = try reader.text("the constraint's user")
            let hostname = try reader.text("the constraint's host name")
            guard try reader.string("a reserved field").isEmpty else {
                throw SSHWireError("the constraint has extensions, which are not supported")
            }
            guard user.utf8.count <= SSHAgentLimits.maximumUserPatternBytes else {
                throw SSHWireError("the user pattern is too long")
            }
            var keys: [KeySpec] = []
            while !reader.isAtEnd {
                let blob = try reader.string("a constraint's key")
                let isCA = try reader.boolean("whether the key is an authority")
                guard !SSHCertificate.isCertificate(blob) else {
                    throw SSHWireError("a constraint's key is a certificate")
                }
                _ = try SSHPublicKey(blob: blob)  // A kind this agent can compare.
                keys.append(KeySpec(blob: blob, isCA: isCA))
            }
            return Hop(user: user.isEmpty ? nil : user, hostname: hostname.isEmpty ? nil : hostname, keys: keys)
        }

        /// OpenSSH's `match_key_hop`: whether the host that showed `hostKey` is this end — its key listed as
        /// a host's key, or its certificate (valid now for this end's host name) signed by a listed authority.
        func matches(_ hostKey: SSHHostKey) -> Bool {
            keys.contains { spec in
                if let certificate = hostKey.certificate {
                    return spec.isCA && spec.blob == certificate.authority.blob
                        && certificate.isValidHostCertificate(for: hostname ?? "(ORIGIN)")
                }
                return !spec.isCA && spec.blob == hostKey.key.blob
            }
        }
    }

    package let from: Hop
    package let to: Hop

    package init(from: Hop, to: Hop) {
        self.from = from
        self.to = to
    }

    static func read(_ reader: inout SSHReader) throws(SSHWireError) -> SSHDestinationConstraint {
        var outer = try reader.nested("a destination constraint")
        var fromBytes = try outer.nested("the constraint's origin")
        var toBytes = try outer.nested("the constraint's destination")
        guard try outer.string("a reserved field").isEmpty else {
            throw SSHWireError("the constraint has extensions, which are not supported")
        }
        try outer.expectEnd("the destination constraint")
        let from = try Hop.read(&fromBytes)
        let to = try Hop.read(&toBytes)
        guard (from.hostname == nil) == from.keys.isEmpty, from.user == nil else {
            throw SSHWireError("the constraint's origin is inconsistent")
        }
        guard to.hostname != nil, !to.keys.isEmpty else {
            throw SSHWireError("the constraint's destination is incomplete")
        }
        return SSHDestinationConstraint(from: from, to: to)
    }

    /// Whether this hop is the one from `from` (nil: this machine) to `to` (nil: any host, when only where
    /// the key may go next is asked) as `user` (bytes; nil: not asked).
    func permits(from fromKey: SSHHostKey?, to toKey: SSHHostKey?, user: Data?) -> Bool {
        if let fromKey {
            guard from.matches(fromKey) else { return false }
        } else if from.hostname != nil || !from.keys.isEmpty {
            return false
        }
        if let toKey, !to.matches(toKey) { return false }
        if let pattern = to.user, let user, !SSHPattern.matches(user, pattern: pattern.utf8) { return false }
        return true
    }

    /// `user@host` or `host`, as the user wrote it to `ssh-add -h`; prefixed with `from>` for a later hop.
    package var summary: String {
        let destination = (to.user.map { $0 + "@" } ?? "") + (to.hostname ?? "?")
        return from.hostname.map { $0 + ">" + destination } ?? destination
    }
}

extension [SSHDestinationConstraint] {
    /// OpenSSH's `permitted_by_dest_constraints`: the host name of the first constraint that allows the hop,
    /// or nil when none does.
    func permittedHop(from: SSHHostKey?, to: SSHHostKey?, user: Data?) -> String?? {
        for constraint in self where constraint.permits(from: from, to: to, user: user) {
            return .some(constraint.to.hostname)
        }
        return nil
    }
}
