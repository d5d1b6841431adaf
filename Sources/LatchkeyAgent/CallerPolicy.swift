import Foundation
import LatchkeyEngine

/// How the agent turns a peer into a caller identity — its entitlements.
///
/// - A registered executable (same path and same digest as when registered) gets its registration's
///   application identifier and access groups.
/// - A registered path whose executable changed is refused until it is registered again.
/// - Any other program is unregistered: the agent serves it nothing but status, unlock and lock. Its
///   library falls back to opening the keychain itself, which needs the passphrase — exactly what it would
///   need without an agent. No identity is ever derived from a file name: a copy of a program, or a program
///   named after an application, an access group or the wildcard `*`, gets nothing from the agent.
/// - A process whose executable the agent cannot read (it made itself not dumpable before connecting) cannot
///   be told apart from any other program: refused the same way.
/// - A process the agent cannot trust to be who the kernel says (`PeerIdentity.untrusted`: another user or
///   pid namespace, a deleted executable) is unidentified: served as an unregistered program, whatever it runs.
///
/// Limits, stated honestly: interpreters (python3, node, bash) are one executable, so registering one
/// registers every script it runs; a program the same user can ptrace or whose binary the user can replace
/// is no barrier against that user; and before the first unlock the registrations cannot be read (they are
/// sealed under the passphrase), so the agent serves only unlock, lock and status until then.
enum CallerPolicy {
    enum Standing: Equatable {
        case registered(ApplicationRegistration)
        case unregistered(String)
        /// Not to be trusted as any program, and why (`PeerIdentity.untrusted`).
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

    static func standing(of peer: PeerIdentity, registrations: [ApplicationRegistration]) -> Standing {
        if let reason = peer.untrusted { return .unidentified(reason) }
        guard let path = peer.executablePath, let digest = peer.executableDigest else {
            return .refused(
                KeychainError(
                    .missingEntitlement,
                    "the agent cannot tell which program pid \(peer.pid) runs (its executable cannot be read)"))
        }
        guard let registration = registrations.first(where: { $0.executablePath == path }) else {
            return .unregistered(path)
        }
        guard digest == registration.executableDigest else {
            return .refused(
                KeychainError(
                    .missingEntitlement,
                    "\(path) changed since it was registered; register it again with `latchkey register-application`"))
        }
        return .registered(registration)
    }

    /// The refusal an unidentified program gets for an item request.
    static func notIdentified(_ reason: String) -> KeychainError {
        KeychainError(
            .missingEntitlement,
            "\(reason); the agent serves it as an unregistered program: let it open the keychain with the passphrase")
    }

    /// The refusal an unregistered program gets for an item request.
    static func notRegistered(_ path: String) -> KeychainError {
        KeychainError(
            .missingEntitlement,
            "\(path) is not registered with the agent; register it with `latchkey register-application \(path)`, "
                + "or let it open the keychain with the passphrase")
    }
}
