import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// `list` answers from the items' attributes alone: a login whose secret may only be read after the user
/// confirms (access control `.userPresence`, no one to ask here) is listed, while `get` of it is refused.
@Suite struct DockerListReadsNoSecretTests {
    @Test func aProtectedLoginIsListedButNotRead() throws {
        let sandbox = try HelperSandbox()
        let database = try KeychainDatabase.open(at: sandbox.keychainPath)
        try database.unlock(with: Passphrase(HelperSandbox.passphrase))
        _ = try database.add(
            NewItem(
                .internetPassword,
                attributes: [
                    .label: .string("Docker Credentials"), .protocol: .string("htps"),
                    .server: .string("protected.example.com"),
                    .path: .string(""), .account: .string("alice"), .authenticationType: .string("dflt"),
                    .accessControl: AccessControl(protection: .whenUnlocked, flags: .userPresence).attributeValue,
                ], data: Data("needs-presence".utf8)),
            caller: CallerIdentity(applicationIdentifier: "docker-credential-latchkey"))
        let listed = try sandbox.dockerHelper("list")
        #expect(listed.status == 0, "\(listed.stdout)")
        #expect(listed.stdout == #"{"https://protected.example.com":"alice"}"# + "\n")
        let got = try sandbox.dockerHelper("get", "protected.example.com")
        #expect(got.status == 1)
        #expect(got.stdout.hasPrefix("User interaction is not allowed."))
        #expect(!got.stdout.contains("needs-presence"))
    }
}
