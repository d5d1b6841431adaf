import FoundationEssentials
import LatchkeyDBus
import LatchkeyEngine
import LatchkeyPKI
import LatchkeyPOSIX

/// The Secret Service's calls as sd-bus messages: each interface's methods decoded from their arguments,
/// answered by the interface's typed methods (SecretServiceServer+Service.swift, +Collection, +Item,
/// +Session, +Prompt, +Properties, +Portal), and their replies and signals encoded. Each `…Call` returns nil
/// for a method the interface does not have (sd-bus then says so).
extension SecretServiceServer {
    // MARK: Methods

    /// `Introspect`, on any object.
    func introspection(_ message: BusMessage) throws -> BusMessage {
        let reply = try bus.reply(to: message)
        try reply.append(SecretIntrospection.xml(for: message.path))
        return reply
    }

    /// `org.freedesktop.Secret.Service`, for `caller`, whose `login` collection is `login`.
    func serviceCall(_ message: BusMessage, caller: CallerIdentity, login: any SecretCollection) throws -> BusMessage? {
        switch message.member {
        case "OpenSession":  // (s algorithm, v input) → (v output, o result)
            let algorithm = try message.readString()
            guard let (type, contents) = try message.peek(), type == "v" else {
                throw SecretServiceError.invalidArguments("OpenSession needs (s, v)")
            }
            _ = try message.enter("v", contents)
            let input = contents == "ay" ? try message.readBytes() : nil
            let (output, path) = try openSession(algorithm: algorithm, input: input, for: message.sender)
            let reply = try bus.reply(to: message)
            switch output {
            case .plain:
                try reply.open("v", "s")
                try reply.append("")
            case .publicValue(let value):
                try reply.open("v", "ay")
                try reply.append(bytes: Array(value))
            }
            try reply.close()
            try reply.append(path, as: "o")
            return reply
        case "SearchItems":  // (a{ss} attributes) → (ao unlocked, ao locked)
            let found = try searchItems(try readAttributes(message), caller: caller)
            let reply = try bus.reply(to: message)
            try appendPaths(found.unlocked, to: reply)
            try appendPaths(found.locked, to: reply)
            return reply
        case "GetSecrets":  // (ao items, o session) → (a{o(oayays)} secrets)
            let items = try readPaths(message)
            let session = try session(try message.readString("o"), caller: message.sender)
            let reply = try bus.reply(to: message)
            try reply.open("a", "{o(oayays)}")
            for (path, secret) in secrets(of: items, caller: caller) {
                try reply.open("e", "o(oayays)")
                try reply.append(path, as: "o")
                try appendSecret(secret, session: session, to: reply)
                try reply.close()
            }
            try reply.close()
            return reply
        case "Unlock":  // (ao objects) → (ao unlocked, o prompt)
            let (unlocked, prompt) = unlock(try readPaths(message), login: login, for: message.sender)
            let reply = try bus.reply(to: message)
            try appendPaths(unlocked, to: reply)
            try reply.append(prompt, as: "o")
            return reply
        case "Lock":  // (ao objects) → (ao locked, o prompt)
            let locked = lock(try readPaths(message), for: message.sender)
            let reply = try bus.reply(to: message)
            try appendPaths(locked, to: reply)
            try reply.append(SecretPaths.none, as: "o")
            return reply
        case "ReadAlias":  // (s name) → (o collection)
            let collection = readAlias(try message.readString())
            let reply = try bus.reply(to: message)
            try reply.append(collection, as: "o")
            return reply
        case "SetAlias":  // (s name, o collection) → ()
            let name = try message.readString()
            try setAlias(name, toCollectionAt: try message.readString("o"))
            return try bus.reply(to: message)
        case "CreateCollection":  // (a{sv} properties, s alias) → (o collection, o prompt)
            let properties = try readProperties(message)
            let alias = try message.readString()
            let path = try createCollection(label: properties.label, alias: alias, for: message.sender)
            let reply = try bus.reply(to: message)
            try reply.append(path, as: "o")
            try reply.append(SecretPaths.none, as: "o")
            return reply
        default:
            return nil
        }
    }

