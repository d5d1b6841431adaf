/// When an item's data can be read (`kSecAttrAccessible`), with Apple's codes.
///
/// | value | available | may sync |
/// |---|---|---|
/// | `whenUnlocked` (default) | while the keychain is unlocked | yes |
/// | `afterFirstUnlock` | from the first unlock on, also while locked again | yes |
/// | `always` (deprecated by Apple) | always, even before the first unlock | yes |
/// | `…ThisDeviceOnly` | as above | never |
public enum Accessibility: String, CaseIterable, Hashable, Sendable {
    /// `kSecAttrAccessibleWhenUnlocked` ("ak"), the default for every class but certificates.
    case whenUnlocked = "ak"
    /// `kSecAttrAccessibleAfterFirstUnlock` ("ck").
    case afterFirstUnlock = "ck"
    /// `kSecAttrAccessibleAlways` ("dk"), the default for certificates.
    case always = "dk"
    /// `kSecAttrAccessibleWhenUnlockedThisDeviceOnly` ("aku").
    case whenUnlockedThisDeviceOnly = "aku"
    /// `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly` ("cku").
    case afterFirstUnlockThisDeviceOnly = "cku"
    /// `kSecAttrAccessibleAlwaysThisDeviceOnly` ("dku").
    case alwaysThisDeviceOnly = "dku"
    /// `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly` ("akpu"). A Latchkey keychain always has a
    /// passphrase, so this behaves as `whenUnlockedThisDeviceOnly`.
    case whenPasscodeSetThisDeviceOnly = "akpu"

    /// How availability follows the lock state.
    public enum Availability: Sendable {
        /// Only while unlocked (`ak`, `aku`, `akpu`).
        case whenUnlocked
        /// From the first unlock on (`ck`, `cku`).
        case afterFirstUnlock
        /// Always (`dk`, `dku`).
        case always
    }

    /// How this class's availability follows the lock state.
    public var availability: Availability {
        switch self {
        case .whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly: .whenUnlocked
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly: .afterFirstUnlock
        case .always, .alwaysThisDeviceOnly: .always
        }
    }

    /// The class with the same availability that stays on this device (itself when it does).
    public var thisDeviceOnly: Accessibility {
        switch self {
        case .whenUnlocked: .whenUnlockedThisDeviceOnly
        case .afterFirstUnlock: .afterFirstUnlockThisDeviceOnly
        case .always: .alwaysThisDeviceOnly
        default: self
        }
    }

    /// Whether items of this class stay on this device: never synchronized, not exported by default.
    public var isThisDeviceOnly: Bool {
        switch self {
        case .whenUnlocked, .afterFirstUnlock, .always: false
        default: true
        }
    }
}
