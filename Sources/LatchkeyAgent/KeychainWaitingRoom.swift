import Dispatch
import FoundationEssentials
import LatchkeyCaller
import LatchkeyCrypto
import LatchkeyEngine
import LatchkeyPOSIX
import LatchkeyProtocol
import Synchronization

/// Where the agent waits for a keychain that does not exist yet (`latchkeyd --wait-for-keychain`): something
/// (xdg-desktop-portal, socket or D-Bus activation) started it before the login created the keychain
/// (pam_latchkey's `create`). It listens on the agent's socket, accepts the agent's own user only, greets
/// and requires the hello as the agent always does (`AgentConversation`), and answers every request with
/// `errSecNoSuchKeychain` — but it holds the passphrase of an `unlock` (in zeroizing memory; a later one
/// replaces it, a `lock` wipes it), for the agent to unlock the keychain with once it appears. It looks for
/// the keychain file every second and ends when the file is there or its time is up.
final class KeychainWaitingRoom: Sendable {
    private let keychainPath: String
    private let listener: FileDescriptor
    private let deadline: ContinuousClock.Instant
    private let budget: ByteBudget
    private let log: @Sendable (String) -> Void
    private let digests = DigestCache()
    private let connections = ConnectionTable(capacity: AgentServer.maximumConnections)
    /// Connections being served, so the room waits for them to end before it hands the passphrase over.
    private let serving = DispatchGroup()

    private struct Held: ~Copyable {
        var passphrase: Passphrase?
        /// Whether root handed the passphrase over (pam_latchkey's session step): tried as the login's.
        var fromRoot = false
        /// Set once the room handed its passphrase over: a late unlock cannot be held any more.
        var closed = false
    }
    private let held = Mutex(Held())

    /// A room on `listener` for `keychainPath` that waits at most `seconds`.
    init(
        keychainPath: String, listener: FileDescriptor, seconds: Int, budget: ByteBudget,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.keychainPath = keychainPath
        self.listener = listener
        self.deadline = .now + .seconds(seconds)
        self.budget = budget
        self.log = log
    }

    /// Whether the keychain file is there.
    var keychainExists: Bool { FileStatus.of(path: keychainPath) != nil }

    /// Whether the passphrase `wait()` returned was root's hand-over (the login's password, which the
    /// throttle never refuses); read after `wait()`.
    var handedOverByRoot: Bool { held.withLock { $0.fromRoot } }

    /// Serves until the keychain file appears or the time is up, then closes its connections and returns the
    /// passphrase handed over (nil when none was, or when the time is up: it is wiped then).
    func wait() -> Passphrase? {
        var seen: ContinuousClock.Instant?
        while true {
            if keychainExists {
                // A new keychain's device key file follows its file: a second's grace for it, so the
                // always-available classes open with the keychain.
                if FileStatus.of(path: KeychainDatabase.deviceKeyPath(of: keychainPath)) != nil { break }
                if let seen, ContinuousClock.now - seen >= .seconds(1) { break }
                seen = seen ?? .now
            }
            let left = deadline - .now
            guard left > .zero else { break }
            // At most a second between looks at the file; a connection wakes it earlier.
            let milliseconds = Int32(min(seen == nil ? 1_000 : 100, max(1, (left / .milliseconds(1)).rounded(.up))))
            guard listener.waitReadable(milliseconds: milliseconds) else { continue }
            admit()
        }
        connections.closeAll()
        // Every connection ends at once (its reads and writes fail); the bound only guards against a
        // handler that cannot.
        if serving.wait(timeout: .now() + .seconds(10)) == .timedOut {
            log("a connection of the waiting room did not end")
        }
        let passphrase = held.withLock { held in
            held.closed = true
            let taken = held.passphrase
            held.passphrase = nil
            return taken
        }
        guard keychainExists else {
            if passphrase != nil { log("wiped the password handed over while waiting: no keychain appeared") }
            return nil
        }
        return passphrase
    }

    private func admit() {
        guard let stream = ConnectionListener.acceptOne(listener, log: log) else { return }
        let (id, evicted) = connections.admit(stream)
        evicted?.shutDown()
        serving.enter()
        ConnectionListener.serveOnItsOwnThread { [self] in
            serve(stream, id: id)
            connections.remove(id)
            serving.leave()
        }
    }

    private func serve(_ stream: AgentStream, id: Int) {
        guard let conversation = AgentConversation(stream: stream, budget: budget, digests: digests, log: log) else {
            return
        }
        let peer = conversation.peer
        conversation.run(
            idleSeconds: ConnectionHandler.idleSeconds, greeted: { [connections] in connections.markGreeted(id) }
        ) { request, number in
            connections.touch(id)
            return AgentResponse(
                id: number, operation: request.operation, outcome: answer(request, pid: peer.pid, uid: peer.uid))
        }
    }

    /// Whole seconds left, rounded up.
    private var secondsLeft: Int64 {
        let left = deadline - .now
        guard left > .zero else { return 0 }
        return left.components.seconds + (left.components.attoseconds > 0 ? 1 : 0)
    }

    private func answer(_ request: AgentRequest, pid: Int32, uid: UInt32) -> Result<KeychainReply, KeychainError> {
        switch request {
        case .hello(let path, _):
            do {
                try AgentConversation.checkHello(path: path, servedPath: keychainPath)
            } catch {
                return .failure(error)
            }
            return .success(.none)
        case .keychain(.unlock(let passphrase)):
            let outcome: (held: Bool, replaced: Bool) = held.withLock { held in
                guard !held.closed else { return (false, false) }
                let replaced = held.passphrase != nil
                held.passphrase = passphrase
                held.fromRoot = uid == 0 && CurrentProcess.effectiveUserID != 0
                return (true, replaced)
            }
            guard outcome.held else {
                return .failure(
                    KeychainError(.noSuchKeychain, "the keychain at \(keychainPath) just appeared; unlock it again"))
            }
            log(
                "holding the password pid \(pid) handed over until the keychain appears"
                    + (outcome.replaced ? " (it replaces the one held before)" : ""))
            return .failure(
                KeychainError(
                    .noSuchKeychain,
                    "no keychain at \(keychainPath) yet; the agent holds the password until it appears (at most \(secondsLeft) more seconds)"
                ))
        case .keychain(.lock):
            let wiped = held.withLock { held in
                defer { held.passphrase = nil }
                return held.passphrase != nil
            }
            if wiped { log("wiped the password handed over while waiting (lock requested by pid \(pid))") }
            return .success(.none)
        default:
            return .failure(
                KeychainError(
                    .noSuchKeychain,
                    "no keychain at \(keychainPath) yet; the agent waits \(secondsLeft) more seconds for it"))
        }
    }
}
