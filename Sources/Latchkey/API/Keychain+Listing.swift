public import Foundation

extension Keychain {
    /// The attributes of one entry (never its secret).
    public struct Entry: Hashable, Sendable {
        /// The key (`kSecAttrAccount`).
        public let key: String
        /// `kSecAttrLabel`.
        public let label: String?
        /// `kSecAttrComment`.
        public let comment: String?
        /// When the item was created.
        public let creationDate: Date?
        /// When the item last changed.
        public let modificationDate: Date?
        /// When the item is readable.
        public let accessibility: Accessibility?
        /// Whether the item synchronizes.
        public let isSynchronizable: Bool
        /// The access group the item lives in.
        public let accessGroup: String?

        init(_ attributes: [String: Any]) {
            func text(_ key: AttributeKey) -> String? {
                let value = attributes[key.rawValue]
                return value as? String ?? (value as? Data).flatMap { String(data: $0, encoding: .utf8) }
            }
            self.key = text(.account) ?? ""
            label = text(.label)
            comment = text(.comment)
            creationDate = attributes[AttributeKey.creationDate.rawValue] as? Date
            modificationDate = attributes[AttributeKey.modificationDate.rawValue] as? Date
            accessibility = (attributes[AttributeKey.accessible.rawValue] as? String).flatMap(Accessibility.init(rawValue:))
            isSynchronizable = (attributes[AttributeKey.synchronizable.rawValue] as? Int) == 1
            accessGroup = attributes[AttributeKey.accessGroup.rawValue] as? String
        }
    }

    /// The attributes of the entry under `key`, or nil when there is none.
    public func attributes(forKey key: String) throws(KeychainFailure) -> Entry? {
        try failing { () throws(KeychainError) -> Entry? in
            var query = try itemQuery(key)
            query[SecKey.returnAttributes] = true
            do throws(KeychainError) {
                return (try backend().copyMatching(query) as? [String: Any]).map(Entry.init)
            } catch {
                guard error.status == .itemNotFound else { throw error }
                return nil
            }
        }
    }

    /// Every entry of this scope (attributes only), sorted by key.
    public func allEntries() throws(KeychainFailure) -> [Entry] {
        try failing { () throws(KeychainError) -> [Entry] in
            var query = try scopeQuery()
            query[SecKey.returnAttributes] = true
            query[SecKey.matchLimit] = SecKey.matchLimitAll
            do throws(KeychainError) {
                let found = try backend().copyMatching(query) as? [[String: Any]] ?? []
                return found.map(Entry.init).sorted { $0.key < $1.key }
            } catch {
                guard error.status == .itemNotFound else { throw error }
                return []
            }
        }
    }

    /// Every key stored in this scope, sorted.
    public func allKeys() throws(KeychainFailure) -> [String] { try allEntries().map(\.key) }

    /// Removes every item of this scope (only this service or server, only this value's access group and
    /// synchronizable setting). Returns whether anything was removed.
    @discardableResult
    public func removeAll() throws(KeychainFailure) -> Bool {
        try failing { () throws(KeychainError) -> Bool in
            do throws(KeychainError) {
                try backend().delete(try scopeQuery())
                return true
            } catch {
                guard error.status == .itemNotFound else { throw error }
                return false
            }
        }
    }
}
