import FoundationEssentials
import LatchkeyCaller
import LatchkeyEngine
import LatchkeyPOSIX
import LatchkeySecretService

/// Who a Secret Service connection acts as under the isolated policy: its process pinned through the gate
/// when the connection joins the bus (`CallerGate.pin(busPeer:…)`), who it is attested as at its first call,
/// and what that makes it (docs/LATCHKEY-SECURITY.md, "The Secret Service"):
///
/// 1. **A Flatpak app** acts as its app ID — access group `flatpak:<app id>`.
/// 2. **A confining LSM label** (an AppArmor profile in enforce mode, as Snap apps have; an SELinux domain
///    other than `unconfined_t`): access group `apparmor:<profile>` or `selinux:<type>`.
/// 3. **A registered program** (path and digest, as on the agent's socket), else **its executable** (access
///    group `secret-service:<path>`) — only when every bus connection the daemon attributes to the process is
///    a socket the process holds, that closes at `exec`, and that is connected to a socket the bus daemon
///    holds. Under `--program-identity platform`, every unconfined program acts as the user instead: the
///    shared items, as under the shared policy.
///
/// Refused: another user; a process in another user or pid namespace that is not a Flatpak app; one that
/// runs a deleted executable; one that is stopped or traced; one whose sockets cannot be read.
enum BusCallerPolicy {
    /// Fixes the connection's process now (when it joins the bus) — or refuses it. The pin says who it acts
    /// as at its first call.
    static func pin(_ caller: BusCaller, state: AgentState) -> Result<ProcessPin, KeychainError> {
        let pinned = CallerGate.pin(
            busPeer: caller.credentials.pid, uid: caller.credentials.uid, label: caller.credentials.securityLabel,
            connectionsOfProcess: caller.connectionsOfProcess, busDaemon: caller.busDaemon, frontEnd: .secretService)
        switch pinned {
        case .failure(let refusal):
            return .failure(KeychainError(.missingEntitlement, refusal.reason))
        case .success(let pin):
            return .success(ProcessPin { resolve(pin, uid: caller.credentials.uid, state: state) })
        }
    }

    /// Who a pinned connection acts as at its first call.
    private static func resolve(_ pin: BusPin, uid: UInt32, state: AgentState) -> Result<PinnedCaller, KeychainError> {
        let invalidation: @Sendable () -> String? = { pin.invalidation() }
        let attested = pin.attest(digests: state.digests)
        switch attested.attestation {
        case .unidentified(let reason):
            return .failure(KeychainError(.missingEntitlement, reason))
        case .sandbox(let app):
            return .success(
                PinnedCaller(
                    identity: CallerIdentity(applicationIdentifier: app, accessGroups: ["flatpak:" + app]),
                    summary: attested.attestation.summary, program: .sandbox(appID: app), invalidation: invalidation))
        case .confined(let group):
            return .success(
                PinnedCaller(
                    identity: CallerIdentity(applicationIdentifier: group, accessGroups: [group]),
                    summary: attested.attestation.summary,
                    program: CallerPolicy.program(of: attested, identity: state.programIdentity),
                    invalidation: invalidation))
        case .executable(let path, _):
            if state.programIdentity == .platform {
                return .success(
                    PinnedCaller(
                        identity: BusCaller.asTheUser,
                        summary: "\(path), an unconfined program, as the user (--program-identity platform)",
                        invalidation: invalidation))
            }
            guard let registrations = state.currentRegistrations else {
                return .failure(
                    KeychainError(
                        .interactionNotAllowed,
                        "the agent has not been unlocked since it started (registrations are sealed under the passphrase)"
                    ))
            }
            switch CallerPolicy.standing(of: attested, registrations: registrations, identity: state.programIdentity) {
            case .registered(let registration):
                // A program registered --wildcard sees every group: it is never asked (issue 53).
                return .success(
                    PinnedCaller(
                        identity: registration.caller,
                        summary: "the registered program \(registration.executablePath)",
                        program: registration.caller.hasWildcard
                            ? nil : CallerPolicy.program(of: attested, identity: state.programIdentity),
                        invalidation: invalidation))
            case .unregistered:
                return .success(
                    PinnedCaller(
                        identity: CallerIdentity(applicationIdentifier: path, accessGroups: ["secret-service:" + path]),
                        summary: path, program: CallerPolicy.program(of: attested, identity: state.programIdentity),
                        invalidation: invalidation))
            case .unidentified(let reason): return .failure(KeychainError(.missingEntitlement, reason))
            case .refused(let error): return .failure(error)
            }
        }
    }
}
