import FoundationEssentials
import LatchkeyCaller
public import LatchkeyEngine
import LatchkeyPOSIX
import LatchkeyProtocol
import LatchkeySecretService
import LatchkeySync
import Synchronization

/// The agent: listens on a Unix socket in a private directory (or on the socket systemd passes), serves
/// each connection on its own thread — so a slow client stalls only itself — and locks the keychain when it
/// has been idle longer than its timeout, or before the system sleeps when its settings say so.
///
/// One agent per keychain: it holds an exclusive lock on `<keychain>.agent-lock` for as long as it runs, so
/// a second one (another session, another socket path) refuses to start instead of serving the keychain
/// with a lock state and registrations of its own.
public final class AgentServer: Sendable {
    /// Options from the command line.
    public struct Options: Sendable {
        /// The keychain to serve.
        public var keychainPath: String
        /// The socket to listen on (ignored under socket activation).
        public var socketPath: String
        /// Whether to log to standard error.
        public var verbose: Bool
        /// The pinentry program that asks the user to confirm protected items (nil: `LATCHKEY_PINENTRY`,
        /// else `pinentry` on the `PATH`, else nobody — such items then fail with
        /// `errSecInteractionNotAllowed`).
        public var pinentry: String?
        /// Whether to provide the Secret Service (`org.freedesktop.secrets`) on the session bus too.
        public var secretService: Bool
        /// Whether each program sees only its own Secret Service items and its groups' (else every program
        /// of the user sees them all, as with GNOME Keyring).
        public var isolatedSecretService: Bool
        /// Whether the items the Secret Service stores are synchronizable, so that they go to the vault's
        /// other devices with the keychain's sync (`--secret-service-sync`); it shows synchronizable items
        /// either way.
        public var synchronizableSecretService: Bool
        /// Whether to sync in the background when the keychain is set up for sync.
        public var backgroundSync: Bool
        /// Whether to write the access log (`--no-access-log` turns it off).
        public var accessLog: Bool
        /// Where to serve the OpenSSH agent protocol (`SSH_AUTH_SOCK`); nil for nowhere.
        public var sshAgentSocketPath: String?
        /// Whether to lock when one of the user's login sessions locks (logind's `Lock`, `LockedHint`).
        public var lockOnSessionLock: Bool
        /// How long to wait for a keychain that does not exist yet at start (nil: do not wait, fail at once).
        /// Meanwhile the agent listens, answers `errSecNoSuchKeychain`, and holds the passphrase an unlock
        /// hands over, to unlock the keychain with once it appears (`KeychainWaitingRoom`).
        public var waitForKeychainSeconds: Int?
        /// Whether to unlock at start through the keychain's unattended TPM unlock (a service at boot); when the
        /// TPM refuses, the agent says why on standard error and serves the keychain locked.
        public var unlockUnattended: Bool
        /// Which attestations tell programs apart on every front end (`--program-identity`).
        public var programIdentity: ProgramIdentity
        /// Where to keep scheduled snapshots of the keychain (`--backup-directory`); nil for none.
        public var backupDirectory: String?
        /// Seconds between scheduled snapshots (`--backup-every`; a day by default).
        public var backupInterval: Int = 86_400
        /// How many scheduled snapshots to keep (`--backup-keep`; 14 by default).
        public var backupKeep: Int = 14

        /// Creates options.
        public init(
            keychainPath: String, socketPath: String, verbose: Bool, pinentry: String? = nil,
            secretService: Bool = false,
            isolatedSecretService: Bool = false, backgroundSync: Bool = true, accessLog: Bool = true,
            sshAgentSocketPath: String? = nil,
            lockOnSessionLock: Bool = true, waitForKeychainSeconds: Int? = nil, unlockUnattended: Bool = false,
            programIdentity: ProgramIdentity = .executable, synchronizableSecretService: Bool = false
        ) {
            self.synchronizableSecretService = synchronizableSecretService
            self.programIdentity = programIdentity
            self.waitForKeychainSeconds = waitForKeychainSeconds
            self.unlockUnattended = unlockUnattended
            self.sshAgentSocketPath = sshAgentSocketPath
            self.lockOnSessionLock = lockOnSessionLock
            self.backgroundSync = backgroundSync
            self.accessLog = accessLog
            self.keychainPath = keychainPath
            self.socketPath = socketPath
            self.verbose = verbose
            self.pinentry = pinentry
            self.secretService = secretService
            self.isolatedSecretService = isolatedSecretService
        }
    }

