public import Foundation

extension Keychain {
    /// Stores `value` (its UTF-8 bytes) under `key`: an atomic upsert in one transaction that never
    /// removes the old value before the new one is stored.
    public func set(_ value: String, forKey key: String) throws(KeychainFailure) {
        try set(Data(value.utf8), forKey: key)
    }

    /// Stores `value` under `key` (atomic upsert).
    public func set(_ value: Data, forKey key: String) throws(KeychainFailure) {
        try failing { () throws(KeychainError) in
            try backend().upsert(try itemQuery(key), attributes: writeAttributes(value))
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
            var query = try itemQuery(key)
            query[SecKey.returnData] = true
            do throws(KeychainError) {
                return try backend().copyMatching(query) as? Data
            } catch {
                guard error.status == .itemNotFound else { throw error }
                return nil
            }
        }
    }

    /// Whether an item is stored under `key`.
    public func contains(_ key: String) throws(KeychainFailure) -> Bool {
        try failing { () throws(KeychainError) -> Bool in
            do throws(KeychainError) {
                _ = try backend().copyMatching(try itemQuery(key))
                return true
            } catch {
                guard error.status == .itemNotFound else { throw error }
                return false
            }
        }
    }

    /// Removes the item under `key`. Returns false when there was none (not an error).
    @discardableResult
    public func remove(_ key: String) throws(KeychainFailure) -> Bool {
        try failing { () throws(KeychainError) -> Bool in
            do throws(KeychainError) {
                try backend().delete(try itemQuery(key))
                return true
            } catch {
                guard error.status == .itemNotFound else { throw error }
                return false
            }
        }
    }

    // MARK: Dictionaries

    func backend() throws(KeychainError) -> any KeychainBackend { try connection.backend(accessGroup: accessGroup) }

    /// The dictionary naming every item of this scope (no account).
    func scopeQuery() throws(KeychainError) -> [String: Any] {
        var query: [String: Any]
        switch scope {
        case .service(let service):
            guard !service.isEmpty else { throw KeychainError.param("the service must not be empty") }
            query = [SecKey.class: ItemClass.genericPassword.rawValue, AttributeKey.service.rawValue: service]
        case .server(let server):
            guard !server.host.isEmpty else { throw KeychainError.param("the server must not be empty") }
            guard (0...65_535).contains(server.port) else {
                throw KeychainError.param("the port must be between 0 and 65535, not \(server.port)")
            }
            query = [
                SecKey.class: ItemClass.internetPassword.rawValue, AttributeKey.server.rawValue: server.host,
                AttributeKey.protocol.rawValue: server.protocol.rawValue, AttributeKey.port.rawValue: server.port,
                AttributeKey.path.rawValue: server.path,
                AttributeKey.authenticationType.rawValue: server.authenticationType.rawValue,
                AttributeKey.securityDomain.rawValue: server.securityDomain,
            ]
        }
        if let accessGroup { query[AttributeKey.accessGroup.rawValue] = accessGroup }
        query[AttributeKey.synchronizable.rawValue] = isSynchronizable
        return query
    }

    /// The dictionary naming the item under `key`.
    func itemQuery(_ key: String) throws(KeychainError) -> [String: Any] {
        guard !key.isEmpty else { throw KeychainError.param("the key must not be empty") }
        var query = try scopeQuery()
        query[AttributeKey.account.rawValue] = key
        return query
    }

    /// What a write stores besides the item's identity: the secret, accessibility, label, comment.
    func writeAttributes(_ value: Data) -> [String: Any] {
        var attributes: [String: Any] = [
            SecKey.valueData: value, AttributeKey.accessible.rawValue: accessibility.rawValue,
        ]
        if let label { attributes[AttributeKey.label.rawValue] = label }
        if let comment { attributes[AttributeKey.comment.rawValue] = comment }
        return attributes
    }
}
