import FoundationEssentials

extension Keychain {
    /// Stores any `Encodable` value under `key` (atomic upsert).
    ///
    /// The encoding is stable and documented: UTF-8 JSON from `JSONEncoder` with object keys sorted,
    /// `Date` as a number of seconds since 2001-01-01 (Foundation's default, lossless), and `Data` as
    /// Base64. Any program that reads JSON can read the value back.
    ///
    /// ```swift
    /// struct LoginInfo: Codable { var enterpriseID: String; var account: String; var password: String }
    /// try keychain.set(LoginInfo(enterpriseID: "jit", account: "alice", password: "hunter2"), forKey: "login")
    /// let info = try keychain.value(LoginInfo.self, forKey: "login")
    /// ```
    public func set<T: Encodable>(_ value: T, forKey key: String) throws(KeychainFailure) {
        let encoded: Data
        do {
            encoded = try Self.encoder.encode(value)
        } catch {
            throw .param(
                KeychainError(
                    .param, "the value for key '\(key)' cannot be encoded as JSON (\(Self.summary(of: error)))"))
        }
        try set(encoded, forKey: key)
    }

    /// The value stored under `key` decoded as `T`, or nil when there is none. Bytes that do not decode as
    /// `T` are a `.decode` failure naming the key, the type and the coding path (never the bytes).
    public func value<T: Decodable>(_ type: T.Type, forKey key: String) throws(KeychainFailure) -> T? {
        guard let data = try data(forKey: key) else { return nil }
        do {
            return try Self.decoder.decode(T.self, from: data)
        } catch {
            throw .decode(
                KeychainError(
                    .decode, "the value stored for key '\(key)' is not a valid \(T.self) (\(Self.summary(of: error)))"))
        }
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .deferredToDate
        encoder.dataEncodingStrategy = .base64
        return encoder
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .deferredToDate
        decoder.dataDecodingStrategy = .base64
        return decoder
    }

    /// What went wrong, by kind and coding path only: a decoder's own description may quote the bytes.
    static func summary(of error: any Error) -> String {
        func path(_ context: [any CodingKey]) -> String {
            context.isEmpty
                ? "at the top level"
                : "at "
                    + context.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
                    .joined(separator: ".")
        }
        switch error {
        case DecodingError.typeMismatch(let type, let context): return "expected \(type) \(path(context.codingPath))"
        case DecodingError.valueNotFound(let type, let context): return "missing \(type) \(path(context.codingPath))"
        case DecodingError.keyNotFound(let key, let context):
            return "missing key '\(key.stringValue)' \(path(context.codingPath))"
        case DecodingError.dataCorrupted(let context): return "not valid JSON \(path(context.codingPath))"
        case EncodingError.invalidValue(_, let context): return "a value JSON cannot hold \(path(context.codingPath))"
        default: return String(describing: type(of: error))
        }
    }
}
