import FoundationEssentials

/// The constraints of an access control (`SecAccessControlCreateFlags`), with Apple's bit values.
///
/// On Linux every constraint that asks for the user — presence, passcode, biometry, a paired watch, an
/// application password — is met the same way: the user confirms the keychain passphrase again (at the
/// terminal, or through the agent's pinentry) before the item's secret is released. `privateKeyUsage`
/// concerns Secure Enclave keys and asks for nothing here.
public struct AccessControlFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt
    /// Creates a set from Apple's bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// `kSecAccessControlUserPresence` (1 << 0).
    public static let userPresence = AccessControlFlags(rawValue: 1 << 0)
    /// `kSecAccessControlBiometryAny` (1 << 1), also `touchIDAny`.
    public static let biometryAny = AccessControlFlags(rawValue: 1 << 1)
    /// `kSecAccessControlBiometryCurrentSet` (1 << 3), also `touchIDCurrentSet`.
    public static let biometryCurrentSet = AccessControlFlags(rawValue: 1 << 3)
    /// `kSecAccessControlDevicePasscode` (1 << 4).
    public static let devicePasscode = AccessControlFlags(rawValue: 1 << 4)
    /// `kSecAccessControlWatch` / `companion` (1 << 5).
    public static let companion = AccessControlFlags(rawValue: 1 << 5)
    /// `kSecAccessControlOr` (1 << 14): any one constraint suffices.
    public static let or = AccessControlFlags(rawValue: 1 << 14)
    /// `kSecAccessControlAnd` (1 << 15): every constraint must be met.
    public static let and = AccessControlFlags(rawValue: 1 << 15)
    /// `kSecAccessControlPrivateKeyUsage` (1 << 30): a Secure Enclave key may be used.
    public static let privateKeyUsage = AccessControlFlags(rawValue: 1 << 30)
    /// `kSecAccessControlApplicationPassword` (1 << 31).
    public static let applicationPassword = AccessControlFlags(rawValue: 1 << 31)

    /// Every bit Apple defines.
    public static let known: AccessControlFlags = [
        .userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .companion, .or, .and, .privateKeyUsage,
        .applicationPassword,
    ]

    /// The constraints that ask the user before a secret is released.
    public static let askingTheUser: AccessControlFlags = [
        .userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .companion, .applicationPassword,
    ]
}

/// An item's access control (`kSecAttrAccessControl`): its protection — the accessibility class its data
/// lives in — and the constraints on using it.
///
/// Stored with the item (attribute `accc`); the item's `pdmn` is the protection. An item whose constraints
/// ask the user (`requiresUserPresence`) releases its secret only after the user confirms the keychain
/// passphrase again; its attributes stay readable without that.
public struct AccessControl: Hashable, Sendable, CustomStringConvertible {
    /// The accessibility class (`kSecAttrAccessible…`) the item's data is protected by.
    public var protection: Accessibility
    /// The constraints.
    public var flags: AccessControlFlags

    /// An access control; `validate()` says whether an item may carry it.
    public init(protection: Accessibility, flags: AccessControlFlags) {
        self.protection = protection
        self.flags = flags
    }

    /// Whether reading or changing the item's secret needs the user's confirmation.
    public var requiresUserPresence: Bool { !flags.isDisjoint(with: .askingTheUser) }

    /// `errSecParam` for constraints Apple refuses: `or` together with `and`, or bits Apple does not define.
    public func validate() throws(KeychainError) {
        if flags.contains(.or) && flags.contains(.and) {
            throw KeychainError.param("an access control cannot combine kSecAccessControlOr with kSecAccessControlAnd")
        }
        let unknown = flags.subtracting(.known)
        if !unknown.isEmpty {
            throw KeychainError.param("access control flags 0x\(String(unknown.rawValue, radix: 16)) are not defined")
        }
    }

    /// `AccessControl(ak, flags 0x1)`.
    public var description: String {
        "AccessControl(\(protection.rawValue), flags 0x\(String(flags.rawValue, radix: 16)))"
    }

    private static let magic = Array("lkac1".utf8)

    /// The attribute value stored under `accc`: "lkac1", the protection code's length and bytes, the flags
    /// as eight big-endian bytes.
    public var attributeValue: AttributeValue {
        var bytes = Self.magic
        let code = Array(protection.rawValue.utf8)
        bytes.append(UInt8(code.count))
        bytes.append(contentsOf: code)
        withUnsafeBytes(of: UInt64(flags.rawValue).bigEndian) { bytes.append(contentsOf: $0) }
        return .data(Data(bytes))
    }

    /// Decodes an `accc` attribute value; nil for anything that is not one.
    public init?(attributeValue: AttributeValue) {
        guard case .data(let data) = attributeValue else { return nil }
        let bytes = Array(data)
        let prefix = Self.magic.count
        guard bytes.count > prefix, Array(bytes.prefix(prefix)) == Self.magic else { return nil }
        let codeLength = Int(bytes[prefix])
        guard bytes.count == prefix + 1 + codeLength + 8,
            let code = String(bytes: bytes[(prefix + 1)..<(prefix + 1 + codeLength)], encoding: .utf8),
            let protection = Accessibility(rawValue: code)
        else { return nil }
        let raw = bytes.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self.init(protection: protection, flags: AccessControlFlags(rawValue: UInt(raw)))
    }
}

/// What a search or update does when an item's secret needs the user's confirmation
/// (`kSecUseAuthenticationUI`).
public enum AuthenticationUI: String, Hashable, Sendable, CaseIterable {
    /// Ask the user (`kSecUseAuthenticationUIAllow`, the default).
    case allow = "u_AuthUIA"
    /// Fail with `errSecInteractionNotAllowed` instead of asking (`kSecUseAuthenticationUIFail`).
    case fail = "u_AuthUIF"
    /// Leave such items out of the results (`kSecUseAuthenticationUISkip`).
    case skip = "u_AuthUIS"
}

/// What the user is asked to confirm, for whoever asks them (a terminal prompt, pinentry).
public struct PresenceRequest: Hashable, Sendable {
    /// The application asking.
    public let applicationIdentifier: String
    /// Its reason (`kSecUseOperationPrompt`), if it gave one.
    public let operationPrompt: String?

    /// A request.
    public init(applicationIdentifier: String, operationPrompt: String?) {
        self.applicationIdentifier = applicationIdentifier
        self.operationPrompt = operationPrompt
    }

    /// The text shown to the user: the application, and its reason — with every control character (an
    /// escape sequence that could redraw the prompt, a newline that could fake another line) shown as `?`.
    public var message: String {
        let reason = operationPrompt.map { ": \($0)" } ?? ""
        let text =
            "\(Self.printable(applicationIdentifier)) wants to use a protected keychain item\(Self.printable(reason))"
        return text
    }

    private static func printable(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format
                        ? "?" : scalar
                }))
    }
}

/// Asks the user to confirm their presence by entering the keychain passphrase again; `verify` checks it
/// against the keychain (Argon2id).
///
/// Throws `errSecUserCanceled` when the user declines, `errSecAuthFailed` when `verify` refuses the
/// passphrase, `errSecInteractionNotAllowed` when nobody can be asked.
public protocol UserPresenceVerifier: Sendable {
    /// Asks, and returns once a passphrase that `verify` accepts was entered.
    func confirm(_ request: PresenceRequest, verify: (Passphrase) throws(KeychainError) -> Void) throws(KeychainError)
}
