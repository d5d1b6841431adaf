import Dispatch
public import FoundationEssentials

/// `async` overloads of every `Keychain` operation. They run the work on a global dispatch queue, so a
/// durable write (which waits for the disk) or a first unlock (Argon2id) never blocks a Swift concurrency
/// executor. In an `async` context these are the ones Swift picks.
extension Keychain {
    /// Stores `value` under `key` (atomic upsert).
    public func set(_ value: String, forKey key: String) async throws(KeychainFailure) {
        try await offload { () throws(KeychainFailure) in try self.set(value, forKey: key) }
    }

    /// Stores `value` under `key` (atomic upsert).
    public func set(_ value: Data, forKey key: String) async throws(KeychainFailure) {
        try await offload { () throws(KeychainFailure) in try self.set(value, forKey: key) }
    }

    /// Stores an `Encodable` value under `key` (atomic upsert).
    public func set<T: Encodable & Sendable>(_ value: T, forKey key: String) async throws(KeychainFailure) {
        try await offload { () throws(KeychainFailure) in try self.set(value, forKey: key) }
    }

    /// The string under `key`, or nil.
    public func string(forKey key: String) async throws(KeychainFailure) -> String? {
        try await offload { () throws(KeychainFailure) in try self.string(forKey: key) }
    }

    /// The data under `key`, or nil.
    public func data(forKey key: String) async throws(KeychainFailure) -> Data? {
        try await offload { () throws(KeychainFailure) in try self.data(forKey: key) }
    }

    /// The value under `key` decoded as `T`, or nil.
    public func value<T: Decodable & Sendable>(_ type: T.Type, forKey key: String) async throws(KeychainFailure) -> T? {
        try await offload { () throws(KeychainFailure) in try self.value(type, forKey: key) }
    }

    /// Whether an item is stored under `key`.
    public func contains(_ key: String) async throws(KeychainFailure) -> Bool {
        try await offload { () throws(KeychainFailure) in try self.contains(key) }
    }

    /// Removes the item under `key`; false when there was none.
    @discardableResult
    public func remove(_ key: String) async throws(KeychainFailure) -> Bool {
        try await offload { () throws(KeychainFailure) in try self.remove(key) }
    }

    /// Removes every item of this scope.
    @discardableResult
    public func removeAll() async throws(KeychainFailure) -> Bool {
        try await offload { () throws(KeychainFailure) in try self.removeAll() }
    }

    /// Every key of this scope, sorted.
    public func allKeys() async throws(KeychainFailure) -> [String] {
        try await offload { () throws(KeychainFailure) in try self.allKeys() }
    }

    /// The attributes of the entry under `key`, or nil.
    public func attributes(forKey key: String) async throws(KeychainFailure) -> Entry? {
        try await offload { () throws(KeychainFailure) in try self.attributes(forKey: key) }
    }

    private func offload<T: Sendable>(_ work: @escaping @Sendable () throws(KeychainFailure) -> T)
        async throws(KeychainFailure) -> T
    {
        let result: Result<T, KeychainFailure> = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(returning: Result { () throws(KeychainFailure) in try work() })
            }
        }
        return try result.get()
    }
}
