package import FoundationEssentials

/// A TPM operation that failed: what kind of failure it was (what the keychain tells its user) and the
/// TPM's or tpm2-tss's own words for it. Never holds a secret.
package struct TPMError: Error, Sendable, CustomStringConvertible {
    /// The kinds of failure callers tell apart.
    package enum Kind: Sendable, Equatable {
        /// No TPM answers at the address (none there, not running, or it went away mid-call).
        case noTPM
        /// The authorization (authValue) was wrong; for a DA-protected object the TPM counted it.
        case authFailed
        /// The TPM is in dictionary-attack lockout and refuses DA-protected objects for now.
        case lockout
        /// A policy (PCR values, a signed policy) is not satisfied.
        case policyFailed
        /// The object was sealed by another TPM (or this one before it was cleared).
        case wrongTPM
        /// A sealed object that is malformed or was altered.
        case damaged
        /// Anything else the TPM refused.
        case failed
    }

    /// The kind of failure.
    package let kind: Kind
    /// The TSS2 response code, when the TPM or tpm2-tss gave one.
    package let code: UInt32?
    /// Where the TPM was looked for.
    package let address: String
    /// What was being done and the TPM's own words.
    package let detail: String

    package init(_ kind: Kind, address: String, detail: String? = nil, code: UInt32? = nil) {
        self.kind = kind
        self.address = address
        self.code = code
        self.detail = detail ?? Self.defaultDetail(kind, address: address)
    }

    /// Classifies a TSS2 response code.
    package init(code: UInt32, during: String, address: String) {
        let kind = Self.kind(of: code)
        let words = TPMConnection.describe(code)
        let detail: String =
            switch kind {
            case .noTPM: "no TPM answers at \(address) (\(during): \(words))"
            default: "\(during): \(words)"
            }
        self.init(kind, address: address, detail: detail, code: code)
    }

    static func kind(of code: UInt32) -> Kind {
        let layer = code & 0xff_0000
        let base = code & 0xffff
        switch layer {
        case 0:  // The TPM itself.
            if code & 0x80 != 0 {
                switch code & 0xbf {
                case 0x8e, 0xa2: return .authFailed  // TPM_RC_AUTH_FAIL, TPM_RC_BAD_AUTH
                case 0x9d: return .policyFailed  // TPM_RC_POLICY_FAIL
                case 0x9f: return .wrongTPM  // TPM_RC_INTEGRITY: the object's parent seed is not this TPM's
                case 0x84, 0x95, 0x9a, 0x8a: return .damaged  // VALUE, SIZE, KEY_SIZE, TYPE … of a loaded object
                default: return .failed
                }
            }
            switch code {
            case 0x921: return .lockout  // TPM_RC_LOCKOUT
            case 0x128, 0x126: return .policyFailed  // TPM_RC_PCR_CHANGED, TPM_RC_POLICY (session)
            default: return .failed
            }
        case 0x0a_0000, 0x0c_0000:  // the TCTI, the resource manager
            return .noTPM
        default:
            switch base {
            // NO_CONNECTION, IO_ERROR, TRY_AGAIN, MALFORMED_RESPONSE, NOT_PERMITTED
            case 8, 10, 16, 17, 25: return .noTPM
            default: return .failed
            }
        }
    }

    private static func defaultDetail(_ kind: Kind, address: String) -> String {
        switch kind {
        case .noTPM: "no TPM answers at \(address)"
        case .authFailed: "the TPM refused the authorization"
        case .lockout: "the TPM is in dictionary-attack lockout"
        case .policyFailed: "the TPM's policy (PCR values) is not satisfied"
        case .wrongTPM: "the keychain is sealed to another TPM (or to this one before it was cleared)"
        case .damaged: "the sealed object is damaged"
        case .failed: "the TPM refused the operation"
        }
    }

    /// The detail, for logs.
    package var description: String { detail }
}

/// What the TPM sealed: its public and private areas, marshalled (the private part is encrypted to the TPM's
/// storage key and opens only there).
package struct TPMSealedObject: Sendable, Equatable {
    /// The marshalled `TPM2B_PUBLIC`.
    package var `public`: Data
    /// The marshalled `TPM2B_PRIVATE`.
    package var `private`: Data

    package init(public: Data, private: Data) {
        self.public = `public`
        self.private = `private`
    }
}

/// The TPM's dictionary-attack protection as it stands.
package struct TPMLockoutState: Sendable, Equatable {
    /// Failed authorizations counted now (one is forgiven every `recoveryInterval` seconds).
    package var failedTries: Int
    /// Failures after which the TPM locks DA-protected objects out.
    package var maxTries: Int
    /// Seconds after which one counted failure is forgiven.
    package var recoveryInterval: Int
    /// Whether the TPM is in lockout now.
    package var inLockout: Bool
    /// Whether the lockout hierarchy has an authValue (TPMA_PERMANENT's lockoutAuthSet). While it has none,
    /// anyone who can send the TPM commands can reset `failedTries` to 0 (TPM2_DictionaryAttackLockReset).
    package var lockoutAuthSet: Bool

    /// Seconds until the lockout lifts (one try becomes available again): 0 when not locked out.
    package var secondsUntilTry: Int { inLockout || failedTries >= maxTries ? recoveryInterval : 0 }
}
