import FoundationEssentials
import LatchkeyPOSIX

/// Asks the user at the controlling terminal (`/dev/tty`, echo off) to confirm the keychain passphrase
/// before an item whose access control asks them is read or changed — how an embedded keychain meets
/// `.userPresence`, `.devicePasscode`, biometry and `.applicationPassword` constraints on Linux.
///
/// One attempt per request: an empty line or end of input (Ctrl-D) is `errSecUserCanceled`, a wrong
/// passphrase `errSecAuthFailed`, no terminal (a service, a pipeline without one) `errSecInteractionNotAllowed`.
public struct TerminalPresence: UserPresenceVerifier {
    /// A verifier that asks at the terminal.
    public init() {}

    public func confirm(_ request: PresenceRequest, verify: (Passphrase) throws(KeychainError) -> Void)
        throws(KeychainError)
    {
        let prompt = "\(request.message).\nKeychain passphrase to allow it (empty to refuse): "
        switch Terminal.askHidden(prompt: prompt) {
        case .noTerminal:
            throw KeychainError(
                .interactionNotAllowed, "the item needs the user's confirmation, and there is no terminal to ask on")
        case .endOfInput:
            throw KeychainError(.userCanceled, "the user refused the protected item")
        case .line(var bytes):
            defer { for index in bytes.indices { bytes[index] = 0 } }
            guard !bytes.isEmpty else { throw KeychainError(.userCanceled, "the user refused the protected item") }
            try verify(Passphrase(bytes: bytes))
        }
    }
}
