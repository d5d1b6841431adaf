import Foundation
import Latchkey
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A private temporary directory (mode 0700), removed when the value is released.
final class TemporaryDirectory: @unchecked Sendable {
    // @unchecked: immutable after init.
    let path: String

    init() {
        var template = Array((NSTemporaryDirectory() + "/latchkey-test-XXXXXX").utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil, "mkdtemp failed")
        path = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Test fixtures: a fresh keychain file per test, with the cheapest key derivation Latchkey accepts.
enum Fixture {
    static let passphrase = "correct horse battery staple"
    static let app = CallerIdentity(applicationIdentifier: "com.example.app", accessGroups: ["com.example.app", "com.example.shared"])
    static let other = CallerIdentity(applicationIdentifier: "com.example.other", accessGroups: ["com.example.other"])
    static let everything = CallerIdentity(applicationIdentifier: "latchkey.admin", accessGroups: ["*"])

    static func newKeychain(in directory: TemporaryDirectory, name: String = "test.keychain") throws -> KeychainDatabase {
        try KeychainDatabase.create(
            at: directory.file(name), passphrase: Passphrase(passphrase), keyDerivation: .minimum)
    }

    static func password(service: String, account: String, secret: String = "s3cret",
                         extra: [AttributeKey: AttributeValue] = [:]) -> NewItem {
        var attributes: [AttributeKey: AttributeValue] = [.service: .string(service), .account: .string(account)]
        attributes.merge(extra) { _, new in new }
        return NewItem(.genericPassword, attributes: attributes, data: Data(secret.utf8))
    }

    static func query(service: String, account: String? = nil, limit: MatchLimit = .one,
                      returning: ReturnOptions = [.data]) -> ItemQuery {
        var matching: [AttributeKey: AttributeValue] = [.service: .string(service)]
        if let account { matching[.account] = .string(account) }
        return ItemQuery(.genericPassword, matching: matching, limit: limit, returning: returning)
    }
}

/// The status of a thrown `KeychainError`, or nil when `body` does not throw.
func status(_ body: () throws -> Void) -> KeychainStatus? {
    do {
        try body()
        return nil
    } catch let error as KeychainError {
        return error.status
    } catch {
        Issue.record("unexpected error type: \(error)")
        return nil
    }
}
