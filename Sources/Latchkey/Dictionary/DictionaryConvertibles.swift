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

/// A value that stands for an `AsymmetricKey` in an Apple-style dictionary (`kSecValueRef`, and what
/// `kSecReturnRef` hands back): `LatchkeySecurity`'s `SecKey`, or an `AsymmetricKey` itself.
public protocol KeyConvertible {
    /// The key it stands for.
    var asymmetricKey: AsymmetricKey { get }
}

extension AsymmetricKey: KeyConvertible {
    /// Itself.
    public var asymmetricKey: AsymmetricKey { self }
}

/// A value that stands for an `Identity` in an Apple-style dictionary (`kSecValueRef`, and what
/// `kSecReturnRef` hands back for `kSecClassIdentity`): `LatchkeySecurity`'s `SecIdentity`, or an `Identity`.
public protocol IdentityConvertible {
    /// The identity it stands for.
    var identity: Identity { get }
}

extension Identity: IdentityConvertible {
    /// Itself.
    public var identity: Identity { self }
}
