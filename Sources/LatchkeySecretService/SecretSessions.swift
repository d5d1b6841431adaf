import FoundationEssentials
import LatchkeyCrypto
import LatchkeyPKI
import LatchkeyPOSIX

/// The sessions clients open (`OpenSession`): `plain`, or the DH transport. A session belongs to the bus
/// connection that opened it and dies with it (`Close`, or the peer leaving the bus).
struct SecretSessions {
    struct Session {
        let owner: String
        /// nil for `plain`.
        let transport: SecretTransport?
    }

    private var sessions: [String: Session] = [:]
    private var next = 1

    /// Opens a session for `owner`; its object path.
    mutating func open(owner: String, transport: SecretTransport?) -> String {
        let path = SecretPaths.session + "/s\(next)"
        next += 1
        sessions[path] = Session(owner: owner, transport: transport)
        return path
    }

    /// The session at `path` if `caller` opened it.
    func session(_ path: String, caller: String) -> Session? {
        guard let session = sessions[path], session.owner == caller else { return nil }
        return session
    }

    /// Closes the session at `path` (its owner only).
    mutating func close(_ path: String, caller: String) -> Bool {
        guard sessions[path]?.owner == caller else { return false }
        sessions[path] = nil
        return true
    }

    /// Closes every session of a peer that left the bus; how many.
    mutating func closeAll(of owner: String) -> Int {
        let before = sessions.count
        sessions = sessions.filter { $0.value.owner != owner }
        return before - sessions.count
    }

    var count: Int { sessions.count }
}

/// The object paths of the provider.
enum SecretPaths {
    static let service = "/org/freedesktop/secrets"
    static let collectionPrefix = "/org/freedesktop/secrets/collection/"
    static let collection = "/org/freedesktop/secrets/collection/login"
    static let sessionCollection = "/org/freedesktop/secrets/collection/session"
    static let aliasPrefix = "/org/freedesktop/secrets/aliases/"
    static let session = "/org/freedesktop/secrets/session"
    static let prompt = "/org/freedesktop/secrets/prompt"
    static let none = "/"

    /// A collection's path.
    static func collection(id: String) -> String { collectionPrefix + id }

    /// Whether `id` can name a collection in a path (letters, digits, `_`).
    static func isValidID(_ id: Substring) -> Bool {
        // ASCII by bytes: every call on an item checks its path.
        !id.isEmpty && id.utf8.allSatisfy { isASCIIAlphanumeric($0) || $0 == UInt8(ascii: "_") }
    }

    /// An item's path: its reference in hex, under its collection.
    static func item(_ reference: Data, in collection: String) -> String {
        collection + "/" + Hex.encode(reference)
    }

    /// The collection (canonical path) and reference an item path names, or nil; an item under an alias
    /// (`…/aliases/<name>/<reference>`) is in the collection `alias` resolves the name to. Keychain items
    /// have 32-byte references (their persistent references), session items 16-byte ones.
    static func parseItem(_ path: String, alias: (String) -> String? = alias) -> (collection: String, reference: Data)?
    {
        // By UTF-8 bytes: GetSecrets parses every path it is given, and splitting a String by Characters
        // (grapheme breaking) cost 27k instructions a path — more than a tenth of the whole call.
        let underAlias = path.hasPrefix(aliasPrefix)
        guard underAlias || path.hasPrefix(collectionPrefix) else { return nil }
        let rest = path.utf8.dropFirst(underAlias ? aliasPrefix.utf8.count : collectionPrefix.utf8.count)
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let id = Substring(rest[..<slash])
        let hex = Substring(rest[rest.index(after: slash)...])
        guard isValidID(id) else { return nil }
        let collection: String
        if underAlias {
            guard let resolved = alias(String(id)) else { return nil }
            collection = resolved
        } else {
            collection = Self.collection(id: String(id))
        }
        guard hex.utf8.count == (collection == sessionCollection ? 32 : 64), let bytes = Hex.decode(hex) else {
            return nil
        }
        return (collection, Data(bytes))
    }

    /// The canonical path of the collection `path` names — itself, or for `…/aliases/<name>` the collection
    /// `alias` resolves the name to — when it has a collection's form (whether that collection exists is
    /// the server's to say).
    static func collection(of path: String, alias: (String) -> String? = alias) -> String? {
        if path.hasPrefix(aliasPrefix) {
            let name = Substring(path.utf8.dropFirst(aliasPrefix.utf8.count))
            return isValidID(name) ? alias(String(name)) : nil
        }
        guard path.hasPrefix(collectionPrefix) else { return nil }
        let id = Substring(path.utf8.dropFirst(collectionPrefix.utf8.count))
        return isValidID(id) ? path : nil
    }

    /// The collection an alias names before any is moved: `default` and `login` the keychain's own, `session`
    /// the session collection (the server resolves `default` and other aliases through its registry).
    static func alias(_ name: String) -> String? {
        switch name {
        case "default", "login": collection
        case "session": sessionCollection
        default: nil
        }
    }
}
