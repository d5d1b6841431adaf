import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyTPM

/// The TPM's lockout authorization: the authValue of its lockout hierarchy, which resetting the
/// dictionary-attack counter (TPM2_DictionaryAttackLockReset), changing the attack parameters and TPM2_Clear
/// through that hierarchy need. TPMA_PERMANENT's lockoutAuthSet says whether it has one.
///
/// While it is empty — a new TPM, swtpm, most Linux PCs that Windows never provisioned — anyone who can run
/// TPM commands on the machine resets the counter at will (`tpm2_dictionarylockout -c`), so the TPM bounds
/// passphrase guesses only as long as nobody does. `latchkey tpm enroll --set-lockout-auth` (and
/// `latchkey tpm set-lockout-auth`) give it 32 random bytes that Latchkey keeps nowhere: the lockout
/// authorization is the whole machine's, not one keychain's — whoever holds it can reset the counter for every
/// keychain and every other user of the TPM, turn the protection off, or clear the TPM — and the recovery code
/// already opens the keychain without the TPM, so keeping it under the recovery code would buy back only the
/// passphrase's speed, at the price of a machine-wide credential written on paper. So a lockout is waited out
/// (one attempt comes back every recovery interval), or the TPM is cleared from the firmware, which destroys
/// every key it sealed. One that someone else set is never touched.
package enum TPMLockoutAuthorization: Sendable, Equatable {
    /// Empty: anyone who can run TPM commands on this machine can reset the failed-attempt counter.
    case empty
    /// Set before (by Windows, an administrator, an earlier `set-lockout-auth`): only whoever holds it can
    /// reset the counter; Latchkey leaves it as it is.
    case set
    /// Set just now by Latchkey to a random value it kept nowhere.
    case setNow

    /// The lockout authorization of the TPM this process uses (`TPMAddress.current`): `.empty` or `.set`.
    package static var current: TPMLockoutAuthorization {
        get throws(KeychainError) { try establish(setting: false) }
    }

    /// Gives the TPM this process uses (`TPMAddress.current`) a random lockout authorization that is kept
    /// nowhere, when its own is empty: `.setNow`; `.set` when someone had set one (left as it is). A refusal
    /// names the TPM's error and changes nothing.
    package static func setRandomIfEmpty() throws(KeychainError) -> TPMLockoutAuthorization {
        try establish(setting: true)
    }

    /// The TPM's lockout authorization (`.empty` or `.set`), made `.setNow` first when `setting` and empty.
    /// `pinned`: only on the TPM whose storage key has that name (an enrolled keychain's).
    static func establish(setting: Bool, pinned: Data? = nil) throws(KeychainError) -> TPMLockoutAuthorization {
        let connection = try TPMGuard.connect(pinned: pinned)
        defer { connection.close() }
        let state: TPMLockoutState
        do throws(TPMError) {
            state = try connection.lockoutState()
        } catch {
            throw TPMGuard.keychainError(error)
        }
        guard !state.lockoutAuthSet else { return .set }
        guard setting else { return .empty }
        do throws(TPMError) {
            // 32 bytes: SHA-256's size, the most a TPM takes for an authValue of a SHA-256 hierarchy. It lives
            // in this SecureBytes (wiped when it goes) and the command's buffer (wiped), and is sent encrypted.
            try connection.setLockoutAuth(SecureBytes(randomCount: 32))
        } catch {
            throw refusal(error)
        }
        return .setNow
    }

    /// The Apple status for a TPM that refused to read or set its lockout authorization.
    private static func refusal(_ error: TPMError) -> KeychainError {
        switch error.kind {
        case .noTPM, .wrongTPM:
            return TPMGuard.keychainError(error)
        case .authFailed, .lockout:
            return KeychainError(
                .authFailed,
                "the TPM refused to set a lockout authorization (\(error.detail)); its lockout authorization and the keychain are as they were",
                reason: "tpm.lockoutAuth")
        default:
            return KeychainError(
                .internal,
                "the TPM refused to set a lockout authorization (\(error.detail)); its lockout authorization and the keychain are as they were",
                reason: "tpm.lockoutAuth")
        }
    }
}

/// What `enrollTPM` and `enrollUnattended` did.
package struct TPMEnrollmentResult: Sendable {
    /// The recovery code, to show once; nil when the keychain was enrolled already (`enrollUnattended` again).
    package var recoveryCode: RecoveryCode?
    /// The TPM's lockout authorization after the enrolment: `.setNow` when the enrolment set it.
    package var lockoutAuthorization: TPMLockoutAuthorization
}
