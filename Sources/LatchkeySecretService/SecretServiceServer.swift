import Foundation
import LatchkeyDBus
import LatchkeyEngine
import LatchkeyPKI
import LatchkeyPOSIX
import Synchronization

/// Answers the method calls of the Secret Service's objects (the service, the `login` collection and its
/// `default` alias, items, sessions, prompts), with `org.freedesktop.DBus.Properties` and introspection.
/// Used on the bus thread only.
///
/// This file holds the server's state, who each connection acts as, the collections it sees and the dispatch;
/// each D-Bus interface's behaviour is an extension of its own (`SecretServiceServer+Service.swift`,
/// `+Collection`, `+Item`, `+Session`, `+Prompt`, `+Properties`, and `+Portal` for the portal backend), and
/// decoding arguments from and encoding replies to sd-bus messages is in `+Marshalling`.
final class SecretServiceServer {
    let bus: Bus
    let configuration: SecretServiceProvider.Configuration
    var sessions = SecretSessions()
    /// The `session` collection's items.
    let sessionItems = SessionItems()
    /// Prompts made and not yet completed: their owners and the objects they unlock.
    var prompts: [String: (owner: String, objects: [String])] = [:]
    var nextPrompt = 1
    /// Prompts completed on their own threads, waiting for the bus thread to emit `Completed`.
    let completed = CompletedPrompts()

    final class CompletedPrompts: Sendable {
        let queue = Mutex<[(path: String, dismissed: Bool, objects: [String])]>([])
    }

    init(bus: Bus, configuration: SecretServiceProvider.Configuration) {
        self.bus = bus
        self.configuration = configuration
    }

    /// The user and process behind each connection, asked of the bus once per connection (they cannot
    /// change), for the shared policy.
    private var peers: [String: (uid: UInt32, pid: Int32)] = [:]
    /// Under isolation, what the provider knows of each connection: its process pinned (when it joined the
    /// bus, or at its first call for one that was there before), who it acts as (from its first call on),
    /// or why it is refused for good.
    private enum PeerStanding {
        case pinned(ProcessPin)
        case identified(PinnedCaller)
        case refused(String)
    }
    private var standings: [String: PeerStanding] = [:]
    /// Under isolation: the process the daemon recorded for each connection on the bus (to count a
    /// process's connections); learned as connections come and forgotten as they go.
    private var processOfPeer: [String: Int32] = [:]
    /// The address the bus daemon listens on, read once.
    private lazy var busAddress: [UInt8]? = Self.listeningAddress(of: bus)

    /// Who the sender of `message` acts as: another user's program is refused; under isolation, what the
    /// agent decided of the connection, as long as it holds (docs/LATCHKEY-SECURITY.md, "The Secret Service").
    func caller(for message: BusMessage) throws -> CallerIdentity { try caller(of: message.sender) }

    /// Who connection `sender` acts as (`caller(for:)`).
    func caller(of sender: String) throws -> CallerIdentity {
        switch configuration.policy {
        case .shared:
            let (uid, pid): (UInt32, Int32)
            if let known = peers[sender] {
                (uid, pid) = known
            } else {
                (uid, pid) = try bus.credentials(of: sender)
                peers[sender] = (uid, pid)
            }
            try checkUser(uid, pid: pid)
            return SecretStore.shared
        case .isolated:
            return try isolatedCaller(sender)
        }
    }

    private func checkUser(_ uid: UInt32, pid: Int32) throws {
        guard uid == CurrentProcess.userID else {
            configuration.log("refused a Secret Service call from pid \(pid): uid \(uid) is not the agent's user")
            throw SecretServiceError.accessDenied("programs of another user (uid \(uid)) are refused")
        }
    }

