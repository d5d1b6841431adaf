import FoundationEssentials
internal import LatchkeyTPM

/// The engine's use of the TPM for the keys made inside it (`kSecAttrTokenIDSecureEnclave` P-256 keys): one
/// connection per operation (load, use, flush: a TPM without a resource manager keeps nothing between calls),
/// and every TPM failure turned into an Apple status whose message names the TPM's cause.
enum TPMKeyGuard {
    /// Runs `body` on a connection to the TPM this process uses; with `pinned`, only to the TPM whose
    /// storage key has that name (the one that made the key).
    static func with<R>(pinned: Data?, _ body: (TPMConnection) throws(TPMError) -> R) throws(KeychainError) -> R {
        let connection: TPMConnection
        do {
            connection = try TPMConnection(address: TPMAddress.current, pinnedPrimary: pinned)
        } catch {
            throw keychainError(error)
        }
        defer { connection.close() }
        do {
            return try body(connection)
        } catch {
            throw keychainError(error)
        }
    }

    /// The Apple status for a failure of a TPM-made key: `errSecNotAvailable` when no TPM answers (or it went
    /// away mid-call) or it is not the TPM that made the key, `errSecDecode` for a damaged object.
    static func keychainError(_ error: TPMError) -> KeychainError {
        switch error.kind {
        case .noTPM:
            return KeychainError(
                .notAvailable,
                "the key lives in a TPM, and \(error.detail); set \(TPMAddress.environmentVariable) to the TPM that made it",
                reason: "tpm.noTPM")
        case .wrongTPM:
            return KeychainError(
                .notAvailable,
                "the key was made inside another TPM than the one at \(error.address) (another machine, or this TPM was cleared): only the TPM that made it can use it",
                reason: "tpm.wrongTPM")
        case .damaged:
            return KeychainError(
                .decode, "the TPM-made key's object is damaged (\(error.detail))", reason: "tpm.damaged")
        case .authFailed, .lockout, .policyFailed, .failed:
            return KeychainError(
                .internal, "the TPM refused the key's operation: \(error.detail)", reason: "tpm.failed")
        }
    }
}
