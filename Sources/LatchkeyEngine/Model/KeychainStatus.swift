/// An `OSStatus` result of a keychain operation, with Apple's name and message.
///
/// The values and messages are Apple's (`Security/SecBase.h`), so a status read on Linux means what it
/// means on macOS and iOS.
///
/// ```swift
/// if error.status == .itemNotFound { ... }
/// ```
public struct KeychainStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The `OSStatus` value.
    public let rawValue: Int32

    /// Wraps an `OSStatus` value (known or not).
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `errSecSuccess` (0): No error.
    public static let success = KeychainStatus(rawValue: 0)
    /// `errSecUnimplemented` (−4): Function or operation not implemented.
    public static let unimplemented = KeychainStatus(rawValue: -4)
    /// `errSecDiskFull` (−34): The disk is full.
    public static let diskFull = KeychainStatus(rawValue: -34)
    /// `errSecIO` (−36): I/O error.
    public static let io = KeychainStatus(rawValue: -36)
    /// `errSecParam` (−50): One or more parameters passed to a function were not valid.
    public static let param = KeychainStatus(rawValue: -50)
    /// `errSecWrPerm` (−61): Write permissions error.
    public static let writePermission = KeychainStatus(rawValue: -61)
    /// `errSecAllocate` (−108): Failed to allocate memory.
    public static let allocate = KeychainStatus(rawValue: -108)
    /// `errSecUserCanceled` (−128): User canceled the operation.
    public static let userCanceled = KeychainStatus(rawValue: -128)
    /// `errSecNotAvailable` (−25291): No keychain is available.
    public static let notAvailable = KeychainStatus(rawValue: -25291)
    /// `errSecReadOnly` (−25292): This keychain cannot be modified.
    public static let readOnly = KeychainStatus(rawValue: -25292)
    /// `errSecAuthFailed` (−25293): The user name or passphrase you entered is not correct.
    public static let authFailed = KeychainStatus(rawValue: -25293)
    /// `errSecNoSuchKeychain` (−25294): The specified keychain could not be found.
    public static let noSuchKeychain = KeychainStatus(rawValue: -25294)
    /// `errSecInvalidKeychain` (−25295): The specified keychain is not a valid keychain file.
    public static let invalidKeychain = KeychainStatus(rawValue: -25295)
    /// `errSecDuplicateKeychain` (−25296): A keychain with the same name already exists.
    public static let duplicateKeychain = KeychainStatus(rawValue: -25296)
    /// `errSecDuplicateItem` (−25299): The specified item already exists in the keychain.
    public static let duplicateItem = KeychainStatus(rawValue: -25299)
    /// `errSecItemNotFound` (−25300): The specified item could not be found in the keychain.
    public static let itemNotFound = KeychainStatus(rawValue: -25300)
    /// `errSecDataTooLarge` (−25302): This item contains information which is too large or in a format
    /// that cannot be displayed.
    public static let dataTooLarge = KeychainStatus(rawValue: -25302)
    /// `errSecNoSuchAttr` (−25303): The specified attribute does not exist.
    public static let noSuchAttribute = KeychainStatus(rawValue: -25303)
    /// `errSecInvalidItemRef` (−25304): The specified item is no longer valid.
    public static let invalidItemRef = KeychainStatus(rawValue: -25304)
    /// `errSecNoSuchClass` (−25306): The specified item class does not exist.
    public static let noSuchClass = KeychainStatus(rawValue: -25306)
    /// `errSecNoDefaultKeychain` (−25307): A default keychain could not be found.
    public static let noDefaultKeychain = KeychainStatus(rawValue: -25307)
    /// `errSecInteractionNotAllowed` (−25308): User interaction is not allowed.
    public static let interactionNotAllowed = KeychainStatus(rawValue: -25308)
    /// `errSecDataNotAvailable` (−25316): The contents of this item cannot be retrieved.
    public static let dataNotAvailable = KeychainStatus(rawValue: -25316)
    /// `errSecDecode` (−26275): Unable to decode the provided data.
    public static let decode = KeychainStatus(rawValue: -26275)
    /// `errSecInternal` (−26276): An internal error occurred.
    public static let `internal` = KeychainStatus(rawValue: -26276)
    /// `errSecMissingEntitlement` (−34018): A required entitlement isn't present.
    public static let missingEntitlement = KeychainStatus(rawValue: -34018)

    private static let table: [Int32: (name: String, message: String)] = [
        0: ("errSecSuccess", "No error."),
        -4: ("errSecUnimplemented", "Function or operation not implemented."),
        -34: ("errSecDiskFull", "The disk is full."),
        -36: ("errSecIO", "I/O error."),
        -50: ("errSecParam", "One or more parameters passed to a function were not valid."),
        -61: ("errSecWrPerm", "Write permissions error."),
        -108: ("errSecAllocate", "Failed to allocate memory."),
        -128: ("errSecUserCanceled", "User canceled the operation."),
        -25291: ("errSecNotAvailable", "No keychain is available."),
        -25292: ("errSecReadOnly", "This keychain cannot be modified."),
        -25293: ("errSecAuthFailed", "The user name or passphrase you entered is not correct."),
        -25294: ("errSecNoSuchKeychain", "The specified keychain could not be found."),
        -25295: ("errSecInvalidKeychain", "The specified keychain is not a valid keychain file."),
        -25296: ("errSecDuplicateKeychain", "A keychain with the same name already exists."),
        -25299: ("errSecDuplicateItem", "The specified item already exists in the keychain."),
        -25300: ("errSecItemNotFound", "The specified item could not be found in the keychain."),
        -25302: (
            "errSecDataTooLarge",
            "This item contains information which is too large or in a format that cannot be displayed."
        ),
        -25303: ("errSecNoSuchAttr", "The specified attribute does not exist."),
        -25304: ("errSecInvalidItemRef", "The specified item is no longer valid."),
        -25306: ("errSecNoSuchClass", "The specified item class does not exist."),
        -25307: ("errSecNoDefaultKeychain", "A default keychain could not be found."),
        -25308: ("errSecInteractionNotAllowed", "User interaction is not allowed."),
        -25316: ("errSecDataNotAvailable", "The contents of this item cannot be retrieved."),
        -26275: ("errSecDecode", "Unable to decode the provided data."),
        -26276: ("errSecInternal", "An internal error occurred."),
        -34018: ("errSecMissingEntitlement", "A required entitlement isn't present."),
    ]

    /// Every status this type names, in ascending order of value.
    public static var allKnown: [KeychainStatus] { table.keys.sorted().map(KeychainStatus.init(rawValue:)) }

    /// Apple's constant name, such as `errSecItemNotFound`; `OSStatus <n>` for an unknown value.
    public var name: String { Self.table[rawValue]?.name ?? "OSStatus \(rawValue)" }

    /// Apple's message, as `SecCopyErrorMessageString` gives it.
    public var message: String { Self.table[rawValue]?.message ?? "OSStatus \(rawValue)" }

    /// `errSecItemNotFound: The specified item could not be found in the keychain. (-25300)`.
    public var description: String { "\(name): \(message) (\(rawValue))" }
}
