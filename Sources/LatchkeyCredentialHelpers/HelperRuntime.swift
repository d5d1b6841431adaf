import Latchkey
import LatchkeyPOSIX

/// Hardening every helper applies first, as `latchkey` does: no core file, a crash ends the process with
/// one line and no memory shown, and a closed pipe is an error instead of a signal.
enum HelperRuntime {
    static func harden(name: String) {
        Processes.disableCoreDumps()
        Signals.ignoreBrokenPipes()
        do {
            try Signals.exitQuietlyOnCrash(name: name)
        } catch {
            HelperOutput.standard.error("\(name): warning: a crash could print memory that holds secrets (\(error))")
        }
    }

    /// The exit status for a keychain failure: the low byte of Apple's status, as `security` and `latchkey`
    /// exit (36 for errSecInteractionNotAllowed, 51 for a wrong passphrase), 1 when that byte would read as
    /// success or as a usage (64) or input (65) error.
    static func exitStatus(for status: KeychainStatus) -> Int32 {
        let low = Int32(UInt8(truncatingIfNeeded: status.rawValue))
        return [0, usageStatus, badInputStatus].contains(low) ? 1 : low
    }

    /// A usage error (sysexits' EX_USAGE).
    static let usageStatus: Int32 = 64
    /// Input that breaks the protocol (sysexits' EX_DATAERR).
    static let badInputStatus: Int32 = 65

    /// The message for a keychain failure: Apple's message and the detail, and what to do when the keychain
    /// could not be unlocked.
    static func message(for error: KeychainError) -> String {
        var text = error.message
        if error.status == .interactionNotAllowed {
            text +=
                "; unlock the keychain for the agent with `latchkey unlock-keychain` and register this helper with"
                + " it (see `latchkey help register-application`), or give the passphrase in LATCHKEY_PASSPHRASE"
        }
        return text
    }
}
