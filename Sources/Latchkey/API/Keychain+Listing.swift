public import FoundationEssentials

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

        init(_ result: ItemResult) {
            func text(_ key: AttributeKey) -> String? {
                switch result[key] {
                case .string(let text)?: text
                case .data(let bytes)?: String(data: bytes, encoding: .utf8)
                default: nil
                }
            }
            self.key = text(.account) ?? ""
            label = text(.label)
            comment = text(.comment)
            creationDate = result[.creationDate]?.dateValue
            modificationDate = result[.modificationDate]?.dateValue
            accessibility = text(.accessible).flatMap(Accessibility.init(rawValue:))
            isSynchronizable = result[.synchronizable] == .number(1) || result[.synchronizable] == .bool(true)
            accessGroup = text(.accessGroup)
        }
    }

    /// The attributes of the entry under `key`, or nil when there is none.
    public func attributes(forKey key: String) throws(KeychainFailure) -> Entry? {
        try failing { () throws(KeychainError) -> Entry? in
            do throws(KeychainError) {
                return try service().copyMatching(try itemQuery(key, returning: .attributes)).first.map(Entry.init)
            } catch KeychainError.itemNotFound {
                return nil
            }
        }
    }

    /// Every entry of this scope (attributes only), sorted by key.
    public func allEntries() throws(KeychainFailure) -> [Entry] {
        try failing { () throws(KeychainError) -> [Entry] in
            do throws(KeychainError) {
                return try service().copyMatching(try scopeQuery(returning: .attributes)).map(Entry.init).sorted {
                    $0.key < $1.key
                }
            } catch KeychainError.itemNotFound {
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
                _ = try service().delete(try scopeQuery())
                return true
            } catch KeychainError.itemNotFound {
                return false
            }
        }
    }
}
