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
