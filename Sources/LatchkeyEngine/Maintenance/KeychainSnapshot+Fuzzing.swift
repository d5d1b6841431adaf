package import FoundationEssentials

/// What latchkey-fuzz reaches of the snapshot format (through a package-level door, as for the backup
/// format: the fuzzer never imports with `@testable`).
extension KeychainSnapshot {
    /// Checks `bytes` as a whole snapshot file — header, promised size, digest — and what a check that
    /// succeeds promises: the database is the file less its header and digest. A refusal is thrown.
    package static func fuzzVerify(_ bytes: Data) throws(KeychainError) {
        let (snapshot, database) = try verify(bytes, path: "input")
        precondition(database.count == bytes.count - headerLength - digestLength && snapshot.size == bytes.count)
    }

    /// A snapshot file of `database` (the fuzzer's seeds).
    package static func fuzzSeed(database: [UInt8], itemCount: Int) -> Data {
        Data(
            encode(
                database: database, taken: Date(timeIntervalSince1970: 1_800_000_000), sequence: Int64(itemCount),
                itemCount: itemCount, keychainID: Data(repeating: 7, count: 16)
            ).joined())
    }
}
