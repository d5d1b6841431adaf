// The pieces of Apple's LocalAuthentication EllipticCurveKeyPair names — LAContext, LAPolicy, LAError — on
// Linux, where the framework does not exist (it is not Security). Latchkey asks the user itself (the keychain
// passphrase, through the agent's pinentry or the terminal) and takes `kSecUseAuthenticationContext` without
// reading it, so this context asks nothing: no biometrics are available. Test-harness shim only.
import Foundation

public enum LAPolicy: Int {
    case deviceOwnerAuthenticationWithBiometrics = 1
    case deviceOwnerAuthentication = 2
}

/// LocalAuthentication's error domain.
public let LAErrorDomain = "com.apple.LocalAuthentication"

/// `LAError`: an error of `LAErrorDomain`.
public struct LAError: Error {
    public enum Code: Int {
        case authenticationFailed = -1
        case userCancel = -2
        case userFallback = -3
        case systemCancel = -4
        case passcodeNotSet = -5
        case biometryNotAvailable = -6
        case biometryNotEnrolled = -7
        case biometryLockout = -8
        case notInteractive = -1004
    }
    public static var authenticationFailed: Code { .authenticationFailed }
    public static var userCancel: Code { .userCancel }
    public let _nsError: NSError
    public init(_nsError: NSError) { self._nsError = _nsError }
    public var code: Code { Code(rawValue: _nsError.code) ?? .authenticationFailed }
}

/// `LAContext`: an authentication context that has nothing to evaluate with.
open class LAContext: NSObject {
    open var localizedReason: String = ""
    open var interactionNotAllowed: Bool = false
    open var touchIDAuthenticationAllowableReuseDuration: TimeInterval = 0
    public override init() { super.init() }
    /// No biometrics and no device passcode through LocalAuthentication on Linux.
    open func canEvaluatePolicy(_ policy: LAPolicy, error: UnsafeMutablePointer<NSError?>?) -> Bool {
        error?.pointee = NSError(domain: LAErrorDomain, code: LAError.Code.biometryNotAvailable.rawValue)
        return false
    }
}
