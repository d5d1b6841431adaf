import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// Releasing an ephemeral key through the service programs use (the agent when it serves them, else the
/// keychain in this process) never opens the keychain: a release runs when a `HeldKey` goes, where asking
/// for the passphrase would be wrong.
@Suite(.dedicatedThreads) struct HeldKeyReleaseTests {
    let directory = TemporaryDirectory()
    static let ecdsa = KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")

    /// A keychain on disk, closed, and a service over it whose passphrase comes from a key file: opening the
    /// keychain would succeed, so a release that opened it would show.
    func service() throws -> (AutomaticService, EmbeddedService) {
        let path = try #require(try Fixture.newKeychain(in: directory).path)
        let keyFile = directory.file("passphrase")
        #expect(
            FileManager.default.createFile(
                atPath: keyFile, contents: Data((Fixture.passphrase + "\n").utf8),
                attributes: [.posixPermissions: 0o600]))
        let embedded = EmbeddedService(path: path, passphrase: .keyFile(keyFile), caller: Fixture.app)
        return (AutomaticService(path: path, embedded: embedded), embedded)
    }

    @Test func aReleaseNeverOpensTheKeychain() throws {
        let (automatic, embedded) = try service()
        let handle = Data("lke1".utf8) + Data(repeating: 9, count: 28)
        #expect(throws: KeychainError(.itemNotFound, "no keychain open in this process holds the key")) {
            try automatic.releaseHeldKey(handle)
        }
        #expect(!embedded.isOpen)
    }

    @Test func aKeyMadeInThisProcessIsReleasedWithItsLastHandle() throws {
        let (automatic, embedded) = try service()
        let made = try #require(
            try automatic.createHeldKey(
                HeldKeyRequest(type: .ellipticCurve, bits: 256, isPermanent: false),
                returning: [.attributes, .data]))
        #expect(embedded.isOpen)
        do {
            let held = try HeldKey(result: made, service: automatic)
            _ = try held.sign(Self.ecdsa, Data("m".utf8))
        }
        HeldKeyReleases.waitForPendingReleases()
        do throws(KeychainError) {
            _ = try embedded.useHeldKey(made.persistentReference, for: .sign(Self.ecdsa, Data()))
            Issue.record("the key outlived its last handle")
        } catch {
            #expect(error.status == .itemNotFound)
        }
    }
}