    /// Connections served at once at most; when full, the one idle the longest is closed for a new one.
    static let maximumConnections = 512
    /// Bytes of frames the agent holds at most, over all connections: unfinished ones, and finished ones
    /// until answered (docs/LATCHKEY-SECURITY.md). Room for two of the largest frames at once.
    static let bufferBudget = 48 << 20

    let options: Options
    let state: AgentState
    private let listener: FileDescriptor
    private let instanceLock: FileLock
    private let connections = ConnectionTable(capacity: maximumConnections)
    private let budget: ByteBudget
    private let log: @Sendable (String) -> Void
    /// The SSH agent, when it is served.
    private let sshAgent: SSHAgentServer?

    /// Opens the keychain and the listening socket (or takes systemd's), and the SSH agent's. With
    /// `waitForKeychainSeconds`, a keychain that does not exist yet is waited for on the listening socket
    /// first (`KeychainWaitingRoom`); a passphrase handed over meanwhile unlocks it once it is open.
    public init(options: Options) throws(KeychainError) {
        let verbose = options.verbose
        let log: @Sendable (String) -> Void = { message in
            if verbose { StandardError.write("latchkeyd: \(message)\n") }
        }
        self.options = options
        self.log = log
        let budget = ByteBudget(bytes: Self.bufferBudget)  // Shared by both sockets' connections.
        self.budget = budget
        // Before the keychain opens (the device key's classes unlock at once): no key may reach a core file
        // or another process of the user.
        Self.hardenProcess(log: log)
        let keychainPath = URL(fileURLWithPath: options.keychainPath).standardizedFileURL.path
        let waitSeconds = FileStatus.of(path: keychainPath) == nil ? options.waitForKeychainSeconds : nil
        // The lock lives beside the keychain: a keychain waited for may not have its directory yet either.
        if waitSeconds != nil {
            try Self.makePrivateDirectory(URL(fileURLWithPath: keychainPath).deletingLastPathComponent().path)
        }
        instanceLock = try Self.claim(keychainPath: keychainPath, socketPath: options.socketPath)
        // The Secret Service's thread connects to the bus and asks for the name while the keychain opens: a
        // cold D-Bus activation waits for both (issue 56). It answers nothing before its configuration comes.
        // Not while a keychain is waited for: its clients would wait as long.
        let earlyLaunch = options.secretService && waitSeconds == nil ? SecretServiceProvider.launch(log: log) : nil
        var earlyListener: FileDescriptor?
        var handedOver: Passphrase?
        var handedOverByRoot = false
        if let waitSeconds {
            log("no keychain at \(keychainPath) yet: waiting up to \(waitSeconds) s for it")
            let listener = try Self.takeListener(socketPath: options.socketPath, log: log)
            earlyListener = listener
            let room = KeychainWaitingRoom(
                keychainPath: keychainPath, listener: listener, seconds: waitSeconds, budget: budget, log: log)
            handedOver = room.wait()
            handedOverByRoot = room.handedOverByRoot
            log(room.keychainExists ? "the keychain appeared" : "no keychain appeared within \(waitSeconds) s")
        }
        // pinentry gets the agent's environment (its display, its terminal) but never a passphrase variable.
        var environment = CurrentProcess.environment
        for name in ["LATCHKEY_PASSPHRASE", "LATCHKEY_BACKUP_PASSPHRASE"] { environment[name] = nil }
        let pinentry = options.pinentry ?? PinentryPresence.find(environment: environment)
        let presence = pinentry.map { PinentryPresence(program: $0, environment: environment, log: log) }
        log(
            pinentry.map { "asking for protected items through \($0)" }
                ?? "no pinentry: protected items cannot be confirmed")
        let state: AgentState
        do {
            state = try AgentState(
                keychainPath: keychainPath, presence: presence, log: log, sync: options.backgroundSync,
                programIdentity: options.programIdentity, accessLog: options.accessLog,
                prompter: AccessPrompter(presence: presence, log: log))
        } catch {
            // The socket the waiting room listened on is not left behind for clients to find.
            // Failing anyway.
            if earlyListener != nil, Self.systemdSocket() == nil { try? Files.remove(options.socketPath) }
            throw error
        }
        self.state = state
        if let directory = options.backupDirectory {
            SnapshotWorker(
                keychain: state.keychain,
                schedule: .init(directory: directory, interval: options.backupInterval, keep: options.backupKeep),
                log: log
            ).start()
        }
        if options.secretService {
            let secretService = earlyLaunch ?? SecretServiceProvider.launch(log: log)
            let configuration = SecretServiceProvider.Configuration(
                // The log names a bus caller by the identity it acts as (its app ID, label, path or
                // registration) and, where the provider knows it, its process.
                // The provider's own requests (no requester: its collections' registry, the lock state) are its
                // bookkeeping, not a program's access, and are not logged.
                service: { caller, requester in
                    var service = state.service(
                        for: caller,
                        logged: requester.map { requester in
                            AccessLogEntry.Caller(
                                program: caller.applicationIdentifier,
                                identity: "acting as \(caller.accessGroups.joined(separator: ", "))"
                                    + (requester.summary.flatMap {
                                        $0 == caller.applicationIdentifier ? nil : ", \($0)"
                                    }
                                        ?? ""),
                                pid: requester.pid, uid: requester.uid, frontEnd: FrontEnd.secretService.rawValue)
                        })
                    if let reason = requester?.reason { service.reason = reason }
                    return service
                },
                unlock: { (passphrase) throws(KeychainError) in try state.unlock(passphrase, as: .dialog) },
                lock: { state.lock(reason: "requested through the Secret Service") }, presence: presence,
                policy: options.isolatedSecretService ? .isolated : .shared,
                identify: { caller in BusCallerPolicy.pin(caller, state: state) },
                synchronizable: options.synchronizableSecretService,
                access: options.isolatedSecretService ? Self.accessQuestions(state) : nil, log: log)
            log(
                "Secret Service items: \(options.isolatedSecretService ? "each program sees its own and its groups'" : "every program of the user sees them all")\(options.synchronizableSecretService ? "; new ones sync to the vault's other devices" : "")"
            )
            do {
                try secretService.serve(configuration)
            } catch {
                throw KeychainError(.notAvailable, "cannot provide the Secret Service: \(error)")
            }
        }
        if let earlyListener {
            listener = earlyListener
        } else {
            listener = try Self.takeListener(socketPath: options.socketPath, log: log)
        }
        if let path = options.sshAgentSocketPath {
            sshAgent = try SSHAgentServer(
                socketPath: path, inherited: Self.systemdSocket(index: 1), state: state, presence: presence,
                budget: budget, log: log)
        } else {
            sshAgent = nil
        }
        if let passphrase = handedOver {
            do {
                try state.unlock(passphrase, as: handedOverByRoot ? .login : .others)
                log("unlocked with the password handed over while waiting")
            } catch {
                log(
                    "the password handed over while waiting does not unlock the keychain (\(error.status.name)); it stays locked"
                )
            }
        }
        handedOver = nil  // Its last reference: SecureBytes wipes the passphrase's memory as it goes.
        if options.unlockUnattended && state.keychain.lockState != .unlocked {
            do {
                try state.unlockUnattended()
            } catch {
                // Said whether or not the agent is verbose: a service that expected to open at boot must tell why not.
                StandardError.write(
                    "latchkeyd: the unattended unlock failed: \(error.message); the keychain stays locked until its passphrase or recovery code opens it\n"
                )
            }
        }
    }

