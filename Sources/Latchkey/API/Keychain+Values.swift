public import FoundationEssentials

extension Keychain {
    /// Stores `value` (its UTF-8 bytes) under `key`: an atomic upsert in one transaction that never
    /// removes the old value before the new one is stored.
    public func set(_ value: String, forKey key: String) throws(KeychainFailure) {
        try set(Data(value.utf8), forKey: key)
    }

    /// Stores `value` under `key` (atomic upsert).
    public func set(_ value: Data, forKey key: String) throws(KeychainFailure) {
        try failing { () throws(KeychainError) in
            _ = try service().addOrUpdate(try newItem(key, value))
        }
    }

    /// The string stored under `key`, or nil when there is none. Stored bytes that are not UTF-8 are a
    /// `.decode` failure.
    public func string(forKey key: String) throws(KeychainFailure) -> String? {
        guard let data = try data(forKey: key) else { return nil }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw .decode(KeychainError(.decode, "the value stored for key '\(key)' is not UTF-8 text"))
        }
        return text
    }

    /// The data stored under `key`, or nil when there is none.
    public func data(forKey key: String) throws(KeychainFailure) -> Data? {
        try failing { () throws(KeychainError) -> Data? in
            do throws(KeychainError) {
                return try service().copyMatching(try itemQuery(key, returning: .data)).first?.data
            } catch KeychainError.itemNotFound {
                return nil
            }
        }
    }

    /// Whether an item is stored under `key`.
    public func contains(_ key: String) throws(KeychainFailure) -> Bool {
        try failing { () throws(KeychainError) -> Bool in
            do throws(KeychainError) {
                _ = try service().copyMatching(try itemQuery(key))
                return true
            } catch KeychainError.itemNotFound {
                return false
            }
        }
    }

    /// Removes the item under `key`. Returns false when there was none (not an error).
    @discardableResult
    public func remove(_ key: String) throws(KeychainFailure) -> Bool {
        try failing { () throws(KeychainError) -> Bool in
            do throws(KeychainError) {
                _ = try service().delete(try itemQuery(key))
                return true
            } catch KeychainError.itemNotFound {
                return false
            }
        }
    }

    // MARK: Typed requests

    /// The service the requests go to: `connection` for this value's access group.
    func service() -> any KeychainService { connection.service(accessGroup: accessGroup) }

    /// The class and attributes naming every item of this scope (no account).
    func scopeAttributes() throws(KeychainError) -> (ItemClass, [AttributeKey: AttributeValue]) {
        var matching: [AttributeKey: AttributeValue]
        let itemClass: ItemClass
        switch scope {
        case .service(let service):
            guard !service.isEmpty else { throw KeychainError.param("the service must not be empty") }
            itemClass = .genericPassword
            matching = [.service: .string(service)]
        case .server(let server):
            guard !server.host.isEmpty else { throw KeychainError.param("the server must not be empty") }
            guard ItemLimits.ports.contains(server.port) else {
                throw KeychainError.param("the port must be between 0 and 65535, not \(server.port)")
            }
            itemClass = .internetPassword
            matching = [
                .server: .string(server.host), .protocol: .string(server.protocol.rawValue),
                .port: .number(Int64(server.port)),
                .path: .string(server.path), .authenticationType: .string(server.authenticationType.rawValue),
                .securityDomain: .string(server.securityDomain),
            ]
        }
        if let accessGroup { matching[.accessGroup] = .string(accessGroup) }
        matching[.synchronizable] = .bool(isSynchronizable)
        return (itemClass, matching)
    }

    /// The query naming every item of this scope.
    func scopeQuery(limit: MatchLimit = .all, returning: ReturnOptions = []) throws(KeychainError) -> ItemQuery {
        let (itemClass, matching) = try scopeAttributes()
        return ItemQuery(itemClass, matching: matching, limit: limit, returning: returning)
    }

    /// The query naming the item under `key`.
    func itemQuery(_ key: String, returning: ReturnOptions = []) throws(KeychainError) -> ItemQuery {
        guard !key.isEmpty else { throw KeychainError.param("the key must not be empty") }
        var (itemClass, matching) = try scopeAttributes()
        matching[.account] = .string(key)
        return ItemQuery(itemClass, matching: matching, returning: returning)
    }

    /// The item a write stores under `key`: its identity, the secret, accessibility, label, comment.
    func newItem(_ key: String, _ value: Data) throws(KeychainError) -> NewItem {
        guard !key.isEmpty else { throw KeychainError.param("the key must not be empty") }
        var (itemClass, attributes) = try scopeAttributes()
        attributes[.account] = .string(key)
        attributes[.accessible] = .string(accessibility.rawValue)
        if let label { attributes[.label] = .string(label) }
        if let comment { attributes[.comment] = .string(comment) }
        return NewItem(itemClass, attributes: attributes, data: value)
    }
}
