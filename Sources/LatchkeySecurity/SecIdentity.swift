public import Foundation
public import Latchkey

/// `SecIdentity`: a certificate and its private key. `SecItemAdd` with it as `kSecValueRef` stores both;
/// `kSecClassIdentity` searches find the certificates that have their private key in the keychain.
public final class SecIdentity: NSObject, IdentityConvertible, @unchecked Sendable {
    // @unchecked: immutable (one `Identity` value, itself Sendable).
    /// The certificate and the key.
    public let identity: Identity

    /// Wraps an identity.
    public init(_ identity: Identity) {
        self.identity = identity
        super.init()
    }

    /// Same certificate, same key.
    public override func isEqual(_ object: Any?) -> Bool { (object as? SecIdentity)?.identity == identity }

    /// Consistent with `isEqual`.
    public override var hash: Int { identity.hashValue }

    /// `<SecIdentity "www.example.com">`: the certificate's subject summary, never more.
    public override var description: String {
        "<SecIdentity \(identity.certificate.subjectSummary.map { "\"\($0)\"" } ?? "without a subject summary")>"
    }
}

/// `SecIdentityCopyCertificate`.
public func SecIdentityCopyCertificate(_ identityRef: SecIdentity, _ certificateRef: UnsafeMutablePointer<SecCertificate?>) -> OSStatus {
    certificateRef.pointee = SecCertificate(identityRef.identity.certificate)
    return errSecSuccess
}

/// `SecIdentityCopyPrivateKey`.
public func SecIdentityCopyPrivateKey(_ identityRef: SecIdentity, _ privateKeyRef: UnsafeMutablePointer<SecKey?>) -> OSStatus {
    privateKeyRef.pointee = SecKey(identityRef.identity.privateKey)
    return errSecSuccess
}

/// `SecIdentityCreateWithCertificate`: the identity of a certificate whose private key is in the keychain
/// (`keychainOrArray` is ignored: the keychain is `SecItemConfiguration`'s); `errSecItemNotFound` when
/// the key is not there.
public func SecIdentityCreateWithCertificate(
    _ keychainOrArray: CFTypeRef?, _ certificateRef: SecCertificate, _ identityRef: UnsafeMutablePointer<SecIdentity?>
) -> OSStatus {
    var found: CFTypeRef?
    let status = SecItemCopyMatching([
        kSecClass as String: kSecClassKey, kSecAttrKeyClass as String: kSecAttrKeyClassPrivate,
        kSecAttrApplicationLabel as String: certificateRef.certificate.publicKeyHash, kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
        kSecReturnRef as String: true,
    ] as CFDictionary, &found)
    guard status == errSecSuccess else { return status }
    guard let key = (found as? SecKey)?.asymmetricKey, let identity = try? Identity(certificate: certificateRef.certificate, privateKey: key) else {
        return errSecItemNotFound  // A key stored under the certificate's hash that is not its key: no identity.
    }
    identityRef.pointee = SecIdentity(identity)
    return errSecSuccess
}
