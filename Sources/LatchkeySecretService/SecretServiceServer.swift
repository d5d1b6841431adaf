import FoundationEssentials
import LatchkeyCaller
import LatchkeyDBus
import LatchkeyEngine
import LatchkeyPKI
import LatchkeyPOSIX
import Synchronization

/// Answers the method calls of the Secret Service's objects (the service, the `login` collection and its
/// `default` alias, items, sessions, prompts), with `org.freedesktop.DBus.Properties` and introspection.
/// Used on the bus thread only.
///
/// This file holds the server's state, the collections a caller sees, aliases and the dispatch. Who each
/// connection acts as is decided in `SecretServiceServer+Callers.swift`; each D-Bus interface's behaviour is
/// an extension of its own (`+Service`, `+Collection`, `+Item`, `+Session`, `+Prompt`, `+Properties`, and
/// `+Portal` for the portal backend); decoding arguments from and encoding replies to sd-bus messages is in
/// `+Marshalling`.
final class SecretServiceServer {
    let bus: Bus
    let configuration: SecretServiceProvider.Configuration
    var sessions = SecretSessions()
    /// The `session` collection's items.
    let sessionItems = SessionItems()
    /// Prompts made and not yet completed.
    var prompts: [String: PendingPrompt] = [:]
    var nextPrompt = 1
    /// Prompts completed on their own threads, waiting for the bus thread to emit `Completed`.
    let completed = CompletedPrompts()

    /// A prompt `Unlock` made: its owner, the objects it unlocks, and — another program's items offered to the
    /// owner (issue 53) — the access questions it asks, each an item's reference and path.
    struct PendingPrompt: Sendable {
        let owner: String
        let objects: [String]
        var questions: [(reference: Data, path: String)] = []
        /// Who the questions are about: the owner's program and process.
        var program: TrustedProgram?
        var pid: Int32 = 0
    }

    /// A prompt that finished: whether it was dismissed, the objects it unlocked, and the items its owner
    /// was allowed to read once.
    struct CompletedPrompt: Sendable {
        let path: String
        let owner: String
        let dismissed: Bool
        let objects: [String]
        var allowedOnce: [Data] = []
    }

    final class CompletedPrompts: Sendable {
        let queue = Mutex<[CompletedPrompt]>([])
    }

    /// Under isolation (issue 53): other programs' items each connection's searches offered it (bounded by
    /// `offerLimit`), and those the user allowed it to read once (spent by the read). Forgotten when the
    /// connection leaves.
    var offers: [String: Set<Data>] = [:]
    var allowedOnce: [String: Set<Data>] = [:]

    init(bus: Bus, configuration: SecretServiceProvider.Configuration) {
        self.bus = bus
        self.configuration = configuration
    }

    /// The user and process behind each connection, asked of the bus once per connection (they cannot
    /// change), for the shared policy.
    var peers: [String: (uid: UInt32, pid: Int32)] = [:]
    /// Under isolation, what the provider knows of each connection: its process pinned (when it joined the
    /// bus, or at its first call for one that was there before), who it acts as (from its first call on),
    /// or why it is refused for good.
    enum PeerStanding {
        case pinned(ProcessPin)
        case identified(PinnedCaller)
        case refused(String)
    }
    var standings: [String: PeerStanding] = [:]
    /// Under isolation: the process the daemon recorded for each connection on the bus (to count a
    /// process's connections); learned as connections come and forgotten as they go.
    var processOfPeer: [String: Int32] = [:]
    /// The bus daemon's process, found once (`CallerGate.busDaemon`).
    lazy var busDaemon: ProcessHandle? = bus.socketDescriptor.flatMap { CallerGate.busDaemon(connectedThrough: $0) }

    /// The connection whose call is being answered (set by `handle`), for the access log.
    var currentSender: String?

    /// The keychain as `caller` sees it, for the call being answered: the agent's service, told which
    /// process asks (`Configuration.Requester`).
    func service(for caller: CallerIdentity) -> any KeychainService {
        configuration.service(caller, currentSender.flatMap(requester(of:)))
    }

    /// The process behind connection `sender`, as far as the provider has learned it.
    func requester(of sender: String) -> SecretServiceProvider.Configuration.Requester? {
        if let known = peers[sender] { return .init(pid: known.pid, uid: known.uid, summary: nil) }
        guard let pid = processOfPeer[sender] else { return nil }
        var summary: String?
        if case .identified(let caller) = standings[sender] { summary = caller.summary }
        return .init(pid: pid, uid: CurrentProcess.userID, summary: summary)
    }

