package import FoundationEssentials

/// What a PKCS #12 file (`.p12`, `.pfx`) holds, as `SecPKCS12Import` hands it out: the identity (the
/// certificate with its private key), the certificate chain (the identity's certificate first), the
/// certificate's friendly name and local key ID.
package struct PKCS12Contents: Sendable {
    /// The identity, when the file holds a private key and its certificate.
    package let identity: Identity?
    /// The certificates: the identity's first, then the others in the file's order.
    package let certificates: [Certificate]
    /// The friendly name (`kSecImportItemLabel`).
    package let label: String?
    /// The local key ID (`kSecImportItemKeyID`).
    package let keyID: Data?

    /// Decodes and decrypts a PKCS #12 file with OpenSSL (files from older tools — RC2-40, Triple DES —
    /// through its legacy provider).
    ///
    /// - Throws: `KeyError` `.authFailed` for a wrong passphrase, `.param` for a file whose key derivations ask
    ///   for more work than `OpenSSL.PasswordCost` allows (checked before any is run), `.decode` for bytes that are not PKCS #12 or
    ///   hold no certificate, or a key Latchkey cannot use (a curve other than P-256, P-384, P-521; a key
    ///   that is not the certificate's).
    package init(_ data: Data, passphrase: String) throws(KeyError) {
        let contents: OpenSSL.PKCS12Contents
        switch OpenSSL.parsePKCS12(data, passphrase: passphrase) {
        case .success(let parsed): contents = parsed
        case .failure(.wrongPassphrase): throw KeyError(.authFailed, "the passphrase does not open the PKCS #12 file")
        case .failure(.malformed): throw KeyError(.decode, "the data is not a PKCS #12 file this passphrase opens")
        case .failure(.tooCostly(let reason)): throw KeyError(.param, reason)
        }
        var certificates: [Certificate] = []
        for der in [contents.certificate].compactMap({ $0 }) + contents.chain {
            do {
                certificates.append(try Certificate(derRepresentation: der))
            } catch {
                throw KeyError(.decode, "a certificate in the PKCS #12 file: \(error.reason)")
            }
        }
        guard let leaf = certificates.first else { throw KeyError(.decode, "the PKCS #12 file holds no certificate") }
        if let handle = contents.key {
            let type: KeyType = OpenSSL.isRSA(handle) ? .rsa : .ellipticCurve
            guard OpenSSL.isRSA(handle) || (OpenSSL.isEC(handle) && AsymmetricKey.curves[OpenSSL.bits(handle)] != nil)
            else {
                throw KeyError(.decode, "the PKCS #12 file's key is neither RSA nor on P-256, P-384 or P-521")
            }
            let key = try AsymmetricKey(handle: handle, type: type, isPrivate: true)
            do {
                identity = try Identity(certificate: leaf, privateKey: key)
            } catch {
                throw KeyError(.decode, "the PKCS #12 file's key is not its certificate's")
            }
        } else {
            identity = nil
        }
        self.certificates = certificates
        label = contents.friendlyName
        keyID = contents.localKeyID
    }
}

extension Identity {
    /// A PKCS #12 file of this identity and `chain` (certificates after its own), encrypted with
    /// `passphrase` as OpenSSL 3 does by default (AES-256-CBC with PBKDF2, an HMAC-SHA-256 MAC), under the
    /// friendly name `label`.
    package func pkcs12(chain: [Certificate] = [], passphrase: String, label: String? = nil) throws(KeyError) -> Data {
        guard
            let data = OpenSSL.makePKCS12(
                key: privateKey.handle, certificate: certificate.derRepresentation,
                chain: chain.map(\.derRepresentation), passphrase: passphrase, name: label)
        else { throw KeyError(.param, "OpenSSL could not make the PKCS #12 file") }
        return data
    }
}
