/// The error of the friendly `Keychain` API: a small enum to switch on, each case keeping the full
/// `KeychainError` (Apple's status, message and detail).
///
/// ```swift
/// do {
///     try keychain.set("hunter2", forKey: "alice")
/// } catch .interactionNotAllowed {
///     // The keychain is locked: unlock it, or wait for "protected data available".
/// } catch {
///     print(error.status.rawValue, error.message)
/// }
/// ```
public enum KeychainFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// `errSecItemNotFound`.
    case itemNotFound(KeychainError)
    /// `errSecDuplicateItem`.
    case duplicateItem(KeychainError)
    /// `errSecInteractionNotAllowed`: the keychain is locked (or was never unlocked since it was opened).
    case interactionNotAllowed(KeychainError)
    /// `errSecAuthFailed`: a wrong passphrase.
    case authFailed(KeychainError)
    /// `errSecMissingEntitlement`: an access group the caller does not hold.
    case missingEntitlement(KeychainError)
    /// `errSecDecode`: a damaged item, or stored bytes that do not decode as the type asked for.
    case decode(KeychainError)
    /// `errSecParam`: bad input (an empty key, a value above the size limit, ...).
    case param(KeychainError)
    /// Any other status (`errSecIO`, `errSecDiskFull`, `errSecNoSuchKeychain`, ...).
    case other(KeychainError)

    /// Sorts a `KeychainError` into its case.
    public init(_ error: KeychainError) {
        switch error.status {
        case .itemNotFound: self = .itemNotFound(error)
        case .duplicateItem: self = .duplicateItem(error)
        case .interactionNotAllowed: self = .interactionNotAllowed(error)
        case .authFailed: self = .authFailed(error)
        case .missingEntitlement: self = .missingEntitlement(error)
        case .decode: self = .decode(error)
        case .param: self = .param(error)
        default: self = .other(error)
        }
    }

    /// The underlying error, with Apple's status and message.
    public var error: KeychainError {
        switch self {
        case .itemNotFound(let e), .duplicateItem(let e), .interactionNotAllowed(let e), .authFailed(let e),
            .missingEntitlement(let e), .decode(let e), .param(let e), .other(let e):
            e
        }
    }

    /// Apple's status code.
    public var status: KeychainStatus { error.status }
    /// Apple's message with the detail.
    public var message: String { error.message }
    public var description: String { error.description }
}

/// Runs `body`, turning a `KeychainError` into a `KeychainFailure`.
func failing<T>(_ body: () throws(KeychainError) -> T) throws(KeychainFailure) -> T {
    do {
        return try body()
    } catch {
        throw KeychainFailure(error)
    }
}
