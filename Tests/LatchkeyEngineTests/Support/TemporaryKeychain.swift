import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// Test fixtures: a fresh keychain file per test, with the cheapest key derivation Latchkey accepts.
enum Fixture {
    static let passphrase = "correct horse battery staple"
    static let app = CallerIdentity(
        applicationIdentifier: "com.example.app", accessGroups: ["com.example.app", "com.example.shared"])
    static let other = CallerIdentity(applicationIdentifier: "com.example.other", accessGroups: ["com.example.other"])
    static let everything = CallerIdentity(applicationIdentifier: "latchkey.admin", accessGroups: ["*"])

    static func newKeychain(in directory: TemporaryDirectory, name: String = "test.keychain") throws -> KeychainDatabase
    {
        try KeychainDatabase.create(
            at: directory.file(name), passphrase: Passphrase(passphrase), keyDerivation: .minimum)
    }

    static func password(
        service: String, account: String, secret: String = "s3cret",
        extra: [AttributeKey: AttributeValue] = [:]
    ) -> NewItem {
        var attributes: [AttributeKey: AttributeValue] = [.service: .string(service), .account: .string(account)]
        attributes.merge(extra) { _, new in new }
        return NewItem(.genericPassword, attributes: attributes, data: Data(secret.utf8))
    }

    static func query(
        service: String, account: String? = nil, limit: MatchLimit = .one,
        returning: ReturnOptions = [.data]
    ) -> ItemQuery {
        var matching: [AttributeKey: AttributeValue] = [.service: .string(service)]
        if let account { matching[.account] = .string(account) }
        return ItemQuery(.genericPassword, matching: matching, limit: limit, returning: returning)
    }
}
