import Foundation
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

@testable import LatchkeyEngine

/// Opening a keychain checks its schema against a digest of the current format (`expectedSchemaDigest`)
/// rather than against a schema built by replaying the migrations: the digest must be the migrations' result,
/// and a schema that differs in anything is refused.
@Suite struct KeychainSchemaDigestTests {
    let directory = TemporaryDirectory()

    @Test func theDigestIsTheMigrationsResult() throws {
        let migrated = try KeychainSchema.expectedSchema.get()
        #expect(
            KeychainSchema.digest(of: migrated) == KeychainSchema.expectedSchemaDigest,
            "expectedSchemaDigest should be \(KeychainSchema.digest(of: migrated))")
    }

    @Test func aSchemaThatDiffersIsRefused() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let path = try #require(keychain.path)
        _ = consume keychain
        try RawFile.execute(path, "CREATE INDEX extra ON items (row_id)")
        let refused = #expect(throws: KeychainError.self) { try KeychainDatabase.open(at: path) }
        #expect(refused?.status == .invalidKeychain)
        #expect(refused?.message.contains("is damaged: its tables are not a keychain's") == true)
        try RawFile.execute(path, "DROP INDEX extra")
        _ = try KeychainDatabase.open(at: path)
    }
}