    private func isolatedCaller(_ sender: String) throws -> CallerIdentity {
        if standings[sender] == nil { try pin(sender) }
        switch standings[sender] {
        case .refused(let reason): throw SecretServiceError.accessDenied(reason)
        case .identified(let caller):
            guard let reason = caller.invalidation() else { return caller.identity }
            try refuse(sender, "\(reason); its connection is refused from now on")
        case .pinned(let pin):
            switch pin.resolve() {
            case .success(let caller):
                standings[sender] = .identified(caller)
                configuration.log("Secret Service connection \(sender) acts as \(caller.summary)")
                return caller.identity
            case .failure(let error) where error.status == .interactionNotAllowed:
                throw error  // Registrations still sealed: asked again at the next call.
            case .failure(let error):
                try refuse(sender, error.detail ?? error.message)
            }
        case nil:
            try refuse(sender, "the connection could not be identified")
        }
    }

    /// Pins the process of connection `name`, or refuses the connection for good.
    private func pin(_ name: String) throws {
        let credentials = try bus.connectionCredentials(of: name)
        guard credentials.uid == CurrentProcess.userID else {
            standings[name] = .refused("programs of another user (uid \(credentials.uid)) are refused")
            configuration.log("refused a Secret Service connection of pid \(credentials.pid): uid \(credentials.uid) is not the agent's user")
            return
        }
        processOfPeer[name] = credentials.pid
        // The process's connections are counted again after the agent has looked at its sockets: a connection
        // that completed its handshake meanwhile is then counted too (its socket may have been among them).
        var counted = try connections(of: credentials.pid)
        var outcome: Result<ProcessPin, KeychainError>
        var rounds = 0
        repeat {
            outcome = configuration.identify(BusCaller(credentials: credentials, connectionsOfProcess: counted, busAddress: busAddress))
            let recount = try connections(of: credentials.pid)
            if recount == counted { break }
            counted = recount
            rounds += 1
            if rounds == 3 { outcome = .failure(KeychainError(.missingEntitlement, "pid \(credentials.pid) keeps opening connections")) }
        } while rounds < 3
        switch outcome {
        case .success(let pin): standings[name] = .pinned(pin)
        case .failure(let error):
            let reason = error.detail ?? error.message
            standings[name] = .refused(reason)
            configuration.log("refused the Secret Service connection \(name): \(reason)")
        }
    }

    private func refuse(_ sender: String, _ reason: String) throws -> Never {
        standings[sender] = .refused(reason)
        configuration.log("refused the Secret Service connection \(sender): \(reason)")
        throw SecretServiceError.accessDenied(reason)
    }

    /// How many connections on the bus belong to process `pid` (by what the daemon recorded for each).
    private func connections(of pid: Int32) throws -> Int {
        for name in try bus.names() where name.hasPrefix(":") && processOfPeer[name] == nil {
            // A connection that left between the listing and the question has no process to count.
            do {
                processOfPeer[name] = try bus.processID(of: name)
            } catch {
                continue
            }
        }
        return processOfPeer.values.count { $0 == pid }
    }

    /// A connection joined the bus. Under isolation its process is pinned now — before it can run another
    /// program and hand the connection on (the exec race) — and connections of the same process that were
    /// let in are checked again at their next call, with one more connection to account for.
    private func peerArrived(_ name: String) {
        guard configuration.policy == .isolated, name != bus.uniqueName else { return }
        do {
            try pin(name)
        } catch {
            return  // Gone already: nothing to pin.
        }
        guard let pid = processOfPeer[name] else { return }
        for (other, standing) in standings where other != name && processOfPeer[other] == pid {
            if case .refused = standing { continue }
            standings[other] = nil
        }
    }

    private func peerLeft(_ name: String) {
        peers[name] = nil
        standings[name] = nil
        processOfPeer[name] = nil
    }

