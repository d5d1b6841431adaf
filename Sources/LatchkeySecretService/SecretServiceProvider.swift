import Dispatch
package import FoundationEssentials
package import LatchkeyDBus
package import LatchkeyEngine
import LatchkeyPKI
import LatchkeyPOSIX
import Synchronization

/// `latchkeyd --secret-service`: the freedesktop.org Secret Service (`org.freedesktop.secrets`) on the
/// session bus, over the keychain the agent holds — so GNOME and KDE programs, libsecret's `secret-tool`,
/// Python's `keyring`/`secretstorage` and Chromium keep their secrets in Latchkey. It runs on a thread of
/// its own, which alone touches its bus connection; prompts run on threads of their own and hand their
/// results back through a queue.
package enum SecretServiceProvider {
    /// What the provider needs from the agent.
    package struct Configuration: Sendable {
        /// The keychain as `caller` sees it: the agent's service for that caller — the same road, with the
        /// same bookkeeping (background sync told of a change at once, the access log written), as its own
        /// socket's requests take. `requester` is the bus connection's process behind the call being answered
        /// (nil for the provider's own requests, its bookkeeping, which the access log leaves out), for the access log.
        package let service: @Sendable (CallerIdentity, Requester?) -> any KeychainService

        /// The process behind a call, as the provider knows it: its pid and user (from the bus daemon), and
        /// under isolation what the agent decided it acts as.
        package struct Requester: Sendable {
            package let pid: Int32
            package let uid: UInt32
            package let summary: String?
            /// Why it may read what it reads, for the access log, when not its access groups (an item's access
            /// list, the user's answer).
            package var reason: String?
        }
        /// Unlocks it (the agent's own unlock: keys, registrations, settings).
        package let unlock: @Sendable (Passphrase) throws(KeychainError) -> Void
        /// Locks it.
        package let lock: @Sendable () -> Void
        /// Asks the user for the passphrase (pinentry), for an `Unlock` prompt; nil: prompts are dismissed.
        package let presence: (any UserPresenceVerifier)?
        /// The agent's log.
        package let log: @Sendable (String) -> Void
        /// Which items each program sees.
        package let policy: SecretServicePolicy
        /// Under isolation, what fixes a connection's process when the connection joins the bus (or at its
        /// first call, for one that was there before the provider), or why it is refused; the pin then says who
        /// it acts as — an attested sandbox app, a registration, else its executable's own.
        package let identify: @Sendable (BusCaller) -> Result<ProcessPin, KeychainError>
        /// Whether the items it stores are synchronizable (`kSecAttrSynchronizable`): they then go to the
        /// vault's other devices with the keychain's sync. Either way it shows the synchronizable items of its
        /// collections beside the others — those another device stored through its Secret Service.
        package let synchronizable: Bool
        /// Under isolation, items' access lists and the question that adds to them (issue 53); nil: each
        /// program reads its own groups' items alone.
        package let access: AccessQuestions?

        /// What the provider asks the agent about other programs' items under isolation.
        package struct AccessQuestions: Sendable {
            /// The persistent references of the items whose access lists name a program.
            package let listed: @Sendable (TrustedProgram) -> Set<Data>
            /// Whether the user can be asked now (pinentry, and a display or terminal for it).
            package let canAsk: @Sendable () -> Bool
            /// Asks the user whether the program — its process — may read the item; true for Always allow
            /// (then it is on the item's list), false for Allow once; throws the refusal. Runs on a prompt's
            /// thread.
            package let ask: @Sendable (TrustedProgram, Int32, Data) throws(KeychainError) -> Bool

            /// The agent's answers.
            package init(
                listed: @escaping @Sendable (TrustedProgram) -> Set<Data>,
                canAsk: @escaping @Sendable () -> Bool,
                ask: @escaping @Sendable (TrustedProgram, Int32, Data) throws(KeychainError) -> Bool
            ) {
                self.listed = listed
                self.canAsk = canAsk
                self.ask = ask
            }
        }

        /// A configuration.
        package init(
            service: @escaping @Sendable (CallerIdentity, Requester?) -> any KeychainService,
            unlock: @escaping @Sendable (Passphrase) throws(KeychainError) -> Void,
            lock: @escaping @Sendable () -> Void, presence: (any UserPresenceVerifier)?, policy: SecretServicePolicy,
            identify: @escaping @Sendable (BusCaller) -> Result<ProcessPin, KeychainError>,
            synchronizable: Bool = false, access: AccessQuestions? = nil, log: @escaping @Sendable (String) -> Void
        ) {
            self.synchronizable = synchronizable
            self.access = access
            self.service = service
            self.unlock = unlock
            self.lock = lock
            self.presence = presence
            self.policy = policy
            self.identify = identify
            self.log = log
        }
    }

    /// The well-known name.
    package static let busName = "org.freedesktop.secrets"

    /// Starts the provider's thread, which connects to the session bus and asks for the name at once — while
    /// the agent opens its keychain (a cold D-Bus activation waits for both: issue 56) — then waits for its
    /// configuration (`Launch.serve`) before it answers anything; calls that come meanwhile wait in sd-bus's
    /// queue. When another provider owns the name (GNOME Keyring, KWallet, KeePassXC still running in the
    /// session being switched), it says which and waits in the bus's queue for the name, which the bus hands
    /// over when that provider leaves — the agent meanwhile serves everything else (exiting instead would make
    /// a socket-activated agent fail again at every start until systemd gave up on it).
    package static func launch(log: @escaping @Sendable (String) -> Void) -> Launch {
        let launch = Launch()
        // A thread of pthreads' own: Foundation's `Thread` starts about 0.2 ms later the first time.
        DetachedThread.start(name: "secret-service") {
            let bus: Bus
            let acquired: Bool
            do throws(BusError) {
                bus = try Bus(.session)
                acquired = try bus.requestNameOrQueue(busName)
            } catch {
                launch.finish(.failure(error))
                return
            }
            launch.configured.wait()
            guard let configuration = launch.configuration.withLock({ $0 }) else { return }
            let server = SecretServiceServer(bus: bus, configuration: configuration)
            do throws(BusError) {
                try server.install()
                if acquired {
                    log("serving the Secret Service (\(busName)) on the session bus")
                } else {
                    log(
                        "another provider holds \(busName) (\(holder(of: busName, on: bus))): the Secret Service waits for the name and takes it when that provider leaves"
                    )
                    // Watched only when queued (no round trip at a cold start). A NameAcquired that came before
                    // the watch waits in sd-bus's queue and reaches it in `run` below: the bus sends it to this
                    // connection whatever its match rules.
                    try bus.onNameAcquired(busName) {
                        log(
                            "serving the Secret Service (\(busName)) on the session bus: the provider that held it left"
                        )
                    }
                }
            } catch {
                launch.finish(.failure(error))
                return
            }
            launch.finish(.success(()))
            do {
                try bus.run(intervalMicroseconds: 50_000) { server.drainCompletedPrompts() }
            } catch {
                log("the Secret Service stopped: \(error)")
            }
        }
        return launch
    }

    /// The provider's thread between its start and its configuration (`launch`).
    package final class Launch: Sendable {
        fileprivate let configuration = Mutex<Configuration?>(nil)
        fileprivate let configured = DispatchSemaphore(value: 0)
        private let outcome = Mutex<Result<Void, BusError>?>(nil)
        private let finished = DispatchSemaphore(value: 0)

        fileprivate func finish(_ result: Result<Void, BusError>) {
            outcome.withLock { $0 = result }
            finished.signal()
        }

        /// Hands the provider its configuration and returns once it serves, or throws why it could not (the
        /// bus could not be reached, the name not asked for).
        package func serve(_ configuration: Configuration) throws(BusError) {
            self.configuration.withLock { $0 = configuration }
            configured.signal()
            finished.wait()
            try outcome.withLock { $0 }?.get()
        }
    }
}