    /// `org.freedesktop.Secret.Collection`, on `store`.
    func collectionCall(_ message: BusMessage, _ store: any SecretCollection) throws -> BusMessage? {
        switch message.member {
        case "SearchItems":  // (a{ss} attributes) → (ao results)
            let found = try searchItems(try readAttributes(message), in: store)
            let reply = try bus.reply(to: message)
            try appendPaths(found, to: reply)
            return reply
        case "CreateItem":  // (a{sv} properties, (oayays) secret, b replace) → (o item, o prompt)
            let properties = try readProperties(message)
            let secret = try readSecret(message)
            let replace = try message.readBool()
            let path = try createItem(
                in: store, label: properties.label, attributes: properties.attributes, secret: secret,
                replace: replace)
            let reply = try bus.reply(to: message)
            try reply.append(path, as: "o")
            try reply.append(SecretPaths.none, as: "o")
            return reply
        case "Delete":  // () → (o prompt)
            try deleteCollection(store, for: message.sender)
            let reply = try bus.reply(to: message)
            try reply.append(SecretPaths.none, as: "o")
            return reply
        default:
            return nil
        }
    }

    /// `org.freedesktop.Secret.Item`, on item `reference` of `store`.
    func itemCall(_ message: BusMessage, _ store: any SecretCollection, _ reference: Data) throws -> BusMessage? {
        switch message.member {
        case "GetSecret":  // (o session) → ((oayays) secret)
            let session = try session(try message.readString("o"), caller: message.sender)
            let reply = try bus.reply(to: message)
            try appendSecret(try secret(of: reference, in: store), session: session, to: reply)
            return reply
        case "SetSecret":  // ((oayays) secret) → ()
            try setSecret(of: reference, in: store, to: try readSecret(message))
            return try bus.reply(to: message)
        case "Delete":  // () → (o prompt)
            try deleteItem(reference, in: store)
            let reply = try bus.reply(to: message)
            try reply.append(SecretPaths.none, as: "o")
            return reply
        default:
            return nil
        }
    }

    /// `org.freedesktop.Secret.Session`, on the session at `path`.
    func sessionCall(_ message: BusMessage, _ path: String) throws -> BusMessage? {
        switch message.member {
        case "Close":  // () → ()
            try closeSession(path, for: message.sender)
            return try bus.reply(to: message)
        default:
            return nil
        }
    }

    /// `org.freedesktop.Secret.Prompt`, on the prompt at `path` (only its owner's calls reach a method).
    func promptCall(_ message: BusMessage, _ path: String) throws -> BusMessage? {
        let pending = try pendingPrompt(path, for: message.sender)
        switch message.member {
        case "Prompt":  // (s window) → ()
            runPrompt(path, pending)
            return try bus.reply(to: message)
        case "Dismiss":  // () → ()
            dismissPrompt(path)
            return try bus.reply(to: message)
        default:
            return nil
        }
    }

    /// `org.freedesktop.DBus.Properties`, on the service, a collection or an item.
    func propertiesCall(_ message: BusMessage, _ target: Target) throws -> BusMessage? {
        let collections = try propertyCollections(target, for: message.sender)
        switch message.member {
        case "Get":  // (s interface, s name) → (v value)
            let interface = try message.readString()
            let name = try message.readString()
            let value = try property(target, interface: interface, name: name, collections: collections)
            let reply = try bus.reply(to: message)
            try append(value, to: reply)
            return reply
        case "GetAll":  // (s interface) → (a{sv} properties)
            let interface = try message.readString()
            let reply = try bus.reply(to: message)
            try reply.open("a", "{sv}")
            for property in try properties(target, interface: interface, collections: collections) {
                try reply.open("e", "sv")
                try reply.append(property.name)
                try append(try property.value(), to: reply)
                try reply.close()
            }
            try reply.close()
            return reply
        case "Set":  // (s interface, s name, v value) → ()
            let interface = try message.readString()
            let name = try message.readString()
            try setProperty(
                target, interface: interface, name: name, to: try readPropertyInput(message), collections: collections)
            return try bus.reply(to: message)
        default:
            return nil
        }
    }

    /// The portal backend's object: `org.freedesktop.impl.portal.Secret`, its `version` property, introspection.
    func portalCall(_ message: BusMessage) throws -> BusMessage? {
        guard message.path == SecretPortal.path else { return nil }
        switch (message.interface, message.member) {
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            let reply = try bus.reply(to: message)
            try reply.append(SecretPortal.introspection)
            return reply
        case ("org.freedesktop.DBus.Properties", "Get"):
            guard try message.readString() == SecretPortal.interface, try message.readString() == "version" else {
                throw SecretServiceError.invalidArguments("the secret portal has one property, version")
            }
            let reply = try bus.reply(to: message)
            try reply.open("v", "u")
            try reply.append(Self.portalVersion)
            try reply.close()
            return reply
        case ("org.freedesktop.DBus.Properties", "GetAll"):
            let reply = try bus.reply(to: message)
            try reply.open("a", "{sv}")
            if try message.readString() == SecretPortal.interface {
                try reply.open("e", "sv")
                try reply.append("version")
                try reply.open("v", "u")
                try reply.append(Self.portalVersion)
                try reply.close()
                try reply.close()
            }
            try reply.close()
            return reply
        // (o handle, s app_id, h fd, a{sv} options) → (u response, a{sv} results)
        case (SecretPortal.interface, "RetrieveSecret"):
            try checkPortalCaller(message.sender)
            _ = try message.readString("o")
            let appID = try message.readString()
            let fd = try message.readFileDescriptor()
            defer { fd.close() }
            try retrieveSecret(for: appID, to: fd)
            let reply = try bus.reply(to: message)
            try reply.append(UInt32(0))
            try reply.open("a", "{sv}")
            try reply.close()
            return reply
        default:
            return nil
        }
    }

