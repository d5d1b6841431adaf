import Latchkey
import LatchkeyPOSIX

/// What `tpm enroll`, `tpm set-lockout-auth`, `tpm status` and `doctor` say of the TPM's lockout
/// authorization, and enroll's question (docs/LATCHKEY-SECURITY.md, "The TPM"): while it is empty anyone who
/// can run TPM commands on the machine can reset the count of wrong passphrases, so the TPM bounds guesses
/// only as long as nobody does. The authorization itself is never shown: Latchkey keeps none.
enum TPMLockoutAuthorizationText {
    /// What an empty lockout authorization means, for every message that reports one.
    static let emptyMeaning =
        "anyone who can run TPM commands on this machine can reset its count of failed passphrase attempts, so the TPM bounds passphrase guesses only as long as nobody does"

    /// What a lockout authorization that is kept nowhere costs.
    static let keptNowhereCost =
        "a lockout then lifts only with time, or by clearing the TPM from the firmware, which destroys every key it sealed"

    /// `tpm status`'s line.
    static func statusLine(set: Bool) -> String {
        set
            ? "lockout authorization: set: only whoever holds it can reset the count of failed attempts"
            : "lockout authorization: empty: \(emptyMeaning) (latchkey tpm set-lockout-auth sets a random one that no one keeps)"
    }

    /// doctor's finding on an enrolled keychain's TPM whose lockout authorization is empty (none when it is set).
    static func doctorWarning(set: Bool) -> (String, String)? {
        set
            ? nil
            : (
                "warning",
                "TPM lockout authorization: empty: \(emptyMeaning) (tpm2_dictionarylockout -c); `latchkey tpm set-lockout-auth` sets a random one that no one keeps (\(keptNowhereCost))"
            )
    }

    /// What enroll and set-lockout-auth say on standard error of the lockout authorization after they ran.
    static func report(_ authorization: TPMLockoutAuthorization, context: CLIContext) {
        switch authorization {
        case .empty:
            context.warning(
                "the TPM's lockout authorization is empty: \(emptyMeaning); latchkey tpm set-lockout-auth sets a random one that no one keeps"
            )
        case .set:
            context.stderr.line(
                "latchkey: tpm: the TPM's lockout authorization was already set; Latchkey left it as it is: only whoever holds it can reset the count of failed attempts"
            )
        case .setNow:
            context.stderr.line(
                "latchkey: tpm: the TPM's lockout authorization is set now, to a random value kept nowhere: no one can reset the count of failed attempts; \(keptNowhereCost)"
            )
        }
    }

    /// Whether enroll sets a lockout authorization: `--set-lockout-auth` yes, `--leave-lockout-auth` no;
    /// without either, on a terminal and when the TPM's is empty, the user's answer to the question (no
    /// answer, no terminal: no).
    static func setting(_ arguments: ParsedArguments, context: CLIContext) throws -> Bool {
        if arguments.has(.setLockoutAuth) { return true }
        guard context.interactive, !arguments.has(.leaveLockoutAuth), FileDescriptor.standardInput.isTerminal,
            try TPMLockoutAuthorization.current == .empty
        else { return false }
        let answer = Terminal.readAnswer(
            prompt:
                "latchkey: tpm: the TPM's lockout authorization is empty: \(emptyMeaning). Set a random one that no one keeps (\(keptNowhereCost))? [y/N] "
        )
        return ["y", "yes"].contains(answer?.lowercased() ?? "")
    }
}
