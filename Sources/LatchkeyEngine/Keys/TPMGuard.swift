import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyTPM

/// The engine's use of the TPM: connecting to the pinned storage key, unsealing, and turning every TPM
/// failure into an Apple status whose message names the TPM's cause.
enum TPMGuard {
    /// A connection to the TPM this process uses (`TPMAddress.current`); with `pinned`, only to the TPM
    /// whose storage key has that name.
    static func connect(pinned: Data? = nil) throws(KeychainError) -> TPMConnection {
        do {
            return try TPMConnection(address: TPMAddress.current, pinnedPrimary: pinned)
        } catch {
            throw keychainError(error)
        }
    }

    /// Runs `body` on a connection, mapping TPM failures (a wrong authorization with the lockout state
    /// the TPM reports just after it).
    static func with<R>(pinned: Data? = nil, _ body: (TPMConnection) throws(TPMError) -> R) throws(KeychainError) -> R {
        let connection = try connect(pinned: pinned)
        defer { connection.close() }
        do {
            return try body(connection)
        } catch {
            // Reading the state after a failure is best effort: the failure is what is reported.
            let state = error.kind == .authFailed || error.kind == .lockout ? try? connection.lockoutState() : nil
            throw keychainError(error, lockout: state)
        }
    }

    /// The secret the keybag's key needs, released by the TPM for the passphrase's Argon2id output.
    static func unsealPassphraseSecret(_ enrollment: TPMEnrollment, root: SecureBytes) throws(KeychainError)
        -> SecureBytes
    {
        let auth = TPMEnrollment.authValue(root: root)
        return try with(pinned: enrollment.primaryName) { connection throws(TPMError) in
            try connection.unseal(enrollment.passphraseObject, auth: auth)
        }
    }

    /// The Apple status for a TPM failure, with the TPM's cause in the detail.
    static func keychainError(_ error: TPMError, lockout: TPMLockoutState? = nil) -> KeychainError {
        switch error.kind {
        case .noTPM:
            return KeychainError(
                .notAvailable,
                "\(error.detail); this keychain is bound to a TPM: set \(TPMAddress.environmentVariable), or open it with its recovery code (latchkey tpm recover)",
                reason: "tpm.noTPM")
        case .wrongTPM:
            return KeychainError(
                .notAvailable,
                "the TPM at \(error.address) is not the one this keychain is sealed to (another machine, or this TPM was cleared); its recovery code opens it (latchkey tpm recover)",
                reason: "tpm.wrongTPM")
        case .authFailed:
            var detail = "wrong passphrase; the TPM counted the attempt against its dictionary-attack lockout"
            if let lockout {
                let left = max(0, lockout.maxTries - lockout.failedTries)
                detail +=
                    " (\(left) of \(lockout.maxTries) attempts left; one is forgiven every \(lockout.recoveryInterval) s)"
            }
            return KeychainError(.authFailed, detail, reason: "tpm.authFailed")
        case .lockout:
            return KeychainError(
                .authFailed,
                "the TPM is in dictionary-attack lockout after too many wrong passphrases and refuses every attempt until it lifts (\(lockout.map { "in about \($0.recoveryInterval) s" } ?? "one attempt is forgiven per recovery interval")); the recovery code opens the keychain meanwhile (latchkey tpm recover)",
                reason: "tpm.lockout")
        case .policyFailed:
            return KeychainError(
                .interactionNotAllowed,
                "the TPM refused: the PCR values are not the ones the keychain was sealed to (\(error.detail)); open it with the passphrase or the recovery code",
                reason: "tpm.pcrMismatch")
        case .damaged:
            return KeychainError(.decode, "the TPM-sealed object is damaged (\(error.detail))", reason: "tpm.damaged")
        case .failed:
            return KeychainError(.internal, "the TPM refused: \(error.detail)", reason: "tpm.failed")
        }
    }
}
