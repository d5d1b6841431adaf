import FoundationEssentials
import LatchkeyCrypto

extension AsymmetricKey {
    /// The public key as PEM ("-----BEGIN PUBLIC KEY-----", a SubjectPublicKeyInfo), as `openssl` writes it.
    public func publicKeyPEM() throws(KeyError) -> String {
        guard let pem = OpenSSL.publicKeyPEM(handle) else {
            throw KeyError(.param, "the public key cannot be written as PEM")
        }
        return pem.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The private key as encrypted PKCS #8 PEM ("-----BEGIN ENCRYPTED PRIVATE KEY-----", AES-256-CBC with
    /// PBKDF2), in a zeroizing buffer. `errSecParam` for a public key or an empty passphrase.
    public func encryptedPrivateKeyPEM(passphrase: String) throws(KeyError) -> SecureKeyBytes {
        guard isPrivate else { throw KeyError(.param, "a public key has no private half to export") }
        guard !passphrase.isEmpty else {
            throw KeyError(.param, "a private key is exported encrypted: give a passphrase")
        }
        guard let pem = OpenSSL.encryptedPrivateKeyPEM(handle, passphrase: passphrase) else {
            throw KeyError(.param, "the private key cannot be written as PEM")
        }
        return SecureKeyBytes(pem)
    }

    /// The keys of every PEM key block in `text`: "PUBLIC KEY", and "PRIVATE KEY", "EC PRIVATE KEY",
    /// "RSA PRIVATE KEY" or "ENCRYPTED PRIVATE KEY" (opened with `passphrase`). Certificate blocks are
    /// skipped. `errSecAuthFailed` when an encrypted key does not open, `errSecDecode` for a block that is
    /// not a key Latchkey can use (an RSA key, or EC on P-256, P-384 or P-521).
    public static func keys(inPEM text: String, passphrase: String) throws(KeyError) -> [AsymmetricKey] {
        var keys: [AsymmetricKey] = []
        var rest = text[...]
        while let begin = rest.firstRange(of: "-----BEGIN ") {
            guard let labelEnd = rest[begin.upperBound...].firstRange(of: "-----") else { break }
            let label = String(rest[begin.upperBound..<labelEnd.lowerBound])
            guard let end = rest[labelEnd.upperBound...].firstRange(of: "-----END \(label)-----") else {
                throw KeyError(.decode, "a PEM block (\(label)) is cut short")
            }
            let block = String(rest[begin.lowerBound..<end.upperBound]) + "\n"
            rest = rest[end.upperBound...]
            guard label.hasSuffix("KEY") else { continue }
            if label == "ENCRYPTED PRIVATE KEY", let excess = OpenSSL.encryptedKeyCostExcess(Data(block.utf8)) {
                throw KeyError(.param, excess)
            }
            guard let (handle, isPrivate) = OpenSSL.readKeyPEM(Data(block.utf8), passphrase: passphrase) else {
                if label == "ENCRYPTED PRIVATE KEY" {
                    throw KeyError(.authFailed, "the passphrase does not open the encrypted private key")
                }
                throw KeyError(.decode, "a PEM block (\(label)) is not a key")
            }
            let rsa = OpenSSL.isRSA(handle)
            guard rsa || (OpenSSL.isEC(handle) && curves[OpenSSL.bits(handle)] != nil) else {
                throw KeyError(.decode, "a PEM key is neither RSA nor EC on P-256, P-384 or P-521")
            }
            keys.append(try AsymmetricKey(handle: handle, type: rsa ? .rsa : .ellipticCurve, isPrivate: isPrivate))
        }
        return keys
    }
}