    /// The socket systemd passed, else a new one at `socketPath`.
    private static func takeListener(socketPath: String, log: @Sendable (String) -> Void) throws(KeychainError)
        -> FileDescriptor
    {
        if let inherited = systemdSocket() {
            log("listening on the socket systemd passed")
            return inherited
        }
        let listener = try listen(at: socketPath)
        log("listening on \(socketPath)")
        return listener
    }

    /// The lock file that makes this the only agent of the keychain.
    static func lockPath(keychainPath: String) -> String { keychainPath + ".agent-lock" }

    private static func claim(keychainPath: String, socketPath: String) throws(KeychainError) -> FileLock {
        let path = lockPath(keychainPath: keychainPath)
        let lock: FileLock?
        do {
            lock = try FileLock.acquire(path, contents: "\(CurrentProcess.id) \(socketPath)\n")
        } catch {
            throw KeychainError(.io, "cannot lock \(path): \(error)")
        }
        guard let lock else {
            // Only for the message.
            let holder = (try? Files.read(path, limit: 4_096)).map { String(decoding: $0, as: UTF8.self) }
            let words =
                holder?.split(separator: " ", maxSplits: 1).map { String($0).trimmingWhitespace() }
                ?? []
            let who = words.count == 2 ? "pid \(words[0]), socket \(words[1])" : "another process"
            throw KeychainError(
                .duplicateKeychain, "another agent (\(who)) already serves \(keychainPath); use it, or stop it first")
        }
        return lock
    }

