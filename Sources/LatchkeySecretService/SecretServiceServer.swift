import Foundation
import LatchkeyDBus
import LatchkeyEngine
import LatchkeyPKI
import LatchkeyPOSIX
import Synchronization

/// Answers the method calls of the Secret Service's objects (the service, the `login` collection and its
/// `default` alias, items, sessions, prompts), with `org.freedesktop.DBus.Properties` and introspection.
/// Used on the bus thread only.
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
    func caller(for message: BusMessage) throws -> CallerIdentity {
        switch configuration.policy {
        case .shared:
            let (uid, pid): (UInt32, Int32)
            if let known = peers[message.sender] {
                (uid, pid) = known
            } else {
                (uid, pid) = try bus.credentials(of: message.sender)
                peers[message.sender] = (uid, pid)
            }
            try checkUser(uid, pid: pid)
            return SecretStore.shared
        case .isolated:
            return try isolatedCaller(message.sender)
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
    private func collections(for message: BusMessage) throws -> [String: any SecretCollection] {
        collections(caller: try caller(for: message))
    }

    /// Every collection, as `caller` sees them.
    private func collections(caller: CallerIdentity) -> [String: any SecretCollection] {
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
    private func collection(at path: String, for message: BusMessage) throws -> any SecretCollection {
        try collection(at: path, caller: try caller(for: message))
    }

    /// The collection at `path` as `caller` sees it, or `NoSuchObject`.
    private func collection(at path: String, caller: CallerIdentity) throws -> any SecretCollection {
        if path == SecretPaths.collection { return SecretStore(database: configuration.database, caller: caller, label: loginLabel) }
        if path == SecretPaths.sessionCollection { return SessionCollection(storage: sessionItems, caller: caller) }
        guard let entry = registry.list().first(where: { SecretPaths.collection(id: $0.id) == path }) else {
            throw SecretServiceError.noSuchObject("no collection \(path)")
        }
        return SecretStore(database: configuration.database, caller: caller, collectionID: entry.id, label: entry.label)
    }

    /// The collections' paths in the order they are listed: login, session, then the others by id.
    private static func order(_ collections: [String: any SecretCollection]) -> [String] {
        let fixed = [SecretPaths.collection, SecretPaths.sessionCollection]
        return fixed + collections.keys.filter { !fixed.contains($0) }.sorted()
    }

    private var registry: CollectionRegistry { CollectionRegistry(database: configuration.database) }

    /// The `login` collection's label, read once after the first unlock (before it, the registry cannot be
    /// read and the built-in "Login" stands in); `Set` updates it.
    private var cachedLoginLabel: String?
    private var loginLabel: String {
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

    private enum Target {
        case service, collection(String), item(collection: String, reference: Data), session(String), prompt(String)
    }

    /// Under isolation, whose aliases resolve while a call is answered: its sender's (each program has its
    /// own, `CollectionRegistry.alias(_:of:)`). Set at the start of `answer`, on the bus thread.
    private var aliasOwner: CallerIdentity?

    /// The collection an alias names now: `login` and `session` their own; `default` the collection given it
    /// with `SetAlias` (or `CreateCollection`), else `login`; another name the collection given it, else none.
    /// Under isolation, "given it" by the calling program itself.
    private func resolveAlias(_ name: String) -> String? {
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
    private func setAlias(_ name: String, to id: String?) throws {
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
        aliasOwner = nil
        defer { aliasOwner = nil }
        if configuration.policy == .isolated && interface != "org.freedesktop.DBus.Introspectable" {
            aliasOwner = try caller(for: message)
        }
        guard let target = target(message.path) else {
            if interface == "org.freedesktop.DBus.Introspectable" && member == "Introspect" {
                let reply = try bus.reply(to: message)
                try reply.append(SecretIntrospection.xml(for: message.path))
                return reply
            }
            throw SecretServiceError(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no object \(message.path)")
        }
        if interface == "org.freedesktop.DBus.Introspectable" && member == "Introspect" {
            let reply = try bus.reply(to: message)
            try reply.append(SecretIntrospection.xml(for: message.path))
            return reply
        }
        if interface == "org.freedesktop.DBus.Properties" { return try properties(message, target) }
        switch (target, interface, member) {
        case (.service, "org.freedesktop.Secret.Service", _): return try service(message, member)
        case (.collection(let path), "org.freedesktop.Secret.Collection", _):
            return try collection(message, member, try collection(at: path, for: message))
        case (.item(let collection, let reference), "org.freedesktop.Secret.Item", _):
            return try item(message, member, try self.collection(at: collection, for: message), reference)
        case (.session(let path), "org.freedesktop.Secret.Session", "Close"):
            guard sessions.close(path, caller: message.sender) else { throw SecretServiceError.noSession("no such session of yours") }
            return try bus.reply(to: message)
        case (.prompt(let path), "org.freedesktop.Secret.Prompt", _): return try prompt(message, member, path)
        default: return nil
        }
    }

    // MARK: Service

    private func service(_ message: BusMessage, _ member: String) throws -> BusMessage? {
        let caller = try caller(for: message)
        let store = try collection(at: SecretPaths.collection, caller: caller)
        // Every collection, read from the registry only by the methods that need them all.
        var collections: [String: any SecretCollection] { self.collections(caller: caller) }
        switch member {
        case "OpenSession":
            let algorithm = try message.readString()
            guard let (type, contents) = try message.peek(), type == "v" else { throw SecretServiceError.invalidArguments("OpenSession needs (s, v)") }
            _ = try message.enter("v", contents)
            let reply = try bus.reply(to: message)
            switch algorithm {
            case "plain":
                let path = sessions.open(owner: message.sender, transport: nil)
                try reply.open("v", "s")
                try reply.append("")
                try reply.close()
                try reply.append(path, as: "o")
            case SecretTransport.algorithm:
                guard contents == "ay" else { throw SecretServiceError.invalidArguments("\(algorithm) takes the client's public value as ay") }
                let transport = try SecretTransport(peerPublicKey: Data(try message.readBytes()))
                let path = sessions.open(owner: message.sender, transport: transport)
                try reply.open("v", "ay")
                try reply.append(bytes: Array(transport.publicKey))
                try reply.close()
                try reply.append(path, as: "o")
            default:
                throw SecretServiceError.notSupported("session algorithm \(algorithm) is not supported (plain, \(SecretTransport.algorithm))")
            }
            return reply
        case "SearchItems":
            let attributes = try readAttributes(message)
            var unlocked: [String] = [], locked: [String] = []
            let all = collections
            for path in Self.order(all) {
                guard let collection = all[path] else { continue }
                let found = try collection.search(attributes)
                unlocked += found.unlocked.map { SecretPaths.item($0, in: path) }
                locked += found.locked.map { SecretPaths.item($0, in: path) }
            }
            let reply = try bus.reply(to: message)
            try appendPaths(unlocked, to: reply)
            try appendPaths(locked, to: reply)
            return reply
        case "GetSecrets":
            let items = try readPaths(message)
            let session = try session(try message.readString("o"), caller: message.sender)
            let reply = try bus.reply(to: message)
            try reply.open("a", "{o(oayays)}")
            var holders: [String: any SecretCollection] = [:]
            for path in items {
                guard let (collection, reference) = SecretPaths.parseItem(path, alias: resolveAlias) else { continue }
                let holder: any SecretCollection
                if let known = holders[collection] {
                    holder = known
                } else {
                    do {
                        holder = try self.collection(at: collection, caller: caller)
                    } catch {
                        continue  // No such collection: nothing to give for that path.
                    }
                    holders[collection] = holder
                }
                let secret: (value: Data, contentType: String)
                do {
                    secret = try holder.secret(reference)
                } catch {
                    continue  // GetSecrets leaves out what it cannot give (locked or gone), as the specification says.
                }
                try reply.open("e", "o(oayays)")
                try reply.append(path, as: "o")
                try appendSecret(secret, session: session, to: reply)
                try reply.close()
            }
            try reply.close()
            return reply
        case "Unlock":
            let objects = try readPaths(message)
            let reply = try bus.reply(to: message)
            if store.isLocked {
                try appendPaths([], to: reply)
                try reply.append(makePrompt(owner: message.sender, objects: objects), as: "o")
            } else {
                try appendPaths(objects, to: reply)
                try reply.append(SecretPaths.none, as: "o")
            }
            return reply
        case "Lock":
            let objects = try readPaths(message)
            configuration.lock()
            configuration.log("locked through the Secret Service by \(message.sender)")
            let reply = try bus.reply(to: message)
            try appendPaths(objects, to: reply)
            try reply.append(SecretPaths.none, as: "o")
            return reply
        case "ReadAlias":
            let name = try message.readString()
            let reply = try bus.reply(to: message)
            try reply.append(resolveAlias(name) ?? SecretPaths.none, as: "o")
            return reply
        case "SetAlias":
            let name = try message.readString()
            let path = try message.readString("o")
            guard SecretPaths.isValidID(Substring(name)) else {
                throw SecretServiceError.invalidArguments("an alias is made of letters, digits and _")
            }
            if name == "login" || name == "session" {
                guard SecretPaths.collection(of: path, alias: resolveAlias) == SecretPaths.alias(name) else {
                    throw SecretServiceError.notSupported("\(name) always names its own collection")
                }
            } else if path == SecretPaths.none {
                try setAlias(name, to: nil)  // Gone; `default` names the keychain's login collection again.
            } else {
                guard let target = SecretPaths.collection(of: path, alias: resolveAlias) else {
                    throw SecretServiceError.noSuchObject("no collection \(path) to alias")
                }
                if let entry = registry.list().first(where: { SecretPaths.collection(id: $0.id) == target }) {
                    try setAlias(name, to: entry.id)
                } else if target == SecretPaths.collection && name == "default" {
                    try setAlias(name, to: nil)
                } else if target == SecretPaths.collection || target == SecretPaths.sessionCollection {
                    throw SecretServiceError.notSupported(
                        name == "default" ? "the default collection is kept in the keychain, not in memory"
                            : "only default may name the login collection; \(name) may name a collection made with CreateCollection")
                } else {
                    throw SecretServiceError.noSuchObject("no collection \(path) to alias")
                }
            }
            return try bus.reply(to: message)
        case "CreateCollection":
            let properties = try readProperties(message)
            let alias = try message.readString()
            // An alias that names a collection already gives that one (the specification's rule).
            let existing = alias.isEmpty ? nil : resolveAlias(alias)
            let reply = try bus.reply(to: message)
            if let existing {
                try reply.append(existing, as: "o")
            } else {
                let isolated = configuration.policy == .isolated
                let id = try registry.create(label: properties.label ?? "", alias: alias.isEmpty || isolated ? nil : alias)
                if isolated && !alias.isEmpty { try setAlias(alias, to: id) }
                let path = SecretPaths.collection(id: id)
                try reply.append(path, as: "o")
                serviceSignal("CollectionCreated", path)
                propertiesChanged(SecretPaths.service, interface: "org.freedesktop.Secret.Service", invalidated: ["Collections"])
                configuration.log("the Secret Service made the collection \(id) for \(message.sender)")
            }
            try reply.append(SecretPaths.none, as: "o")
            return reply
        default:
            return nil
        }
    }

    // MARK: Collection

    private func collection(_ message: BusMessage, _ member: String, _ store: any SecretCollection) throws -> BusMessage? {
        switch member {
        case "SearchItems":
            let found = try store.search(try readAttributes(message))
            let reply = try bus.reply(to: message)
            try appendPaths((found.unlocked + found.locked).map { SecretPaths.item($0, in: store.path) }, to: reply)
            return reply
        case "CreateItem":
            let properties = try readProperties(message)
            let secret = try readSecret(message)
            let replace = try message.readBool()
            let reference = try store.create(label: properties.label ?? "", attributes: properties.attributes ?? [:],
                                             secret: secret.value, contentType: secret.contentType, replace: replace)
            let path = SecretPaths.item(reference, in: store.path)
            let reply = try bus.reply(to: message)
            try reply.append(path, as: "o")
            try reply.append(SecretPaths.none, as: "o")
            emit("ItemCreated", path, collection: store.path)
            propertiesChanged(store.path, interface: "org.freedesktop.Secret.Collection", invalidated: ["Items"])
            return reply
        case "Delete":
            guard let store = store as? SecretStore, store.collectionID != "login" else {
                throw SecretServiceError.notSupported(store.path == SecretPaths.collection
                    ? "the login collection is the keychain itself; delete items, or the keychain with latchkey delete-keychain"
                    : "the session collection lasts as long as the agent; delete its items")
            }
            if configuration.policy == .isolated {
                try registry.delete(store.collectionID, as: try caller(for: message))
            } else {
                try registry.delete(store.collectionID)
            }
            serviceSignal("CollectionDeleted", store.path)
            propertiesChanged(SecretPaths.service, interface: "org.freedesktop.Secret.Service", invalidated: ["Collections"])
            let reply = try bus.reply(to: message)
            try reply.append(SecretPaths.none, as: "o")
            return reply
        default:
            return nil
        }
    }

    // MARK: Item

    private func item(_ message: BusMessage, _ member: String, _ store: any SecretCollection, _ reference: Data) throws -> BusMessage? {
        var path: String { SecretPaths.item(reference, in: store.path) }  // For signals only: GetSecret needs none.
        switch member {
        case "GetSecret":
            let session = try session(try message.readString("o"), caller: message.sender)
            let reply = try bus.reply(to: message)
            try appendSecret(try store.secret(reference), session: session, to: reply)
            return reply
        case "SetSecret":
            let secret = try readSecret(message)
            try store.setSecret(reference, secret.value, contentType: secret.contentType)
            emit("ItemChanged", path, collection: store.path)
            propertiesChanged(path, interface: "org.freedesktop.Secret.Item", invalidated: ["Modified"])
            return try bus.reply(to: message)
        case "Delete":
            try store.delete(reference)
            emit("ItemDeleted", path, collection: store.path)
            propertiesChanged(store.path, interface: "org.freedesktop.Secret.Collection", invalidated: ["Items"])
            let reply = try bus.reply(to: message)
            try reply.append(SecretPaths.none, as: "o")
            return reply
        default:
            return nil
        }
    }

    // MARK: Prompts

    private func makePrompt(owner: String, objects: [String]) -> String {
        let path = SecretPaths.prompt + "/p\(nextPrompt)"
        nextPrompt += 1
        prompts[path] = (owner, objects)
        return path
    }

    private func prompt(_ message: BusMessage, _ member: String, _ path: String) throws -> BusMessage? {
        guard let pending = prompts[path], pending.owner == message.sender else {
            throw SecretServiceError.noSuchObject("no such prompt of yours")
        }
        switch member {
        case "Prompt":
            prompts[path] = nil
            let reply = try bus.reply(to: message)
            // Reply first; the answer comes in Completed, from the prompt's own thread.
            let configuration = configuration, completed = completed
            let thread = Thread {
                var dismissed = true
                if let presence = configuration.presence {
                    do throws(KeychainError) {
                        try presence.confirm(
                            PresenceRequest(applicationIdentifier: "a program on the desktop (\(pending.owner))",
                                            operationPrompt: "unlock the keychain for the Secret Service"),
                            verify: { (passphrase) throws(KeychainError) in try configuration.unlock(passphrase) })
                        dismissed = false
                        configuration.log("unlocked through a Secret Service prompt for \(pending.owner)")
                    } catch {
                        configuration.log("a Secret Service prompt for \(pending.owner) ended without unlocking: \(error.message)")
                    }
                }
                completed.queue.withLock { $0.append((path, dismissed, dismissed ? [] : pending.objects)) }
            }
            thread.start()
            return reply
        case "Dismiss":
            prompts[path] = nil
            completed.queue.withLock { $0.append((path, true, [])) }
            return try bus.reply(to: message)
        default:
            return nil
        }
    }

    /// Emits `Completed` for the prompts that finished (called on the bus thread).
    func drainCompletedPrompts() {
        let finished = completed.queue.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
        for (path, dismissed, objects) in finished {
            do {
                let signal = try bus.signal(path: path, interface: "org.freedesktop.Secret.Prompt", member: "Completed")
                try signal.append(dismissed)
                try signal.open("v", "ao")
                try appendPaths(objects, to: signal)
                try signal.close()
                try bus.send(signal)
            } catch {
                configuration.log("the Secret Service could not emit Completed for \(path): \(error)")
            }
        }
    }

    /// A signal of the service (`CollectionCreated`, `CollectionDeleted`, `CollectionChanged`).
    private func serviceSignal(_ member: String, _ collection: String) {
        do {
            let signal = try bus.signal(path: SecretPaths.service, interface: "org.freedesktop.Secret.Service", member: member)
            try signal.append(collection, as: "o")
            try bus.send(signal)
        } catch {
            configuration.log("the Secret Service could not emit \(member): \(error)")
        }
    }

    private func emit(_ member: String, _ item: String, collection: String) {
        do {
            let signal = try bus.signal(path: collection, interface: "org.freedesktop.Secret.Collection", member: member)
            try signal.append(item, as: "o")
            try bus.send(signal)
        } catch {
            configuration.log("the Secret Service could not emit \(member): \(error)")
        }
    }

    // MARK: Properties

    private func properties(_ message: BusMessage, _ target: Target) throws -> BusMessage? {
        let collections: [String: any SecretCollection]
        switch target {
        case .collection(let path), .item(let path, _): collections = [path: try collection(at: path, for: message)]
        default: collections = try self.collections(for: message)
        }
        switch message.member {
        case "Get":
            let interface = try message.readString(), name = try message.readString()
            let values = try propertyValues(target, interface: interface, collections: collections)
            guard let value = values.first(where: { $0.name == name }) else {
                throw SecretServiceError(name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no property \(interface).\(name)")
            }
            let reply = try bus.reply(to: message)
            try reply.open("v", value.signature)
            try value.write(reply)
            try reply.close()
            return reply
        case "GetAll":
            let interface = try message.readString()
            let reply = try bus.reply(to: message)
            try reply.open("a", "{sv}")
            for value in try propertyValues(target, interface: interface, collections: collections) {
                try reply.open("e", "sv")
                try reply.append(value.name)
                try reply.open("v", value.signature)
                try value.write(reply)
                try reply.close()
                try reply.close()
            }
            try reply.close()
            return reply
        case "Set":
            let interface = try message.readString(), name = try message.readString()
            if case .collection(let path) = target, interface == "org.freedesktop.Secret.Collection", name == "Label",
                let collection = collections[path]
            {
                guard let (type, contents) = try message.peek(), type == "v", contents == "s" else {
                    throw SecretServiceError.invalidArguments("Label is a string")
                }
                _ = try message.enter("v", contents)
                let label = try message.readString()
                switch collection {
                case let store as SecretStore where store.collectionID == "login":
                    try registry.renameLogin(label: label)
                    cachedLoginLabel = label
                case let store as SecretStore: try registry.rename(store.collectionID, label: label)
                default: sessionItems.label = label  // The in-memory `session` collection.
                }
                serviceSignal("CollectionChanged", path)
                propertiesChanged(path, interface: interface, invalidated: ["Label"])
                return try bus.reply(to: message)
            }
            guard case .item(let collection, let reference) = target, interface == "org.freedesktop.Secret.Item",
                let store = collections[collection]
            else {
                throw SecretServiceError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(interface).\(name) cannot be set")
            }
            guard let (type, contents) = try message.peek(), type == "v" else { throw SecretServiceError.invalidArguments("Set needs a variant") }
            _ = try message.enter("v", contents)
            switch (name, contents) {
            case ("Label", "s"): try store.setLabel(reference, try message.readString())
            case ("Attributes", "a{ss}"): try store.setAttributes(reference, try readAttributes(message))
            default:
                throw SecretServiceError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(interface).\(name) cannot be set")
            }
            emit("ItemChanged", SecretPaths.item(reference, in: store.path), collection: store.path)
            propertiesChanged(SecretPaths.item(reference, in: store.path), interface: "org.freedesktop.Secret.Item", invalidated: [name, "Modified"])
            return try bus.reply(to: message)
        default:
            return nil
        }
    }

    /// `PropertiesChanged` for `path`, naming the changed properties as invalidated: clients read them again,
    /// each as what it may see (under isolation the values depend on who asks).
    private func propertiesChanged(_ path: String, interface: String, invalidated: [String]) {
        do {
            let signal = try bus.signal(path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
            try signal.append(interface)
            try signal.open("a", "{sv}")
            try signal.close()
            try signal.open("a", "s")
            for name in invalidated { try signal.append(name) }
            try signal.close()
            try bus.send(signal)
        } catch {
            configuration.log("the Secret Service could not emit PropertiesChanged for \(path): \(error)")
        }
    }

    /// A property: its name, signature and how to write its value.
    private struct Property {
        let name: String
        let signature: String
        let write: (BusMessage) throws -> Void
    }

    private func propertyValues(_ target: Target, interface: String, collections: [String: any SecretCollection]) throws -> [Property] {
        switch (target, interface) {
        case (.service, "org.freedesktop.Secret.Service"):
            let order = Self.order(collections)
            return [Property(name: "Collections", signature: "ao") { try self.appendPaths(order, to: $0) }]
        case (.collection(let path), "org.freedesktop.Secret.Collection"):
            guard let store = collections[path] else { return [] }
            let locked = store.isLocked, label = store.label
            return [
                // Listed only when asked for (a Get of Locked must not walk every item).
                Property(name: "Items", signature: "ao") {
                    let found = try store.search([:])
                    try self.appendPaths((found.unlocked + found.locked).map { SecretPaths.item($0, in: path) }, to: $0)
                },
                Property(name: "Label", signature: "s") { try $0.append(label) },
                Property(name: "Locked", signature: "b") { try $0.append(locked) },
                Property(name: "Created", signature: "t") { try $0.append(UInt64(0)) },
                Property(name: "Modified", signature: "t") { try $0.append(UInt64(0)) },
            ]
        case (.item(let collection, let reference), "org.freedesktop.Secret.Item"):
            guard let store = collections[collection] else { return [] }
            if try store.isItemLocked(reference) {
                // Sealed while locked: the item says so, and shows its other properties after an unlock.
                return [
                    Property(name: "Locked", signature: "b") { try $0.append(true) },
                    Property(name: "Attributes", signature: "a{ss}") { try self.appendAttributes([:], to: $0) },
                    Property(name: "Label", signature: "s") { try $0.append("") },
                    Property(name: "Created", signature: "t") { try $0.append(UInt64(0)) },
                    Property(name: "Modified", signature: "t") { try $0.append(UInt64(0)) },
                ]
            }
            // Read once, and only for the properties that need it (a Get of Locked, which clients make before
            // every secret, reads the index alone).
            final class Loaded {
                var item: SecretStore.Item?
            }
            let loaded = Loaded()
            func item() throws -> SecretStore.Item {
                if let item = loaded.item { return item }
                let item = try store.item(reference)
                loaded.item = item
                return item
            }
            return [
                Property(name: "Locked", signature: "b") { try $0.append(false) },
                Property(name: "Attributes", signature: "a{ss}") { try self.appendAttributes(try item().attributes, to: $0) },
                Property(name: "Label", signature: "s") { try $0.append(try item().label) },
                Property(name: "Created", signature: "t") { try $0.append(UInt64(max(0, try item().created.timeIntervalSince1970))) },
                Property(name: "Modified", signature: "t") { try $0.append(UInt64(max(0, try item().modified.timeIntervalSince1970))) },
            ]
        default:
            return []
        }
    }

    // MARK: Marshalling

    private func session(_ path: String, caller: String) throws -> (path: String, session: SecretSessions.Session) {
        guard let session = sessions.session(path, caller: caller) else {
            throw SecretServiceError.noSession("the session \(path) is not one of yours")
        }
        return (path, session)
    }

    private func readAttributes(_ message: BusMessage) throws -> [String: String] { try message.readStringDictionary() }

    private func readPaths(_ message: BusMessage) throws -> [String] { try message.readObjectPaths() }

    /// `CreateItem`'s and `CreateCollection`'s property map: the label and the attributes.
    private func readProperties(_ message: BusMessage) throws -> (label: String?, attributes: [String: String]?) {
        var label: String?
        var attributes: [String: String]?
        _ = try message.enter("a", "{sv}")
        while try message.enter("e", "sv") {
            let name = try message.readString()
            guard let (_, contents) = try message.peek() else { throw SecretServiceError.invalidArguments("a property without a value") }
            _ = try message.enter("v", contents)
            switch (name, contents) {
            case ("org.freedesktop.Secret.Item.Label", "s"), ("org.freedesktop.Secret.Collection.Label", "s"): label = try message.readString()
            case ("org.freedesktop.Secret.Item.Attributes", "a{ss}"): attributes = try readAttributes(message)
            default: try message.skip()
            }
            try message.exit()
            try message.exit()
        }
        try message.exit()
        return (label, attributes)
    }

    /// A client's secret `(oayays)`, decrypted with its session.
    private func readSecret(_ message: BusMessage) throws -> (value: Data, contentType: String) {
        _ = try message.enter("r", "oayays")
        let (_, session) = try session(try message.readString("o"), caller: message.sender)
        let parameters = Data(try message.readBytes())
        let value = Data(try message.readBytes())
        let contentType = try message.readString()
        try message.exit()
        guard let transport = session.transport else { return (value, contentType) }
        return (try transport.decrypt(iv: parameters, ciphertext: value), contentType)
    }

    private func appendSecret(_ secret: (value: Data, contentType: String), session: (path: String, session: SecretSessions.Session),
                              to message: BusMessage) throws {
        try message.open("r", "oayays")
        try message.append(session.path, as: "o")
        if let transport = session.session.transport {
            let (iv, ciphertext) = try transport.encrypt(secret.value)
            try message.append(bytes: Array(iv))
            try message.append(bytes: Array(ciphertext))
        } else {
            try message.append(bytes: [])
            try message.append(bytes: Array(secret.value))
        }
        try message.append(secret.contentType)
        try message.close()
    }

    func appendPaths(_ paths: [String], to message: BusMessage) throws {
        try message.open("a", "o")
        for path in paths { try message.append(path, as: "o") }
        try message.close()
    }

    private func appendAttributes(_ attributes: [String: String], to message: BusMessage) throws {
        try message.open("a", "{ss}")
        for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
            try message.open("e", "ss")
            try message.append(name)
            try message.append(value)
            try message.close()
        }
        try message.close()
    }
}
