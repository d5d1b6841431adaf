package import FoundationEssentials
package import LatchkeyPKI

/// SSH signatures (RFC 4253 §6.6, RFC 5656 §3.1.2, RFC 8332, RFC 8709): the blob `string algorithm, string
/// signature`, made from what Latchkey's keys sign, and checked for the keys the agent is shown (a server's
/// host key in `session-bind@openssh.com`, a certificate authority's).
package enum SSHSignature {
    /// `SSH_AGENT_RSA_SHA2_256` and `SSH_AGENT_RSA_SHA2_512`: the flags of a sign request that choose RSA's digest.
    package static let rsaSHA256Flag: UInt32 = 0x02
    package static let rsaSHA512Flag: UInt32 = 0x04

    /// How a key of `kind` signs for a request's flags: the signature's name, the digest of the data, and
    /// Latchkey's algorithm for that digest. RSA without either flag is `ssh-rsa`, SHA-1 — only when asked so.
    package static func plan(for kind: SSHPublicKey.Kind, flags: UInt32) -> (
        name: String, digest: MessageDigest?, algorithm: KeyAlgorithm
    ) {
        switch kind {
        case .ecdsa(let bits):
            let digest: MessageDigest = bits <= 256 ? .sha256 : bits <= 384 ? .sha384 : .sha512
            return (
                "ecdsa-sha2-" + (SSHPublicKey.curves[bits] ?? ""), digest,
                KeyAlgorithm(rawValue: "algid:sign:ECDSA:RFC4754")
            )
        case .rsa:
            let (name, digest): (String, MessageDigest) =
                flags & rsaSHA512Flag != 0 && flags & rsaSHA256Flag == 0
                ? ("rsa-sha2-512", .sha512)
                : flags & rsaSHA256Flag != 0 ? ("rsa-sha2-256", .sha256) : ("ssh-rsa", .sha1)
            return (name, digest, KeyAlgorithm(rawValue: "algid:sign:RSA:digest-PKCS1v15:" + digest.rawValue))
        case .ed25519:
            return ("ssh-ed25519", nil, KeyAlgorithm(rawValue: KeyAlgorithm.ed25519))
        }
    }

    /// What the key is given to sign: the digest of `data`, or `data` itself for Ed25519.
    package static func input(_ data: Data, plan: (name: String, digest: MessageDigest?, algorithm: KeyAlgorithm))
        -> Data
    {
        plan.digest.map { $0.hash(data) } ?? data
    }

    /// The signature blob from what the key signed: ECDSA's r‖s become two mpints.
    package static func blob(name: String, kind: SSHPublicKey.Kind, signature: Data) -> Data {
        var writer = SSHWriter()
        writer.string(name)
        if case .ecdsa = kind {
            let half = signature.count / 2
            var numbers = SSHWriter()
            numbers.positiveInteger(signature.prefix(half))
            numbers.positiveInteger(signature.suffix(half))
            writer.string(numbers.data)
        } else {
            writer.string(signature)
        }
        return writer.data
    }

    /// Whether `blob` is `key`'s valid signature of `data`, with an algorithm that suits the key (RSA: any of
    /// `ssh-rsa`, `rsa-sha2-256`, `rsa-sha2-512`, as a server may sign with each). Malformed is false.
    package static func verify(_ blob: Data, by key: SSHPublicKey, of data: Data) -> Bool {
        var reader = SSHReader(blob)
        guard let name = try? reader.text("the signature's algorithm"),
            let signature = try? reader.string("the signature"),
            reader.isAtEnd
        else { return false }  // Not a signature blob: it verifies nothing.
        switch key.kind {
        case .ed25519:
            guard name == "ssh-ed25519", signature.count == 64,
                let verifier = try? AsymmetricKey(externalRepresentation: key.keyData, type: .ed25519, isPrivate: false)
            else { return false }  // Not an Ed25519 signature, or a point OpenSSL refuses.
            return (try? verifier.verify(KeyAlgorithm(rawValue: KeyAlgorithm.ed25519), data, signature: signature))
                != nil  // verify throws exactly when the signature is not valid.
        case .ecdsa(let bits):
            let plan = plan(for: key.kind, flags: 0)
            var numbers = SSHReader(signature)
            let size = (bits + 7) / 8
            guard name == plan.name, let r = try? numbers.positiveInteger("r"),
                let s = try? numbers.positiveInteger("s"), numbers.isAtEnd,
                r.count <= size, s.count <= size,
                let verifier = try? AsymmetricKey(
                    externalRepresentation: key.keyData, type: .ellipticCurve, isPrivate: false)
            else { return false }  // Malformed numbers, or a key OpenSSL refuses: no valid signature.
            let raw = Data(repeating: 0, count: size - r.count) + r + Data(repeating: 0, count: size - s.count) + s
            // verify throws exactly when the signature is not valid.
            return (try? verifier.verify(plan.algorithm, input(data, plan: plan), signature: raw)) != nil
        case .rsa:
            let flags: UInt32? = ["ssh-rsa": 0, "rsa-sha2-256": rsaSHA256Flag, "rsa-sha2-512": rsaSHA512Flag][name]
            guard let flags,
                let verifier = try? AsymmetricKey(externalRepresentation: key.keyData, type: .rsa, isPrivate: false)
            else {
                return false  // Not an RSA signature, or a key OpenSSL refuses.
            }
            let plan = plan(for: .rsa, flags: flags)
            // verify throws exactly when the signature is not valid.
            return (try? verifier.verify(plan.algorithm, input(data, plan: plan), signature: signature)) != nil
        }
    }
}