    // MARK: Arguments

    private func readAttributes(_ message: BusMessage) throws -> [String: String] { try message.readStringDictionary() }

    private func readPaths(_ message: BusMessage) throws -> [String] { try message.readObjectPaths() }

    /// `CreateItem`'s and `CreateCollection`'s property map: the label and the attributes.
    private func readProperties(_ message: BusMessage) throws -> (label: String?, attributes: [String: String]?) {
        var label: String?
        var attributes: [String: String]?
        _ = try message.enter("a", "{sv}")
        while try message.enter("e", "sv") {
            let name = try message.readString()
            guard let (_, contents) = try message.peek() else {
                throw SecretServiceError.invalidArguments("a property without a value")
            }
            _ = try message.enter("v", contents)
            switch (name, contents) {
            case ("org.freedesktop.Secret.Item.Label", "s"), ("org.freedesktop.Secret.Collection.Label", "s"):
                label = try message.readString()
            case ("org.freedesktop.Secret.Item.Attributes", "a{ss}"): attributes = try readAttributes(message)
            default: try message.skip()
            }
            try message.exit()
            try message.exit()
        }
        try message.exit()
        return (label, attributes)
    }

    /// `Set`'s value: nil when the argument is not a variant.
    private func readPropertyInput(_ message: BusMessage) throws -> PropertyInput? {
        guard let (type, contents) = try message.peek(), type == "v" else { return nil }
        _ = try message.enter("v", contents)
        switch contents {
        case "s": return .string(try message.readString())
        case "a{ss}": return .attributes(try readAttributes(message))
        default: return .other(contents)
        }
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

    // MARK: Replies

    /// A secret `(oayays)` for the client, encrypted with its session.
    private func appendSecret(
        _ secret: (value: Data, contentType: String), session: (path: String, session: SecretSessions.Session),
        to message: BusMessage
    ) throws {
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

    /// A property's value, as a variant.
    private func append(_ value: PropertyValue, to message: BusMessage) throws {
        switch value {
        case .paths(let paths):
            try message.open("v", "ao")
            try appendPaths(paths, to: message)
        case .string(let string):
            try message.open("v", "s")
            try message.append(string)
        case .boolean(let boolean):
            try message.open("v", "b")
            try message.append(boolean)
        case .time(let seconds):
            try message.open("v", "t")
            try message.append(seconds)
        case .attributes(let attributes):
            try message.open("v", "a{ss}")
            try appendAttributes(attributes, to: message)
        }
        try message.close()
    }

    // MARK: Signals

    /// A signal of the service (`CollectionCreated`, `CollectionDeleted`, `CollectionChanged`).
    func serviceSignal(_ member: String, _ collection: String) {
        do {
            let signal = try bus.signal(
                path: SecretPaths.service, interface: "org.freedesktop.Secret.Service", member: member)
            try signal.append(collection, as: "o")
            try bus.send(signal)
        } catch {
            configuration.log("the Secret Service could not emit \(member): \(error)")
        }
    }

    /// A signal of a collection about one of its items (`ItemCreated`, `ItemDeleted`, `ItemChanged`).
    func emit(_ member: String, _ item: String, collection: String) {
        do {
            let signal = try bus.signal(
                path: collection, interface: "org.freedesktop.Secret.Collection", member: member)
            try signal.append(item, as: "o")
            try bus.send(signal)
        } catch {
            configuration.log("the Secret Service could not emit \(member): \(error)")
        }
    }

    /// `PropertiesChanged` for `path`, naming the changed properties as invalidated: clients read them again,
    /// each as what it may see (under isolation the values depend on who asks).
    func propertiesChanged(_ path: String, interface: String, invalidated: [String]) {
        do {
            let signal = try bus.signal(
                path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
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

    /// A prompt's `Completed`: whether it was dismissed, and the objects it unlocked.
    func promptCompleted(_ path: String, dismissed: Bool, objects: [String]) {
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
