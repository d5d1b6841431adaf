package import FoundationEssentials
package import LatchkeyPKI

/// A public key as SSH writes it (RFC 4253 §6.6, RFC 5656 §3.1, RFC 8709): its blob — the algorithm's name
/// and the key's numbers — and the same key as Latchkey stores it (Apple's external representation: the
/// X9.63 point, PKCS #1 RSAPublicKey DER, or Ed25519's 32 bytes), which is what finds its item.
package struct SSHPublicKey: Hashable, Sendable {
    /// The kinds of key this agent holds and checks.
    package enum Kind: Hashable, Sendable {
        /// ECDSA on NIST P-256, P-384 or P-521 (`ecdsa-sha2-nistp256` …).
        case ecdsa(bits: Int)
        /// RSA (`ssh-rsa`).
        case rsa
        /// Ed25519 (`ssh-ed25519`).
        case ed25519
    }

    /// The kind.
    package let kind: Kind
    /// The blob: the key's wire encoding, what requests name it by.
    package let blob: Data
    /// The key as Latchkey stores it (Apple's external representation).
    package let keyData: Data
    /// The key's size in bits (the modulus's for RSA; 256 for Ed25519).
    package let bits: Int

    static let curves: [Int: String] = [256: "nistp256", 384: "nistp384", 521: "nistp521"]

    /// The algorithm's name: `ecdsa-sha2-nistp256`, `ssh-rsa`, `ssh-ed25519`.
    package var algorithmName: String {
        switch kind {
        case .ecdsa(let bits): "ecdsa-sha2-" + (Self.curves[bits] ?? "")
        case .rsa: "ssh-rsa"
        case .ed25519: "ssh-ed25519"
        }
    }

    /// Reads a blob; `SSHWireError` for a kind this agent does not hold (certificates, DSA, security keys)
    /// and for malformed numbers.
    package init(blob: Data) throws(SSHWireError) {
        var reader = SSHReader(blob)
        let name = try reader.text("the key's algorithm")
        switch name {
        case "ssh-rsa":
            let exponent = try reader.positiveInteger("the RSA exponent")
            let modulus = try reader.positiveInteger("the RSA modulus")
            try reader.expectEnd("the RSA key")
            guard modulus.count >= 128, modulus.count <= 2048, !exponent.isEmpty, exponent.count <= 8 else {
                throw SSHWireError("the RSA key's numbers are out of range")
            }
            let key: AsymmetricKey
            do {
                key = try AsymmetricKey.rsaPublicKey(modulus: modulus, exponent: exponent)
            } catch {
                throw SSHWireError("the RSA key is not valid: \(error.reason)")
            }
            keyData = key.publicKeyData
            self.bits = key.sizeInBits
            kind = .rsa
        case "ssh-ed25519":
            let bytes = try reader.string("the Ed25519 key")
            try reader.expectEnd("the Ed25519 key")
            guard bytes.count == 32 else { throw SSHWireError("an Ed25519 key is 32 bytes, not \(bytes.count)") }
            keyData = bytes
            self.bits = 256
            kind = .ed25519
        default:
            guard let bits = Self.curves.first(where: { "ecdsa-sha2-" + $0.value == name })?.key else {
                throw SSHWireError("keys of type \(name.prefix(64)) are not supported")
            }
            let curve = try reader.text("the curve")
            let point = try reader.string("the EC point")
            try reader.expectEnd("the EC key")
            guard curve == Self.curves[bits], point.count == 1 + 2 * ((bits + 7) / 8), point.first == 0x04 else {
                throw SSHWireError("the EC key's curve or point does not match \(name)")
            }
            keyData = point
            self.bits = bits
            kind = .ecdsa(bits: bits)
        }
        self.blob = blob
    }

    /// The SSH form of a Latchkey key (its public half).
    package init(_ key: AsymmetricKey) {
        var writer = SSHWriter()
        switch key.type {
        case .ellipticCurve:
            kind = .ecdsa(bits: key.sizeInBits)
            writer.string("ecdsa-sha2-" + (Self.curves[key.sizeInBits] ?? ""))
            writer.string(Self.curves[key.sizeInBits] ?? "")
            writer.string(key.publicKeyData)
        case .rsa:
            kind = .rsa
            let numbers = key.rsaPublicNumbers ?? (Data(), Data())
            writer.string("ssh-rsa")
            writer.positiveInteger(numbers.exponent)
            writer.positiveInteger(numbers.modulus)
        case .ed25519:
            kind = .ed25519
            writer.string("ssh-ed25519")
            writer.string(key.publicKeyData)
        }
        keyData = key.publicKeyData
        bits = key.sizeInBits
        blob = writer.data
    }

    /// The Latchkey key type of this key's items.
    package var keyType: KeyType {
        switch kind {
        case .ecdsa: .ellipticCurve
        case .rsa: .rsa
        case .ed25519: .ed25519
        }
    }

    /// `kSecAttrApplicationLabel` of the key's items: SHA-1 of its external representation.
    package var applicationLabel: Data { MessageDigest.sha1.hash(keyData) }

    /// OpenSSH's fingerprint: `SHA256:` and the unpadded base64 of the blob's SHA-256.
    package var fingerprint: String {
        "SHA256:" + MessageDigest.sha256.hash(blob).base64EncodedString().replacing("=", with: "")
    }

    /// The line of an OpenSSH public key file (`authorized_keys`, `id_ecdsa.pub`): algorithm, base64 blob, comment.
    package func line(comment: String) -> String {
        let head = algorithmName + " " + blob.base64EncodedString()
        return comment.isEmpty ? head : head + " " + comment
    }

    /// Reads the line of a public key file: `algorithm base64 [comment]`.
    package init(line: String) throws(SSHWireError) {
        let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard fields.count >= 2, let blob = Data(base64Encoded: String(fields[1])) else {
            throw SSHWireError("not an OpenSSH public key line")
        }
        try self.init(blob: blob)
        guard algorithmName == fields[0] else {
            throw SSHWireError("the line names \(fields[0].prefix(64)), its key is \(algorithmName)")
        }
    }
}