    /// Every collection, as the sender of `message` sees them.
    func collections(for message: BusMessage) throws -> [String: any SecretCollection] {
        collections(caller: try caller(for: message))
    }

    /// Every collection, as `caller` sees them.
    func collections(caller: CallerIdentity) -> [String: any SecretCollection] {
        var collections: [String: any SecretCollection] = [
            SecretPaths.collection: SecretStore(
                service: service(for: caller), caller: caller, label: loginLabel,
                synchronizable: configuration.synchronizable, reach: otherItems()),
            SecretPaths.sessionCollection: SessionCollection(storage: sessionItems, caller: caller),
        ]
        for entry in registry.list() {
            collections[SecretPaths.collection(id: entry.id)] = SecretStore(
                service: service(for: caller), caller: caller,
                collectionID: entry.id, label: entry.label, synchronizable: configuration.synchronizable,
                reach: otherItems())
        }
        return collections
    }

    /// The collection at `path` as the sender of `message` sees it, or `NoSuchObject`: the list of made
    /// collections is read only for one of them (a call on a login or session item reads none).
    func collection(at path: String, for message: BusMessage) throws -> any SecretCollection {
        try collection(at: path, caller: try caller(for: message))
    }

    /// The collection at `path` as `caller` sees it, or `NoSuchObject`.
    func collection(at path: String, caller: CallerIdentity) throws -> any SecretCollection {
        if path == SecretPaths.collection {
            return SecretStore(
                service: service(for: caller), caller: caller, label: loginLabel,
                synchronizable: configuration.synchronizable, reach: otherItems())
        }
        if path == SecretPaths.sessionCollection { return SessionCollection(storage: sessionItems, caller: caller) }
        guard let entry = registry.list().first(where: { SecretPaths.collection(id: $0.id) == path }) else {
            throw SecretServiceError.noSuchObject("no collection \(path)")
        }
        return SecretStore(
            service: service(for: caller), caller: caller, collectionID: entry.id, label: entry.label,
            synchronizable: configuration.synchronizable, reach: otherItems())
    }

    /// The collections' paths in the order they are listed: login, session, then the others by id.
    static func order(_ collections: [String: any SecretCollection]) -> [String] {
        let fixed = [SecretPaths.collection, SecretPaths.sessionCollection]
        return fixed + collections.keys.filter { !fixed.contains($0) }.sorted()
    }

    /// The collections made with `CreateCollection` and their aliases: the provider's own bookkeeping, read
    /// and written as its own requests (no requester: not in the access log as a program's access).
    var registry: CollectionRegistry {
        let configuration = configuration
        return CollectionRegistry(services: { caller in configuration.service(caller, nil) })
    }

    /// The `login` collection's label, read once after the first unlock (before it, the registry cannot be
    /// read and the built-in "Login" stands in); `Set` updates it.
    var cachedLoginLabel: String?
    var loginLabel: String {
        if let cachedLoginLabel { return cachedLoginLabel }
        // A status that cannot be read (the agent's in-process service's never fails) counts as not yet unlocked.
        guard (try? configuration.service(SecretStore.shared, nil).status().lockState.isProtectedDataAvailable) == true
        else { return "Login" }
        let label = registry.loginLabel() ?? "Login"
        cachedLoginLabel = label
        return label
    }

    func install() throws(BusError) {
        try bus.handleObjects(under: SecretPaths.service) { [unowned self] message in self.handle(message) }
        try bus.handleObjects(under: SecretPortal.path) { [unowned self] message in self.handlePortal(message) }
        try bus.onPeers(arrived: { [unowned self] peer in self.peerArrived(peer) }) { [unowned self] peer in
            self.peerLeft(peer)
            let closed = self.sessions.closeAll(of: peer)
            if closed > 0 {
                self.configuration.log("closed \(closed) Secret Service session(s) of \(peer), which left the bus")
            }
        }
    }

    // MARK: Dispatch

