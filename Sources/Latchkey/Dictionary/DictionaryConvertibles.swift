/// A value that stands for an `AccessControl` in an Apple-style dictionary (`kSecAttrAccessControl`):
/// `LatchkeySecurity`'s `SecAccessControl`, or an `AccessControl` itself.
public protocol AccessControlConvertible {
    /// The access control it stands for.
    var accessControl: AccessControl { get }
}

extension AccessControl: AccessControlConvertible {
    /// Itself.
    public var accessControl: AccessControl { self }
}

/// A value that stands for a `Certificate` in an Apple-style dictionary (`kSecValueRef`, and what
/// `kSecReturnRef` hands back): `LatchkeySecurity`'s `SecCertificate`, or a `Certificate` itself.
public protocol CertificateConvertible {
    /// The certificate it stands for.
    var certificate: Certificate { get }
}

extension Certificate: CertificateConvertible {
    /// Itself.
    public var certificate: Certificate { self }
}

/// A key as an Apple-style dictionary names it: one in this process, or one the keychain holds.
public enum KeyReference: Sendable, Hashable {
    /// A key in this process.
    case inProcess(AsymmetricKey)
    /// A private key the keychain holds (`kSecAttrTokenID`).
    case held(HeldKey)
}

/// A value that stands for a key in an Apple-style dictionary (`kSecValueRef`, and what `kSecReturnRef`
/// hands back): `LatchkeySecurity`'s `SecKey`, an `AsymmetricKey` or a `HeldKey`.
public protocol KeyConvertible {
    /// The key it stands for.
    var keyReference: KeyReference { get }
}

extension AsymmetricKey: KeyConvertible {
    /// Itself, in this process.
    public var keyReference: KeyReference { .inProcess(self) }
}

extension HeldKey: KeyConvertible {
    /// Itself, held by the keychain.
    public var keyReference: KeyReference { .held(self) }
}

/// An identity as an Apple-style dictionary names it: one whose private key is in this process, or one
/// whose private key the keychain holds.
public enum IdentityReference: Sendable, Hashable {
    /// A certificate and its private key, both in this process.
    case inProcess(Identity)
    /// A certificate and the private key the keychain holds for it.
    case held(HeldIdentity)

    /// Pairs a certificate with its private key, wherever that key is; `KeyError` `.param` when the key is
    /// public or not the certificate's.
    public init(certificate: Certificate, privateKey: KeyReference) throws(KeyError) {
        switch privateKey {
        case .inProcess(let key): self = .inProcess(try Identity(certificate: certificate, privateKey: key))
        case .held(let key): self = .held(try HeldIdentity(certificate: certificate, privateKey: key))
        }
    }

    /// The certificate.
    public var certificate: Certificate {
        switch self {
        case .inProcess(let identity): identity.certificate
        case .held(let identity): identity.certificate
        }
    }

    /// The private key.
    public var privateKey: KeyReference {
        switch self {
        case .inProcess(let identity): .inProcess(identity.privateKey)
        case .held(let identity): .held(identity.privateKey)
        }
    }
}

/// A value that stands for an identity in an Apple-style dictionary (`kSecValueRef`, and what
/// `kSecReturnRef` hands back for `kSecClassIdentity`): `LatchkeySecurity`'s `SecIdentity`, an `Identity`
/// or a `HeldIdentity`.
public protocol IdentityConvertible {
    /// The identity it stands for.
    var identityReference: IdentityReference { get }
}

extension Identity: IdentityConvertible {
    /// Itself, its key in this process.
    public var identityReference: IdentityReference { .inProcess(self) }
}

extension HeldIdentity: IdentityConvertible {
    /// Itself, its key held by the keychain.
    public var identityReference: IdentityReference { .held(self) }
}

/// A value that stands for a trust policy in an Apple-style dictionary (`kSecMatchPolicy`):
/// `LatchkeySecurity`'s `SecPolicy`, or a `TrustPolicy` itself.
public protocol PolicyConvertible {
    /// The policy it stands for.
    var trustPolicy: TrustPolicy { get }
}

extension TrustPolicy: PolicyConvertible {
    /// Itself.
    public var trustPolicy: TrustPolicy { self }
}
