import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyPOSIX

/// `git-credential-latchkey`: git's credential-helper protocol (`get`, `store`, `erase`) over internet-password
/// items of the keychain, keyed as git-credential-osxkeychain keys them (protocol, server, port, path,
/// account, default authentication type), so an item means the same on Linux and on a Mac.
///
/// Exit status: 0 when done (also when nothing matched, for a protocol the helper does not keep, for an
/// incomplete credential and for an operation it does not know, as gitcredentials(7) asks); 64 for a usage
/// error; 65 for input that breaks the protocol; else the low byte of the keychain's status (36: the
/// keychain is locked and no one can be asked for its passphrase). git shows the message on standard error
/// and goes on without the helper.
package enum GitCredentialHelper {
    /// The helper's name: its application identifier and the access group of its items.
    package static let name = "git-credential-latchkey"
    /// The state prefix this helper hands git (`state[]`).
    static let statePrefix = "latchkey:seen="

    /// Runs the helper as its process: this process's arguments, standard input and output.
    package static func main() -> Int32 {
        HelperRuntime.harden(name: name)
        return run(Array(CommandLine.arguments.dropFirst()), input: .standardInput, output: .standard)
    }

    /// Runs the helper with `arguments` (git appends the operation to the configured ones).
    static func run(_ arguments: [String], input: GitCredentialReader, output: HelperOutput) -> Int32 {
        guard let action = arguments.last else {
            output.error(usageLine)
            return HelperRuntime.usageStatus
        }
        if let option = arguments.dropLast().first {
            output.error("\(name): unknown option \"\(option)\"")
            output.error(usageLine)
            return HelperRuntime.usageStatus
        }
        switch action {
        case "-h", "--help", "help":
            output.out(help)
            return 0
        case "--version":
            output.out("\(name) (latchkey) \(HelperVersion.text)\n")
            return 0
        case "capability":
            output.out("version 0\ncapability state\n")
            return 0
        case "get", "store", "erase":
            break
        default:
            return 0  // "If a helper receives any other operation, it should silently ignore the request."
        }
        do {
            let credential = try input.read()
            guard let location = try credential.location() else { return 0 }
            let keychain = try HelperKeychain.open(as: name)
            switch action {
            case "get": try get(credential, at: location, in: keychain, output: output)
            case "store": try store(credential, at: location, in: keychain)
            default: try erase(credential, at: location, in: keychain)
            }
            return 0
        } catch let error as GitCredential.BadInput {
            output.error("\(name): \(action): \(error)")
            return HelperRuntime.badInputStatus
        } catch let error as KeychainError {
            output.error("\(name): \(action): \(HelperRuntime.message(for: error))")
            return HelperRuntime.exitStatus(for: error.status)
        } catch {
            output.error("\(name): \(action): \(error)")
            return 1
        }
    }

    static let usageLine = "usage: git-credential-latchkey <get|store|erase>"

    /// `get`: the first item for the location (and the username, when git has one).
    static func get(
        _ credential: GitCredential, at location: InternetLocation, in keychain: HelperKeychain,
        output: HelperOutput
    ) throws(KeychainError) {
        guard keychain.exists else { return }
        var matching = location.attributes
        if let username = credential.username { matching[.account] = .string(username) }
        let found: ItemResult
        do {
            guard
                let first = try keychain.service.copyMatching(
                    ItemQuery(.internetPassword, matching: matching, limit: .one, returning: [.attributes, .data])
                ).first
            else { return }
            found = first
        } catch KeychainError.itemNotFound {
            return
        }
        let secret = GitStoredSecret(data: found.data ?? Data())
        let username = credential.username ?? found[.account]?.text ?? ""
        var answer: [UInt8] = []
        defer { answer.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        func line(_ key: String, _ value: [UInt8]) {
            answer.append(contentsOf: Array(key.utf8))
            answer.append(UInt8(ascii: "="))
            answer.append(contentsOf: value)
            answer.append(UInt8(ascii: "\n"))
        }
        if credential.capabilities.contains("state") { line("capability[]", Array("state".utf8)) }
        if credential.username == nil { line("username", Array(username.utf8)) }
        line("password", secret.password)
        if let expiry = secret.passwordExpiry { line("password_expiry_utc", expiry) }
        if let token = secret.oauthRefreshToken { line("oauth_refresh_token", token) }
        if credential.capabilities.contains("state") {
            line("state[]", Array((statePrefix + seenDigest(location, username, secret)).utf8))
        }
        output.out(answer)
    }

    /// `store`: adds the item, or updates the one of the same location and username. A credential this
    /// helper just gave git (its state says so), or one stored already as it is, is not written again.
    static func store(_ credential: GitCredential, at location: InternetLocation, in keychain: HelperKeychain)
        throws(KeychainError)
    {
        guard let username = credential.username, let password = credential.password else { return }
        let secret = GitStoredSecret(
            password: password, passwordExpiry: credential.passwordExpiry,
            oauthRefreshToken: credential.oauthRefreshToken)
        if credential.states.contains(statePrefix + seenDigest(location, username, secret)) { return }
        var attributes = location.attributes
        attributes[.path] = .string(location.path ?? "")
        attributes[.account] = .string(username)
        if keychain.exists {
            do {
                let stored = try keychain.service.copyMatching(
                    ItemQuery(.internetPassword, matching: attributes, limit: .one, returning: [.data]))
                if let data = stored.first?.data, GitStoredSecret(data: data) == secret { return }
            } catch KeychainError.itemNotFound {
                // Not stored yet: added below.
            }
        }
        _ = try keychain.service.addOrUpdate(NewItem(.internetPassword, attributes: attributes, data: secret.data))
    }

    /// `erase`: every item for the location (and the username, when given) — only those whose password is
    /// the one git names, when it names one (git's documentation asks helpers to check).
    static func erase(_ credential: GitCredential, at location: InternetLocation, in keychain: HelperKeychain)
        throws(KeychainError)
    {
        guard keychain.exists else { return }
        var matching = location.attributes
        if let username = credential.username { matching[.account] = .string(username) }
        do {
            guard let password = credential.password else {
                _ = try keychain.service.delete(ItemQuery(.internetPassword, matching: matching))
                return
            }
            let found = try keychain.service.copyMatching(
                ItemQuery(.internetPassword, matching: matching, limit: .all, returning: [.data, .persistentReference]))
            for item in found where GitStoredSecret(data: item.data ?? Data()).password == password {
                do {
                    _ = try keychain.service.delete(
                        ItemQuery(.internetPassword, persistentReference: item.persistentReference))
                } catch KeychainError.itemNotFound {
                    // Erased meanwhile by another process: what was asked is done.
                }
            }
        } catch KeychainError.itemNotFound {
            return
        }
    }

    /// The state handed git with a credential: a digest of what `store` would write, so that git's `store`
    /// of the same credential, right after using it, writes nothing. It is a digest, not the password; git
    /// sends both to every helper anyway.
    static func seenDigest(_ location: InternetLocation, _ username: String, _ secret: GitStoredSecret) -> String {
        let fields: [String] = [
            location.protocolCode, location.server, String(location.port ?? 0), location.path ?? "", username,
        ]
        var message: [UInt8] = []
        for field in fields {
            message.append(contentsOf: Array(field.utf8))
            message.append(0)
        }
        message.append(contentsOf: Array(secret.data))
        defer { message.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        let key = SecureBytes(count: KeyedDigest.keyLength) { buffer in
            let label = Array("latchkey git credential state, v1".utf8)
            for index in 0..<buffer.count { buffer[index] = label[index % label.count] }
        }
        return Hex.encode(KeyedDigest.digest(message, key: key, length: 16))
    }
}
