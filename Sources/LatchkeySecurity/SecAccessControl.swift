public import Foundation
public import Latchkey

/// `SecAccessControl`: an item's protection (its `kSecAttrAccessible…` class) and the constraints on using
/// it. Give it as `kSecAttrAccessControl` when adding or updating an item; `kSecReturnAttributes` hands it
/// back. On Linux, every constraint that asks for the user — `.userPresence`, `.devicePasscode`,
/// `.biometryAny`, `.biometryCurrentSet`, `.watch`, `.applicationPassword` — is met by the user typing the
/// keychain passphrase again (at the terminal, or in the agent's pinentry) before the item's secret is
/// released. Equal controls compare and hash equal, so one can be stored in `[String: AnyHashable]`.
public final class SecAccessControl: NSObject, AccessControlConvertible, @unchecked Sendable {
    // @unchecked: immutable (one `AccessControl` value).
    /// The protection and the constraints.
    public let accessControl: AccessControl

    /// Wraps an access control.
    public init(_ accessControl: AccessControl) {
        self.accessControl = accessControl
        super.init()
    }

    /// Equal protection and constraints.
    public override func isEqual(_ object: Any?) -> Bool {
        (object as? SecAccessControl)?.accessControl == accessControl
    }

    /// Consistent with `isEqual`.
    public override var hash: Int { accessControl.hashValue }

    /// `<SecAccessControl protection: ak, flags: 0x1>`.
    public override var description: String {
        "<SecAccessControl protection: \(accessControl.protection.rawValue), flags: 0x\(String(accessControl.flags.rawValue, radix: 16))>"
    }
}

/// `SecAccessControlCreateFlags`, with Apple's bit values.
public struct SecAccessControlCreateFlags: OptionSet, Hashable, Sendable {
    public let rawValue: CFOptionFlags
    /// Creates a set from Apple's bits.
    public init(rawValue: CFOptionFlags) { self.rawValue = rawValue }

    /// `kSecAccessControlUserPresence`.
    public static let userPresence = SecAccessControlCreateFlags(rawValue: AccessControlFlags.userPresence.rawValue)
    /// `kSecAccessControlBiometryAny`.
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: AccessControlFlags.biometryAny.rawValue)
    /// `kSecAccessControlTouchIDAny` (Apple's older name for `biometryAny`).
    public static let touchIDAny = biometryAny
    /// `kSecAccessControlBiometryCurrentSet`.
    public static let biometryCurrentSet = SecAccessControlCreateFlags(
        rawValue: AccessControlFlags.biometryCurrentSet.rawValue)
    /// `kSecAccessControlTouchIDCurrentSet` (Apple's older name for `biometryCurrentSet`).
    public static let touchIDCurrentSet = biometryCurrentSet
    /// `kSecAccessControlDevicePasscode`.
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: AccessControlFlags.devicePasscode.rawValue)
    /// `kSecAccessControlWatch`.
    public static let watch = SecAccessControlCreateFlags(rawValue: AccessControlFlags.companion.rawValue)
    /// `kSecAccessControlCompanion` (Apple's newer name for `watch`).
    public static let companion = watch
    /// `kSecAccessControlOr`.
    public static let or = SecAccessControlCreateFlags(rawValue: AccessControlFlags.or.rawValue)
    /// `kSecAccessControlAnd`.
    public static let and = SecAccessControlCreateFlags(rawValue: AccessControlFlags.and.rawValue)
    /// `kSecAccessControlPrivateKeyUsage`.
    public static let privateKeyUsage = SecAccessControlCreateFlags(
        rawValue: AccessControlFlags.privateKeyUsage.rawValue)
    /// `kSecAccessControlApplicationPassword`.
    public static let applicationPassword = SecAccessControlCreateFlags(
        rawValue: AccessControlFlags.applicationPassword.rawValue)
}

/// `SecAccessControlCreateWithFlags`: an access control for `protection` (one of the
/// `kSecAttrAccessible…` constants) and `flags`. Nil, with `error` set to an `NSOSStatusErrorDomain` error of
/// code `errSecParam`, for a protection that is not one of them or flags Apple refuses (`.or` with `.and`,
/// undefined bits). `allocator` is ignored.
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    func fail(_ detail: String) -> SecAccessControl? {
        error?.pointee = Unmanaged.passRetained(SecurityError(errSecParam, detail))
        return nil
    }
    guard let code = protection as? String, let accessibility = Accessibility(rawValue: code) else {
        return fail("the protection must be one of the kSecAttrAccessible constants")
    }
    let control = AccessControl(protection: accessibility, flags: AccessControlFlags(rawValue: flags.rawValue))
    do throws(KeychainError) {
        try control.validate()
    } catch {
        return fail(error.detail ?? error.message)
    }
    return SecAccessControl(control)
}

/// `SecAccessControlGetConstraints`' Linux counterpart: the flags the control was made with.
public func SecAccessControlGetFlags(_ accessControl: SecAccessControl) -> SecAccessControlCreateFlags {
    SecAccessControlCreateFlags(rawValue: accessControl.accessControl.flags.rawValue)
}
