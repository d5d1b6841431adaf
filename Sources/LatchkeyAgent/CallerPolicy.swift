import Foundation
import Latchkey

/// How the agent turns a peer into a caller identity — its entitlements.
///
/// - A registered executable (same path and same digest as when registered) gets its registration's
///   application identifier and access groups.
/// - A registered path whose executable changed is refused until it is registered again.
/// - Any other program gets one group named after its executable's file name — the same identity
///   `KeychainConnection` gives it in embedded mode, so results are the same with and without the agent —
///   unless a registration owns that name as an application identifier or access group: then it is refused,
///   so no program can borrow a registered application's items by taking its name.
///
/// Limits, stated honestly: interpreters (python3, node, bash) are one executable, so every script they run
/// shares one identity; a program the same user can ptrace or whose binary the user can replace is no
/// barrier against that user; and before the first unlock the registrations cannot be read (they are sealed
/// under the passphrase), so the agent serves only unlock, lock and status until then.
enum CallerPolicy {
    enum Standing: Equatable {
        case registered(ApplicationRegistration)
        case unregistered(CallerIdentity)
        case refused(KeychainError)

        var name: String {
            switch self {
            case .registered: "registered"
            case .unregistered: "unregistered"
            case .refused: "refused"
            }
        }
    }

    static func standing(of peer: PeerIdentity, registrations: [ApplicationRegistration]) -> Standing {
        if let registration = registrations.first(where: { $0.executablePath == peer.executablePath }) {
            guard let digest = peer.executableDigest, digest == registration.executableDigest else {
                return .refused(KeychainError(
                    .missingEntitlement,
                    "\(peer.executablePath) changed since it was registered; register it again with `latchkey register-application`"))
            }
            return .registered(registration)
        }
        let name = peer.executableName
        guard !name.isEmpty else {
            return .refused(KeychainError(.missingEntitlement, "the agent cannot tell which program this is"))
        }
        let owned = registrations.contains { $0.applicationIdentifier == name || $0.accessGroups.contains(name) }
        guard !owned else {
            return .refused(KeychainError(
                .missingEntitlement, "the name \(name) belongs to a registered application; this program is not it"))
        }
        return .unregistered(CallerIdentity(applicationIdentifier: name, accessGroups: [name]))
    }
}