    /// What the provider's own bus socket is connected to: the daemon's listening address.
    private static func listeningAddress(of bus: Bus) -> [UInt8]? {
        guard let fd = bus.socketDescriptor, let inode = FileStatus.of(descriptor: fd)?.inode,
            let table = try? SocketTable.read()  // Unreadable: no address, and every isolated caller is refused.
        else { return nil }
        let address = table.peerAddress(of: UInt32(truncatingIfNeeded: inode))
        return address?.isEmpty == false ? address : nil
    }

    /// Every collection, as the sender of `message` sees them.
    func collections(for message: BusMessage) throws -> [String: any SecretCollection] {
        collections(caller: try caller(for: message))
    }

    /// Every collection, as `caller` sees them.
    func collections(caller: CallerIdentity) -> [String: any SecretCollection] {
        var collections: [String: any SecretCollection] = [
            SecretPaths.collection: SecretStore(database: configuration.database, caller: caller, label: loginLabel),
            SecretPaths.sessionCollection: SessionCollection(storage: sessionItems, caller: caller),
        ]
        for entry in registry.list() {
            collections[SecretPaths.collection(id: entry.id)] = SecretStore(database: configuration.database, caller: caller,
                                                                           collectionID: entry.id, label: entry.label)
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
        if path == SecretPaths.collection { return SecretStore(database: configuration.database, caller: caller, label: loginLabel) }
        if path == SecretPaths.sessionCollection { return SessionCollection(storage: sessionItems, caller: caller) }
        guard let entry = registry.list().first(where: { SecretPaths.collection(id: $0.id) == path }) else {
            throw SecretServiceError.noSuchObject("no collection \(path)")
        }
        return SecretStore(database: configuration.database, caller: caller, collectionID: entry.id, label: entry.label)
    }

    /// The collections' paths in the order they are listed: login, session, then the others by id.
    static func order(_ collections: [String: any SecretCollection]) -> [String] {
        let fixed = [SecretPaths.collection, SecretPaths.sessionCollection]
        return fixed + collections.keys.filter { !fixed.contains($0) }.sorted()
    }

    var registry: CollectionRegistry { CollectionRegistry(database: configuration.database) }

    /// The `login` collection's label, read once after the first unlock (before it, the registry cannot be
    /// read and the built-in "Login" stands in); `Set` updates it.
    var cachedLoginLabel: String?
    var loginLabel: String {
        if let cachedLoginLabel { return cachedLoginLabel }
        guard configuration.database.lockState.isProtectedDataAvailable else { return "Login" }
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
            if closed > 0 { self.configuration.log("closed \(closed) Secret Service session(s) of \(peer), which left the bus") }
        }
    }

    // MARK: Dispatch

    /// Answers a call; false for a path or method the provider does not have (sd-bus then says so).
    func handle(_ message: BusMessage) -> Bool {
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
        case service, collection(String), item(collection: String, reference: Data), session(String), prompt(String)
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
                if let owner = aliasOwner, let id = registry.alias(name, of: owner) { return SecretPaths.collection(id: id) }
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
        let interface = message.interface, member = message.member
        let introspect = interface == "org.freedesktop.DBus.Introspectable" && member == "Introspect"
        aliasOwner = nil
        defer { aliasOwner = nil }
        if configuration.policy == .isolated && interface != "org.freedesktop.DBus.Introspectable" {
            aliasOwner = try caller(for: message)
        }
        guard let target = target(message.path) else {
            if introspect { return try introspection(message) }
            throw SecretServiceError(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no object \(message.path)")
        }
        if introspect { return try introspection(message) }
        // Each interface's calls are decoded, answered by its typed methods and encoded in
        // SecretServiceServer+Marshalling.swift; the behaviour is in SecretServiceServer+<Interface>.swift.
        switch (target, interface) {
        case (_, "org.freedesktop.DBus.Properties"): return try propertiesCall(message, target)
        case (.service, "org.freedesktop.Secret.Service"):
            let caller = try caller(for: message)
            return try serviceCall(message, caller: caller, login: try collection(at: SecretPaths.collection, caller: caller))
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
