import FoundationEssentials
import LatchkeyCaller
import LatchkeyEngine
import LatchkeyPOSIX
import LatchkeySync
import Synchronization

/// What the agent holds: the open keychain (its keys, once unlocked), the registrations (readable after
/// the first unlock), the lock settings and the time of the last request, for the idle timeout.
final class AgentState: Sendable {
    let keychain: KeychainDatabase
    let keychainPath: String
    let digests = DigestCache()
    /// Who asks the user to confirm protected items (pinentry), if anyone can.
    let presence: (any UserPresenceVerifier)?
    private let registrations = Mutex<[ApplicationRegistration]?>(nil)
    private let settings: Mutex<KeychainSettings>
    private let lastActivity = Mutex(ContinuousClock.now)
    let log: @Sendable (String) -> Void
    /// Who asks the user whether a program may read an item not on its access list (pinentry's dialog).
    let prompter: AccessPrompter
    /// Whether item requests are written to the access log (`latchkeyd --no-access-log` turns it off).
    let accessLog: Bool
    /// Background sync, when the agent runs it (it idles until the keychain is set up for sync).
    let sync: SyncWorker?
    /// Which attestations tell programs apart (`latchkeyd --program-identity`).
    let programIdentity: ProgramIdentity

    init(
        keychainPath: String, presence: (any UserPresenceVerifier)?, log: @escaping @Sendable (String) -> Void,
        sync: Bool = false, programIdentity: ProgramIdentity = .executable, accessLog: Bool = true,
        prompter: AccessPrompter? = nil
    )
        throws(KeychainError)
    {
        self.programIdentity = programIdentity
        self.accessLog = accessLog
        self.prompter = prompter ?? AccessPrompter(presence: nil, log: log)
        self.keychainPath = keychainPath
        self.presence = presence
        self.keychain = try KeychainDatabase.open(at: keychainPath)
        self.settings = Mutex(try keychain.settings)
        self.log = log
        self.throttle = UnlockThrottle(keychainPath: keychainPath, log: log)
        self.sync = sync ? try SyncWorker(keychain: keychain, log: log) : nil
        self.sync?.start()
    }

    /// Folds the access log's journal into the keychain (`KeychainDatabase.foldAccessJournal`): every second
    /// while the agent runs, and as it stops. A failure is logged; the journal stays and is folded next time.
    func foldAccessLog() {
        do {
            try keychain.foldAccessJournal()
        } catch {
            log("could not fold the access log's journal into the keychain: \(error.message)")
        }
    }

    /// Tells background sync that the keychain changed (or unlocked): it pushes now, not at its next tick.
    func changed() { sync?.nudge() }

    /// Marks activity now (every request counts).
    func touch() { lastActivity.withLock { $0 = .now } }

    /// The registrations, nil until the first unlock.
    var currentRegistrations: [ApplicationRegistration]? { registrations.withLock { $0 } }

    /// Slows down passphrase guesses (`UnlockThrottle`): every passphrase the agent checks goes through it.
    let throttle: UnlockThrottle

    /// Runs `body`, which checks a passphrase, through the throttle, counted against `bucket`.
    func checkingPassphrase<T>(
        _ what: String, as bucket: UnlockThrottle.Bucket, _ body: () throws(KeychainError) -> T
    ) throws(KeychainError) -> T {
        try throttle.attempt(what, as: bucket, body)
    }

    /// The `latchkey` tool installed beside this agent: one of the owner's tools (`throttleBucket(for:)`).
    static let ownTool: String? = CurrentProcess.executablePath.map {
        URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("latchkey").path
    }

    /// Whose guesses a caller's passphrases count as (`UnlockThrottle.Bucket`): root's hand-over of the login
    /// password (when the agent is not root's), the owner's tools (the `latchkey` beside the agent, a
    /// registered program), or everyone else's.
    func throttleBucket(for caller: AttestedCaller) -> UnlockThrottle.Bucket {
        if caller.uid == 0 && CurrentProcess.effectiveUserID != 0 { return .login }
        guard case .executable(let path, _) = caller.attestation else { return .others }
        if path == Self.ownTool { return .tool(path) }
        if let registrations = currentRegistrations,
            case .registered = CallerPolicy.standing(
                of: caller, registrations: registrations, identity: programIdentity)
        {
            return .tool(path)
        }
        return .others
    }

    func unlock(_ passphrase: Passphrase, as bucket: UnlockThrottle.Bucket) throws(KeychainError) {
        try throttle.attempt("an unlock", as: bucket) { () throws(KeychainError) in
            try keychain.unlock(with: passphrase)
        }
        try unlocked("unlocked")
    }

    /// Unlocks with the key the login derived at its auth step (root's hand-over only: the caller checked;
    /// the login's guesses are never held back). A stale key is said in the log: pam_latchkey then hands over
    /// the password.
    func unlock(_ key: DerivedUnlockKey) throws(KeychainError) {
        do {
            try throttle.attempt("an unlock", as: .login) { () throws(KeychainError) in try keychain.unlock(with: key) }
        } catch {
            log(
                "the key the login derived at its auth step does not unlock the keychain (\(error.status.name): \(error.message))"
            )
            throw error
        }
        try unlocked("unlocked (with the key the login derived at its auth step)")
    }

    /// Unlocks through the keychain's unattended TPM unlock (no passphrase; the TPM checks the PCRs).
    func unlockUnattended() throws(KeychainError) {
        try keychain.unlockUnattended()
        try unlocked("unlocked through the TPM (unattended)")
    }

    /// What follows every unlock: the registrations and settings read now that they can be, the log line,
    /// and the listeners told.
    private func unlocked(_ line: String) throws(KeychainError) {
        try reloadRegistrations()
        let current = try keychain.settings
        settings.withLock { $0 = current }
        log(line)
        changed()
    }

    func lock(reason: String) {
        guard keychain.lockState == .unlocked else { return }
        keychain.lock()
        log("locked (\(reason))")
    }

    func reloadRegistrations() throws(KeychainError) {
        let loaded = try keychain.registeredApplications()
        registrations.withLock { $0 = loaded }
    }

    /// Reloads the registrations when they can be read (after the first unlock); before, a registration is
    /// stored and read at the first unlock.
    func reloadRegistrationsIfReadable() throws(KeychainError) {
        guard keychain.lockState.isProtectedDataAvailable else { return }
        try reloadRegistrations()
    }

    /// The service the agent's own requests run in (settings, registrations): the keychain's, for no program
    /// in particular — those requests need the passphrase, not an identity.
    var administration: LocalKeychainService {
        LocalKeychainService(
            database: keychain, caller: CallerIdentity(applicationIdentifier: "latchkeyd"), presence: presence)
    }

    /// Applies new lock settings at once (the administration service has stored them).
    func apply(_ new: KeychainSettings) {
        settings.withLock { $0 = new }
    }

    /// Locks when the keychain has been idle longer than its timeout.
    func lockIfIdle() {
        guard let timeout = settings.withLock({ $0.autoLockAfterSeconds }), keychain.lockState == .unlocked else {
            return
        }
        let idle = ContinuousClock.now - lastActivity.withLock { $0 }
        if idle >= .seconds(timeout) { lock(reason: "idle for \(timeout) s") }
    }

    /// Locks when the settings ask to lock on sleep (`set-keychain-settings -l`); the system is about to.
    func lockBeforeSleep() {
        guard settings.withLock({ $0.lockOnSleep }) else { return }
        lock(reason: "the system is going to sleep")
    }

    /// Wipes every key (at exit).
    func wipe() {
        keychain.forgetAllKeys()
        log("keys wiped")
    }
}