    /// Serves forever (until a signal ends the process).
    public func serve() -> Never {
        DetachedThread.start(name: "idle") { [state] in
            while true {
                CurrentThread.sleep(for: .seconds(1))
                state.lockIfIdle()
                state.foldAccessLog()
            }
        }
        SleepWatcher.start(state: state, lockOnSessionLock: options.lockOnSessionLock, log: log)
        sshAgent?.start()
        ConnectionListener.acceptForever(listener, log: log) { stream in
            let (id, evicted) = connections.admit(stream)
            if let evicted {
                log("\(Self.maximumConnections) connections open: closed the one idle the longest for a new one")
                evicted.shutDown()
            }
            let handler = ConnectionHandler(
                stream: stream, state: state, budget: budget, log: log,
                greeted: { [connections] in connections.markGreeted(id) },
                active: { [connections] in connections.touch(id) },
                refused: { [connections] in connections.markRefused(id) },
                registrationsChanged: { [connections, log] in
                    let closed = connections.closeRefused(except: id)
                    if closed > 0 {
                        log(
                            "registrations changed: closed \(closed) connection(s) of programs it had refused, which ask again"
                        )
                    }
                })
            return { [connections] in
                handler.run()
                connections.remove(id)
            }
        }
    }

    /// Wipes the keys and removes the socket (at exit).
    public func shutDown() {
        state.foldAccessLog()
        state.wipe()
        if Self.systemdSocket() == nil { try? Files.remove(options.socketPath) }  // Exiting: nothing to report to.
        if let ssh = sshAgent, !ssh.isInherited { try? Files.remove(ssh.socketPath) }  // Likewise.
    }

    /// A listening socket systemd passes with socket activation (LISTEN_PID, LISTEN_FDS): the agent's is the
    /// first (fd 3), the SSH agent's the second (fd 4) when the unit lists it (contrib/systemd/latchkeyd.socket).
    static func systemdSocket(index: Int32 = 0) -> FileDescriptor? {
        guard let count = listeningSockets, count > index else { return nil }
        return FileDescriptor(rawValue: 3 + index)
    }

    /// How many listening sockets systemd passed this process (`LISTEN_FDS`, when `LISTEN_PID` is this
    /// process), read once: the environment does not change it.
    private static let listeningSockets: Int32? = {
        let environment = CurrentProcess.environment
        guard let pid = environment["LISTEN_PID"].flatMap({ Int32($0) }), pid == CurrentProcess.id else { return nil }
        return environment["LISTEN_FDS"].flatMap { Int32($0) }
    }()

    /// Creates the private directory (and missing parents, 0700, owned by this user) and listens on the
    /// socket (0600). A directory that is not this user's with mode 0700 is refused; a stale socket left by a
    /// dead agent is replaced; a live agent's is not.
    static func listen(at path: String) throws(KeychainError) -> FileDescriptor {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try makePrivateDirectory(directory)
        guard let info = FileStatus.of(path: directory), info.kind == .directory,
            info.owner == CurrentProcess.effectiveUserID, !info.isAccessibleByOthers
        else {
            throw KeychainError(.writePermission, "\(directory) must be a directory of this user with mode 0700")
        }
        if FileStatus.of(path: path) != nil {
            if AgentStream.connect(path: path) != nil {
                throw KeychainError(.duplicateKeychain, "an agent already listens on \(path)")
            }
            try? Files.remove(path)  // A stale socket; if it cannot go, listening below says why.
        }
        do {
            return try UnixSocket.listen(at: path)
        } catch {
            if error == .nameTooLong {
                throw KeychainError.param(
                    "the socket path \(path) is too long (at most \(UnixSocket.maximumPathLength) bytes)")
            }
            throw KeychainError(.io, "cannot listen on \(path): \(error)")
        }
    }

