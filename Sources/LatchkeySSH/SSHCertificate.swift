package import FoundationEssentials

/// An OpenSSH certificate (`PROTOCOL.certkeys`): a key, what it is certified for, and the signature of the
/// certificate authority that certified it, checked when it is read. The agent meets host certificates: a
/// server may show one as its host key, and a destination constraint may name the authority (`@cert-authority`
/// in `known_hosts`) instead of the host's key.
package struct SSHCertificate: Sendable, Hashable {
    /// `SSH2_CERT_TYPE_USER` and `SSH2_CERT_TYPE_HOST`.
    package static let userType: UInt32 = 1, hostType: UInt32 = 2

    /// The certified key, as a plain key.
    package let key: SSHPublicKey
    /// User (1) or host (2).
    package let type: UInt32
    /// The names it is valid for (host names for a host certificate); none means any. Bytes, as OpenSSH reads
    /// them: any but NUL, UTF-8 or not (`SSHDisplay` shows them).
    package let principals: [Data]
    /// Valid from this time (seconds since 1970) …
    package let validAfter: UInt64
    /// … until before this one.
    package let validBefore: UInt64
    /// Whether it carries critical options (a host certificate with any is refused, as OpenSSH refuses it).
    package let hasCriticalOptions: Bool
    /// The authority's key.
    package let authority: SSHPublicKey

    /// The certificate types this agent reads, with the plain key type each certifies.
    static let plainNames = [
        "ssh-ed25519-cert-v01@openssh.com": "ssh-ed25519", "ssh-rsa-cert-v01@openssh.com": "ssh-rsa",
        "ecdsa-sha2-nistp256-cert-v01@openssh.com": "ecdsa-sha2-nistp256",
        "ecdsa-sha2-nistp384-cert-v01@openssh.com": "ecdsa-sha2-nistp384",
        "ecdsa-sha2-nistp521-cert-v01@openssh.com": "ecdsa-sha2-nistp521",
    ]

    /// Whether a blob's algorithm name is a certificate's.
    package static func isCertificate(_ blob: Data) -> Bool {
        var reader = SSHReader(blob)
        guard let name = try? reader.text() else { return false }  // Not even a name: no certificate.
        return name.hasSuffix("-cert-v01@openssh.com")
    }

    /// Reads a certificate and checks its authority's signature; `SSHWireError` when it is malformed, of a
    /// type this agent does not read, or not signed by its authority.
    package init(blob: Data) throws(SSHWireError) {
        var reader = SSHReader(blob)
        let name = try reader.text("the certificate's type")
        guard let plain = Self.plainNames[name] else {
            throw SSHWireError("certificates of type \(name.prefix(64)) are not supported")
        }
        _ = try reader.string("the nonce")
        var keyBlob = SSHWriter()
        keyBlob.string(plain)
        switch plain {
        case "ssh-ed25519": keyBlob.string(try reader.string("the Ed25519 key"))
        case "ssh-rsa":
            keyBlob.string(try reader.string("the RSA exponent"))
            keyBlob.string(try reader.string("the RSA modulus"))
        default:
            keyBlob.string(try reader.string("the curve"))
            keyBlob.string(try reader.string("the EC point"))
        }
        key = try SSHPublicKey(blob: keyBlob.data)
        _ = try reader.uint64("the serial number")
        type = try reader.uint32("the certificate type")
        _ = try reader.string("the key id")
        var names = try reader.nested("the principals")
        var principals: [Data] = []
        while !names.isAtEnd { principals.append(try names.cString("a principal")) }
        self.principals = principals
        validAfter = try reader.uint64("the start of validity")
        validBefore = try reader.uint64("the end of validity")
        hasCriticalOptions = !(try reader.string("the critical options")).isEmpty
        _ = try reader.string("the extensions")
        _ = try reader.string("the reserved field")
        let authorityBlob = try reader.string("the signature key")
        guard !Self.isCertificate(authorityBlob) else {
            throw SSHWireError("a certificate signed by a certificate is not supported")
        }
        authority = try SSHPublicKey(blob: authorityBlob)
        let signed = Data(blob.prefix(blob.count - reader.remaining))
        let signature = try reader.string("the signature")
        try reader.expectEnd("the certificate")
        guard SSHSignature.verify(signature, by: authority, of: signed) else {
            throw SSHWireError("the certificate's signature is not its authority's")
        }
    }

    /// Whether this is a host certificate valid now for `host` (a pattern, as OpenSSH 9.2 matches a
    /// constraint's host name against each principal, byte by byte): of the host type, within its validity,
    /// without critical options.
    package func isValidHostCertificate(for host: String, now: Date = Date()) -> Bool {
        let seconds = UInt64(max(0, now.timeIntervalSince1970))
        guard type == Self.hostType, seconds >= validAfter, seconds < validBefore, !hasCriticalOptions else {
            return false
        }
        return principals.isEmpty || principals.contains { SSHPattern.matches($0, pattern: host.utf8) }
    }

    /// The principals for a log line: each quoted and escaped (`SSHDisplay`), at most eight; "any name" for
    /// none.
    package var principalsShown: String {
        guard !principals.isEmpty else { return "any name" }
        let shown = principals.prefix(8).map { "\"" + SSHDisplay.escaped($0) + "\"" }.joined(separator: ", ")
        return principals.count > 8 ? shown + " and \(principals.count - 8) more" : shown
    }
}

/// A host key as a server shows it: a plain key, or a host certificate (whose certified key signs).
package struct SSHHostKey: Sendable, Hashable {
    /// The blob as shown.
    package let blob: Data
    /// The key that signs: the plain key, or the certificate's.
    package let key: SSHPublicKey
    /// The certificate, when the host key is one.
    package let certificate: SSHCertificate?

    /// Reads a plain key or a certificate.
    package init(blob: Data) throws(SSHWireError) {
        self.blob = blob
        if SSHCertificate.isCertificate(blob) {
            let certificate = try SSHCertificate(blob: blob)
            self.certificate = certificate
            key = certificate.key
        } else {
            certificate = nil
            key = try SSHPublicKey(blob: blob)
        }
    }

    /// OpenSSH's `sshkey_equal`: the same key, whether shown plain or certified.
    package func isSameKey(as other: SSHHostKey) -> Bool { key.blob == other.key.blob }
}

/// OpenSSH's `match_pattern`, on bytes as OpenSSH's C strings are: `*` matches any run of bytes, `?` any one;
/// every other byte itself.
package enum SSHPattern {
    /// Whether `text` matches `pattern`, byte by byte.
    package static func matches(_ text: some Sequence<UInt8>, pattern: some Sequence<UInt8>) -> Bool {
        matches(Array(text), Array(pattern))
    }

    private static func matches(_ text: [UInt8], _ pattern: [UInt8]) -> Bool {
        let asterisk = UInt8(ascii: "*")
        let question = UInt8(ascii: "?")
        // Iterative wildcard matching with one backtracking point (the last `*`).
        var t = 0
        var p = 0
        var star: Int?
        var resume = 0
        while t < text.count {
            if p < pattern.count && (pattern[p] == question || pattern[p] == text[t]) {
                t += 1
                p += 1
            } else if p < pattern.count && pattern[p] == asterisk {
                star = p
                resume = t
                p += 1
            } else if let star {
                p = star + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == asterisk { p += 1 }
        return p == pattern.count
    }
}
