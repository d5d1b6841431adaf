import Foundation
import LatchkeyPKI

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
    static let defaultAlias = "/org/freedesktop/secrets/aliases/default"
    static let session = "/org/freedesktop/secrets/session"
    static let prompt = "/org/freedesktop/secrets/prompt"
    static let none = "/"

    /// A collection's path.
    static func collection(id: String) -> String { collectionPrefix + id }

    /// Whether `id` can name a collection in a path (letters, digits, `_`).
    static func isValidID(_ id: Substring) -> Bool {
        !id.isEmpty && id.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") }
    }

    /// An item's path: its reference in hex, under its collection.
    static func item(_ reference: Data, in collection: String) -> String {
        collection + "/" + reference.map { String(format: "%02x", $0) }.joined()
    }

    /// The collection (canonical path) and reference an item path names, or nil. Keychain items have
    /// 32-byte references (their persistent references), session items 16-byte ones.
    static func parseItem(_ path: String) -> (collection: String, reference: Data)? {
        let collection: String
        let hex: Substring
        if path.hasPrefix(defaultAlias + "/") {
            collection = Self.collection
            hex = path.dropFirst(defaultAlias.count + 1)
        } else if path.hasPrefix(collectionPrefix) {
            let rest = path.dropFirst(collectionPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
            guard rest.count == 2, isValidID(rest[0]) else { return nil }
            collection = Self.collection(id: String(rest[0]))
            hex = rest[1]
        } else {
            return nil
        }
        guard hex.count == (collection == sessionCollection ? 32 : 64) else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return (collection, Data(bytes))
    }

    /// The canonical path of the collection `path` names (itself, or `login` for the `default` alias), when
    /// it has a collection's form (whether that collection exists is the server's to say).
    static func collection(of path: String) -> String? {
        if path == defaultAlias { return collection }
        guard path.hasPrefix(collectionPrefix) else { return nil }
        let id = path.dropFirst(collectionPrefix.count)
        return isValidID(id) ? path : nil
    }

    /// The collection a fixed alias names, or nil.
    static func alias(_ name: String) -> String? {
        switch name {
        case "default", "login": collection
        case "session": sessionCollection
        default: nil
        }
    }
}