    private static func makePrivateDirectory(_ path: String) throws(KeychainError) {
        guard FileStatus.of(path: path) == nil else { return }
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if parent != path { try makePrivateDirectory(parent) }
        do {
            try Files.makeDirectory(path, mode: 0o700)
        } catch {
            guard error == .fileExists else { throw KeychainError(.io, "cannot create \(path): \(error)") }
        }
    }

    /// No core dumps (a crash must not write the unlocked keys to disk), no tracing by other processes of
    /// the same user, and no passphrase left in the environment it was started with.
    static func hardenProcess(log: @Sendable (String) -> Void) {
        // `latchkey unlock-keychain` hands the passphrase over the socket; one started some other way may
        // have it in its environment, where it would stay for the agent's life.
        for name in ["LATCHKEY_PASSPHRASE", "LATCHKEY_BACKUP_PASSPHRASE"] { Environment.scrub(name) }
        if !Processes.disableCoreDumps() { log("could not turn core dumps off") }
        // Not dumpable: a process of the same user can no longer ptrace the agent or read its memory through
        // /proc (as ssh-agent does). Only a privileged one can.
        do {
            try Processes.setNotDumpable()
        } catch {
            log("could not mark the process not dumpable: \(error)")
        }
    }
}

/// The open connections, for the connection limit: when it is reached, the connection idle the longest
/// (strangers that never said hello first) makes room for the new one, so idle connections cannot lock
/// clients out.
final class ConnectionTable: Sendable {
    private struct Entry {
        let stream: AgentStream
        var greeted = false
        var lastActive = ContinuousClock.now
        /// Whether the agent told this connection's program it does not serve it.
        var refused = false
    }
    private struct Table: ~Copyable {
        var entries: [Int: Entry] = [:]
        var nextID = 0
    }
    private let capacity: Int
    private let table = Mutex(Table())

    init(capacity: Int) { self.capacity = capacity }

    /// Adds a connection; returns its id and the connection it displaced, if the table was full.
    func admit(_ stream: AgentStream) -> (id: Int, evicted: AgentStream?) {
        table.withLock { table in
            var evicted: AgentStream?
            if table.entries.count >= capacity {
                let victim = table.entries.min { left, right in
                    left.value.greeted == right.value.greeted
                        ? left.value.lastActive < right.value.lastActive : !left.value.greeted
                }
                if let victim {
                    evicted = victim.value.stream
                    table.entries[victim.key] = nil
                }
            }
            let id = table.nextID
            table.nextID += 1
            table.entries[id] = Entry(stream: stream)
            return (id, evicted)
        }
    }

    func markGreeted(_ id: Int) { table.withLock { $0.entries[id]?.greeted = true } }
    func markRefused(_ id: Int) { table.withLock { $0.entries[id]?.refused = true } }

    /// Shuts down every connection whose program was refused, but `id`'s; returns how many. Their clients
    /// send nothing more on them (they open the keychain themselves), so no request is cut off; each notices
    /// the end before its next call and asks the agent again.
    func closeRefused(except id: Int) -> Int {
        let streams: [AgentStream] = table.withLock { table in
            let chosen = table.entries.filter { $0.key != id && $0.value.refused }
            for key in chosen.keys { table.entries[key]?.refused = false }
            return chosen.map(\.value.stream)
        }
        for stream in streams { stream.shutDown() }
        return streams.count
    }
    /// Shuts down every connection (the waiting room, when it closes): each one's handler sees the end.
    func closeAll() {
        let streams = table.withLock { table in table.entries.values.map(\.stream) }
        for stream in streams { stream.shutDown() }
    }
    func touch(_ id: Int) { table.withLock { $0.entries[id]?.lastActive = .now } }
    func remove(_ id: Int) { table.withLock { _ = $0.entries.removeValue(forKey: id) } }
    var count: Int { table.withLock { $0.entries.count } }
}
