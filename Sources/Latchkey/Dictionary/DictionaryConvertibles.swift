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