/// Who owns `name` on `bus`, for a log line: its unique name and process, as far as the bus says.
private func holder(of name: String, on bus: Bus) -> String {
    do throws(BusError) {
        let owner = try bus.owner(of: name)
        let pid = try bus.processID(of: owner)
        // Another user's process (GNOME Keyring started by another session) cannot be read: shown as "?".
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? "?"
        return "\(owner), pid \(pid), \(executable)"
    } catch {
        // It left between the request and these questions: the bus hands the name over now.
        return "gone since"
    }
}

/// Which Secret Service items a program sees.
package enum SecretServicePolicy: String, Sendable, CaseIterable {
    /// Every program of the user sees every Secret Service item (as with GNOME Keyring): the compatible
    /// default.
    case shared
    /// A program sees the items it created and those of the access groups it is registered for
    /// (`latchkey register-application` grants more); an unregistered program is its executable (path).
    case isolated
}

/// A D-Bus error a method answers with.
struct SecretServiceError: Error {
    let name: String
    let message: String

    static func isLocked(_ message: String) -> Self {
        Self(name: "org.freedesktop.Secret.Error.IsLocked", message: message)
    }
    static func noSuchObject(_ message: String) -> Self {
        Self(name: "org.freedesktop.Secret.Error.NoSuchObject", message: message)
    }
    static func noSession(_ message: String) -> Self {
        Self(name: "org.freedesktop.Secret.Error.NoSession", message: message)
    }
    static func notSupported(_ message: String) -> Self {
        Self(name: "org.freedesktop.DBus.Error.NotSupported", message: message)
    }
    static func invalidArguments(_ message: String) -> Self {
        Self(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }
    static func accessDenied(_ message: String) -> Self {
        Self(name: "org.freedesktop.DBus.Error.AccessDenied", message: message)
    }

    /// A keychain failure as the Secret Service names it.
    init(_ error: KeychainError) {
        switch error.status {
        case .interactionNotAllowed: self = .isLocked("the keychain is locked: \(error.message)")
        case .itemNotFound: self = .noSuchObject("no such item")
        case .missingEntitlement: self = .accessDenied(error.message)
        case .param: self = .invalidArguments(error.message)
        default: self.init(name: "org.freedesktop.DBus.Error.Failed", message: error.message)
        }
    }

    init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    init(_ error: BusError) { self.init(name: "org.freedesktop.DBus.Error.InvalidArgs", message: error.description) }
}