    /// Answers a call; false for a path or method the provider does not have (sd-bus then says so).
    func handle(_ message: BusMessage) -> Bool {
        currentSender = message.sender
        defer { currentSender = nil }
        do {
            guard let reply = try answer(message) else { return false }
            try bus.send(reply)
        } catch let error as SecretServiceError {
            bus.fail(message, name: error.name, error.message)
        } catch let error as BusError {
            bus.fail(message, name: "org.freedesktop.DBus.Error.InvalidArgs", error.description)
        } catch let error as KeychainError {
            let mapped = SecretServiceError(error)
            bus.fail(message, name: mapped.name, mapped.message)
        } catch let error as KeyError {
            // A public value or secret the session's cryptography refuses.
            bus.fail(message, name: "org.freedesktop.DBus.Error.InvalidArgs", error.reason)
        } catch {
            bus.fail(message, name: "org.freedesktop.DBus.Error.Failed", "\(error)")
        }
        return true
    }

    enum Target {
        case service
        case collection(String)
        case item(collection: String, reference: Data)
        case session(String)
        case prompt(String)
    }

    /// Under isolation, whose aliases resolve while a call is answered: its sender's (each program has its
    /// own, `CollectionRegistry.alias(_:of:)`). Set at the start of `answer`, on the bus thread.
    private var aliasOwner: CallerIdentity?

    /// The collection an alias names now: `login` and `session` their own; `default` the collection given it
    /// with `SetAlias` (or `CreateCollection`), else `login`; another name the collection given it, else none.
    /// Under isolation, "given it" by the calling program itself.
    func resolveAlias(_ name: String) -> String? {
        switch name {
        case "login", "session": return SecretPaths.alias(name)
        default:
            if configuration.policy == .isolated {
                if let owner = aliasOwner, let id = registry.alias(name, of: owner) {
                    return SecretPaths.collection(id: id)
                }
            } else if let entry = registry.list().first(where: { $0.alias == name }) {
                return SecretPaths.collection(id: entry.id)
            }
            return name == "default" ? SecretPaths.collection : nil
        }
    }

    /// Points alias `name` at collection `id` (nil: at nothing made, so `default` names `login` again): the
    /// caller's own under isolation, everyone's otherwise.
    func setAlias(_ name: String, to id: String?) throws {
        if configuration.policy == .isolated {
            guard let owner = aliasOwner else { throw SecretServiceError.accessDenied("the caller is not identified") }
            try registry.setAlias(name, to: id, for: owner)
        } else if let id {
            try registry.setAlias(name, to: id)
        } else {
            try registry.removeAlias(name)
        }
    }

    private func target(_ path: String) -> Target? {
        if path == SecretPaths.service { return .service }
        if let collection = SecretPaths.collection(of: path, alias: resolveAlias) { return .collection(collection) }
        if let (collection, reference) = SecretPaths.parseItem(path, alias: resolveAlias) {
            return .item(collection: collection, reference: reference)
        }
        if path.hasPrefix(SecretPaths.session + "/") { return .session(path) }
        if path.hasPrefix(SecretPaths.prompt + "/") { return .prompt(path) }
        return nil
    }

    /// The reply to a call, or nil when there is no such method on that object.
    private func answer(_ message: BusMessage) throws -> BusMessage? {
        let interface = message.interface
        let member = message.member
        let introspect = interface == "org.freedesktop.DBus.Introspectable" && member == "Introspect"
        aliasOwner = nil
        defer { aliasOwner = nil }
        if configuration.policy == .isolated && interface != "org.freedesktop.DBus.Introspectable" {
            aliasOwner = try caller(for: message)
        }
        guard let target = target(message.path) else {
            if introspect { return try introspection(message) }
            throw SecretServiceError(
                name: "org.freedesktop.DBus.Error.UnknownObject", message: "no object \(message.path)")
        }
        if introspect { return try introspection(message) }
        // Each interface's calls are decoded, answered by its typed methods and encoded in
        // SecretServiceServer+Marshalling.swift; the behaviour is in SecretServiceServer+<Interface>.swift.
        switch (target, interface) {
        case (_, "org.freedesktop.DBus.Properties"): return try propertiesCall(message, target)
        case (.service, "org.freedesktop.Secret.Service"):
            let caller = try caller(for: message)
            return try serviceCall(
                message, caller: caller, login: try collection(at: SecretPaths.collection, caller: caller))
        case (.collection(let path), "org.freedesktop.Secret.Collection"):
            return try collectionCall(message, try collection(at: path, for: message))
        case (.item(let collection, let reference), "org.freedesktop.Secret.Item"):
            return try itemCall(message, try self.collection(at: collection, for: message), reference)
        case (.session(let path), "org.freedesktop.Secret.Session"): return try sessionCall(message, path)
        case (.prompt(let path), "org.freedesktop.Secret.Prompt"): return try promptCall(message, path)
        default: return nil
        }
    }
}
