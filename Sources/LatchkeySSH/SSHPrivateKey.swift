import FoundationEssentials
package import LatchkeyPKI

/// A private key in OpenSSH's serialization (`sshkey_private_serialize`: what `ssh-add` sends in
/// `SSH2_AGENTC_ADD_IDENTITY`, and what an `openssh-key-v1` file holds): its type's name, then its public
/// and private numbers. The secret numbers are read into zeroizing buffers and become a Latchkey key at
/// once; nothing of them is kept here but that key.
package struct SSHPrivateKey: Sendable {
    /// The key (private).
    package let key: AsymmetricKey
    /// Its public half, as SSH writes it.
    package let publicKey: SSHPublicKey

    /// Reads one key: `ecdsa-sha2-nistp256/384/521` (curve, Q, d), `ssh-rsa` (n, e, d, iqmp, p, q) or
    /// `ssh-ed25519` (the public key, then the 32-byte seed and the public key again). Certificates, DSA and
    /// security keys are refused by name.
    package static func read(_ reader: inout SSHReader) throws(SSHWireError) -> SSHPrivateKey {
        let name = try reader.text("the key's type")
        func made(_ make: () throws(KeyError) -> AsymmetricKey) throws(SSHWireError) -> AsymmetricKey {
            do {
                return try make()
            } catch {
                throw SSHWireError("the \(name) key is not valid: \(error.reason)")
            }
        }
        let key: AsymmetricKey
        switch name {
        case "ssh-rsa":
            let modulus = try reader.positiveInteger("the RSA modulus")
            let exponent = try reader.positiveInteger("the RSA public exponent")
            let privateExponent = try reader.secretInteger("the RSA private exponent")
            let coefficient = try reader.secretInteger("the RSA coefficient")
            let prime1 = try reader.secretInteger("the RSA prime p")
            let prime2 = try reader.secretInteger("the RSA prime q")
            guard modulus.count >= 128, modulus.count <= 2048 else {
                throw SSHWireError("an RSA key of \(modulus.count * 8) bits is not supported (1024 to 16384)")
            }
            key = try made { () throws(KeyError) in
                try AsymmetricKey.rsaPrivateKey(
                    modulus: modulus, publicExponent: exponent, privateExponent: privateExponent,
                    prime1: prime1, prime2: prime2, coefficient: coefficient)
            }
        case "ssh-ed25519":
            let publicBytes = try reader.string("the Ed25519 public key")
            let secret = try reader.secretString("the Ed25519 private key")
            guard publicBytes.count == 32, secret.count == 64 else {
                throw SSHWireError("an Ed25519 key's parts have the wrong sizes")
            }
            key = try made { () throws(KeyError) in
                try AsymmetricKey.ed25519PrivateKey(seedAndPublicKey: secret, publicKey: publicBytes)
            }
        default:
            guard let bits = SSHPublicKey.curves.first(where: { "ecdsa-sha2-" + $0.value == name })?.key else {
                throw SSHWireError("keys of type \(name.prefix(64)) are not supported")
            }
            let curve = try reader.text("the curve")
            let point = try reader.string("the EC point")
            let scalar = try reader.secretInteger("the EC private scalar")
            guard curve == SSHPublicKey.curves[bits], point.count == 1 + 2 * ((bits + 7) / 8) else {
                throw SSHWireError("the EC key's curve or point does not match \(name)")
            }
            key = try made { () throws(KeyError) in try AsymmetricKey.ecPrivateKey(point: point, scalar: scalar) }
        }
        return SSHPrivateKey(key: key, publicKey: SSHPublicKey(key))
    }
}
