import FoundationEssentials
import LatchkeyCaller
import LatchkeyEngine

/// Which attestations tell programs apart (`latchkeyd --program-identity`).
public enum ProgramIdentity: String, Sendable, CaseIterable {
    /// Sandboxed and confined programs by what the platform attests, unconfined ones by their executable
    /// (path and digest), as registered (the default).
    case executable
    /// Only what the platform attests: per-program items only for sandboxed or LSM-confined callers; every
    /// unconfined program is treated as the user — not told apart from the others (docs/LATCHKEY-SECURITY.md,
    /// "Who is calling: one gate").
    case platform
}

/// How the agent turns an attested caller (`CallerGate`) into what it may do — its entitlements. The one
/// place the policy lives, for every front end.
///
/// - A registered executable (same path and same digest as when registered) gets its registration's
///   application identifier and access groups.
/// - A registered path whose executable changed is refused until it is registered again.
/// - Any other program is unregistered: the agent serves it nothing but status, unlock and lock. Its
///   library falls back to opening the keychain itself, which needs the passphrase — exactly what it would
///   need without an agent. No identity is ever derived from a file name: a copy of a program, or a program
///   named after an application, an access group or the wildcard `*`, gets nothing from the agent.
/// - A caller the gate could not attest (`Attestation.unidentified`: another user or pid namespace, a
///   deleted or unreadable executable) is served as an unregistered program, whatever it runs.
/// - A sandboxed or confined program has no registration on the agent's socket (registrations name
///   executables); under `--program-identity platform` neither has an unconfined one.
///
/// Limits, stated honestly: interpreters (python3, node, bash) are one executable, so registering one
/// registers every script it runs; a program the same user can ptrace or whose binary the user can replace
/// is no barrier against that user; and before the first unlock the registrations cannot be read (they are
/// sealed under the passphrase), so the agent serves only unlock, lock and status until then.
enum CallerPolicy {
    enum Standing: Equatable {
        case registered(ApplicationRegistration)
        /// Not a registered program, and why (the refusal's words).
        case unregistered(String)
        /// Not to be trusted as any program, and why (`Attestation.unidentified`).
        case unidentified(String)
        case refused(KeychainError)

        var name: String {
            switch self {
            case .registered: "registered"
            case .unregistered: "unregistered"
            case .unidentified: "unidentified"
            case .refused: "refused"
            }
        }
    }

    static func standing(
        of caller: AttestedCaller, registrations: [ApplicationRegistration], identity: ProgramIdentity
    ) -> Standing {
        switch caller.attestation {
        case .unidentified(let reason):
            return .unidentified(reason)
        case .sandbox, .confined:
            return .unregistered(
                "\(caller.attestation.summary) has no registration on \(caller.frontEnd.rawValue) "
                    + "(registrations name executables); it reaches its own items through the Secret Service")
        case .executable(let path, let digest):
            guard identity == .executable else {
                return .unregistered(
                    "\(path) is an unconfined program, which this agent does not tell apart from the user "
                        + "(latchkeyd --program-identity platform); let it open the keychain with the passphrase")
            }
            guard let registration = registrations.first(where: { $0.executablePath == path }) else {
                return .unregistered(
                    "\(path) is not registered with the agent; register it with `latchkey register-application \(path)`, "
                        + "or let it open the keychain with the passphrase")
            }
            guard digest == registration.executableDigest else {
                return .refused(
                    KeychainError(
                        .missingEntitlement,
                        "\(path) changed since it was registered; register it again with `latchkey register-application`"
                    ))
            }
            return .registered(registration)
        }
    }

    /// The program an attested caller is as items' access lists name programs (`TrustedProgram`): a sandbox's
    /// app ID, a confining label, or — under `--program-identity executable` — an unconfined process's
    /// executable with its digest. Nil for a caller the gate could not attest, and for an unconfined one the
    /// agent does not tell apart from the user: neither is ever found on a list.
    static func program(of caller: AttestedCaller, identity: ProgramIdentity) -> TrustedProgram? {
        switch caller.attestation {
        case .unidentified: nil
        case .sandbox(let app): .sandbox(appID: app)
        case .confined(let label): .confined(label: label)
        case .executable(let path, let digest): identity == .executable ? .executable(path: path, digest: digest) : nil
        }
    }

    /// The refusal an unidentified program gets for an item request.
    static func notIdentified(_ reason: String) -> KeychainError {
        KeychainError(
            .missingEntitlement,
            "\(reason); the agent serves it as an unregistered program: let it open the keychain with the passphrase")
    }

    /// The refusal an unregistered program gets for an item request (`Standing.unregistered`'s words).
    static func notRegistered(_ reason: String) -> KeychainError { KeychainError(.missingEntitlement, reason) }
}
