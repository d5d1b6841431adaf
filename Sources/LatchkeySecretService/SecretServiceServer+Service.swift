import FoundationEssentials
import LatchkeyEngine
import LatchkeyPKI

/// `org.freedesktop.Secret.Service` on `/org/freedesktop/secrets`: sessions, searching every collection,
/// secrets in bulk, locking and unlocking, aliases and making collections. The arguments are decoded and the
/// replies encoded by `serviceCall` (SecretServiceServer+Marshalling.swift).
extension SecretServiceServer {
    /// What `OpenSession` gives the client: nothing for `plain`, the service's public value for the DH transport.
    enum SessionOutput {
        case plain
        case publicValue(Data)
    }

    /// `OpenSession`: a session of `sender` with `algorithm`; `input` is the client's public value when the
    /// variant holds bytes (the DH transport needs it).
    func openSession(algorithm: String, input: [UInt8]?, for sender: String) throws -> (
        output: SessionOutput, path: String
    ) {
        switch algorithm {
        case "plain":
            return (.plain, sessions.open(owner: sender, transport: nil))
        case SecretTransport.algorithm:
            guard let input else {
                throw SecretServiceError.invalidArguments("\(algorithm) takes the client's public value as ay")
            }
            let transport = try SecretTransport(peerPublicKey: Data(input))
            return (.publicValue(transport.publicKey), sessions.open(owner: sender, transport: transport))
        default:
            throw SecretServiceError.notSupported(
                "session algorithm \(algorithm) is not supported (plain, \(SecretTransport.algorithm))")
        }
    }

    /// `SearchItems` of the service: the items of every collection whose attributes include `attributes`,
    /// in the collections' order.
    func searchItems(_ attributes: [String: String], caller: CallerIdentity) throws -> (
        unlocked: [String], locked: [String]
    ) {
        var unlocked: [String] = []
        var locked: [String] = []
        let all = collections(caller: caller)
        for path in Self.order(all) {
            guard let collection = all[path] else { continue }
            let found = try collection.search(attributes)
            unlocked += found.unlocked.map { SecretPaths.item($0, in: path) }
            locked += found.locked.map { SecretPaths.item($0, in: path) }
        }
        return (unlocked, locked)
    }

    /// `GetSecrets`: the secrets of `items` that `caller` may read, each with its path.
    func secrets(of items: [String], caller: CallerIdentity) -> [(
        path: String, secret: (value: Data, contentType: String)
    )] {
        var secrets: [(path: String, secret: (value: Data, contentType: String))] = []
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
            do {
                secrets.append((path, try holder.secret(reference)))
            } catch {
                continue  // GetSecrets leaves out what it cannot give (locked or gone), as the specification says.
            }
        }
        return secrets
    }

    /// `Unlock`: the objects unlocked at once, or none and a prompt (the `login` collection is locked). Under
    /// isolation, other programs' items a search offered the sender are unlocked only by a prompt that asks the
    /// user (SecretServiceServer+AccessQuestion.swift); the other objects are unlocked at once.
    func unlock(_ objects: [String], login: any SecretCollection, for sender: String) -> (
        unlocked: [String], prompt: String
    ) {
        let questions = accessQuestions(in: objects, for: sender)
        if login.isLocked { return ([], makePrompt(owner: sender, objects: objects, questions: questions)) }
        guard !questions.isEmpty else { return (objects, SecretPaths.none) }
        let asked = Set(questions.map(\.path))
        return (
            objects.filter { !asked.contains($0) },
            makePrompt(owner: sender, objects: objects.filter { asked.contains($0) }, questions: questions)
        )
    }

    /// `Lock`: locks the keychain; the objects locked (all of those asked for).
    func lock(_ objects: [String], for sender: String) -> [String] {
        configuration.lock()
        configuration.log("locked through the Secret Service by \(sender)")
        return objects
    }

    /// `ReadAlias`: the collection alias `name` names, or `/`.
    func readAlias(_ name: String) -> String { resolveAlias(name) ?? SecretPaths.none }

    /// `SetAlias`: points alias `name` at the collection at `path` (`/`: at none).
    func setAlias(_ name: String, toCollectionAt path: String) throws {
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
                    name == "default"
                        ? "the default collection is kept in the keychain, not in memory"
                        : "only default may name the login collection; \(name) may name a collection made with CreateCollection"
                )
            } else {
                throw SecretServiceError.noSuchObject("no collection \(path) to alias")
            }
        }
    }

    /// `CreateCollection`: the collection made with `label`, given `alias` (empty: none) — or the one the
    /// alias names already (the specification's rule). Its path; no prompt is ever needed.
    func createCollection(label: String?, alias: String, for sender: String) throws -> String {
        if !alias.isEmpty, let existing = resolveAlias(alias) { return existing }
        let isolated = configuration.policy == .isolated
        let id = try registry.create(label: label ?? "", alias: alias.isEmpty || isolated ? nil : alias)
        if isolated && !alias.isEmpty { try setAlias(alias, to: id) }
        let path = SecretPaths.collection(id: id)
        serviceSignal("CollectionCreated", path)
        propertiesChanged(
            SecretPaths.service, interface: "org.freedesktop.Secret.Service", invalidated: ["Collections"])
        configuration.log("the Secret Service made the collection \(id) for \(sender)")
        return path
    }
}
