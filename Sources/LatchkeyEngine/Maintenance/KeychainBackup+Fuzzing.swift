package import FoundationEssentials

/// What latchkey-fuzz reaches of the backup format. The fuzzer imports modules plainly, never with
/// `@testable` (which needs `-enable-testing` and so broke `swift build -c release`), so the parsers it
/// drives are reached through these package-level doors.
extension KeychainBackup {
    /// Parses `bytes` as a backup's decrypted payload (`payload`) or as its header, and checks what a parse
    /// that succeeds promises: no more items than bytes; a key derivation within bounds, a header shorter
    /// than the input. A refusal is thrown.
    package static func fuzzParse(_ bytes: Data, payload: Bool) throws(KeychainError) {
        if payload {
            let items = try parsePayload(bytes)
            precondition(items.count <= bytes.count, "more items than bytes")
        } else {
            let (header, kdf) = try parseHeader(bytes)
            precondition(kdf.parameters.isWithinBounds && header.count < bytes.count)
        }
    }

    /// The payload encoding of `items`, before sealing (the fuzzer's seeds).
    package static func encodedPayload(_ items: [Item]) -> Data { Data(encodePayload(items).bytes) }
}
