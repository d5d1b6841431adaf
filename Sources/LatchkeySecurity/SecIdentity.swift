public import Foundation
public import Latchkey

/// `SecIdentity`: a certificate and its private key — in this process, or held by the keychain (an
/// identity of a key made with `kSecAttrTokenID`, whose `SecKey` signs and decrypts where the key is held).
/// `SecItemAdd` with it as `kSecValueRef` stores both (a held key is stored already: only the certificate);
/// `kSecClassIdentity` searches find the certificates that have their private key in the keychain.
public final class SecIdentity: NSObject, IdentityConvertible, @unchecked Sendable {
    // @unchecked: immutable (one `IdentityReference`, itself Sendable).
    /// The certificate and the key.
    public let identityReference: IdentityReference

    /// Wraps an identity whose key is in this process.
    public init(_ identity: Identity) {
        self.identityReference = .inProcess(identity)
        super.init()
    }

    /// Wraps an identity whose key the keychain holds.
    public init(held identity: HeldIdentity) {
        self.identityReference = .held(identity)
        super.init()
    }

    /// Wraps an identity, its key in this process or held by the keychain.
    public init(_ reference: IdentityReference) {
        self.identityReference = reference
        super.init()
    }

    /// The identity when its key is in this process; nil when the keychain holds it.
    public var identity: Identity? {
        if case .inProcess(let identity) = identityReference { identity } else { nil }
    }

    /// Same certificate, same key.
    public override func isEqual(_ object: Any?) -> Bool {
        (object as? SecIdentity)?.identityReference == identityReference
    }

    /// Consistent with `isEqual`.
    public override var hash: Int { identityReference.hashValue }

    /// `<SecIdentity "www.example.com">`: the certificate's subject summary, never more.
    public override var description: String {
        "<SecIdentity \(identityReference.certificate.subjectSummary.map { "\"\($0)\"" } ?? "without a subject summary")>"
    }
}

/// `SecIdentityCopyCertificate`.
public func SecIdentityCopyCertificate(
    _ identityRef: SecIdentity, _ certificateRef: UnsafeMutablePointer<SecCertificate?>
) -> OSStatus {
    certificateRef.pointee = SecCertificate(identityRef.identityReference.certificate)
    return errSecSuccess
}

/// `SecIdentityCopyPrivateKey`: the key in this process, or the `SecKey` of the key the keychain holds.
public func SecIdentityCopyPrivateKey(_ identityRef: SecIdentity, _ privateKeyRef: UnsafeMutablePointer<SecKey?>)
    -> OSStatus
{
    switch identityRef.identityReference.privateKey {
    case .inProcess(let key): privateKeyRef.pointee = SecKey(key)
    case .held(let key): privateKeyRef.pointee = SecKey(held: key)
    }
    return errSecSuccess
}

/// `SecIdentityCreateWithCertificate`: the identity of a certificate whose private key is in the keychain
/// (`keychainOrArray` is ignored: the keychain is `SecItemConfiguration`'s); `errSecItemNotFound` when
/// the key is not there.
public func SecIdentityCreateWithCertificate(
    _ keychainOrArray: CFTypeRef?, _ certificateRef: SecCertificate, _ identityRef: UnsafeMutablePointer<SecIdentity?>
) -> OSStatus {
    var found: CFTypeRef?
    let status = SecItemCopyMatching(
        [
            kSecClass as String: kSecClassKey, kSecAttrKeyClass as String: kSecAttrKeyClassPrivate,
            kSecAttrApplicationLabel as String: certificateRef.certificate.publicKeyHash,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
            kSecReturnRef as String: true,
        ] as CFDictionary, &found)
    guard status == errSecSuccess else { return status }
    guard let key = found as? SecKey else { return errSecItemNotFound }
    do {
        identityRef.pointee = SecIdentity(
            try IdentityReference(certificate: certificateRef.certificate, privateKey: key.keyReference))
    } catch {
        return errSecItemNotFound  // A key stored under the certificate's hash that is not its key: no identity.
    }
    return errSecSuccess
}
