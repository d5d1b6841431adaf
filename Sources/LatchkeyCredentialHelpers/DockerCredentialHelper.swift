import Foundation
import Latchkey
import LatchkeyPOSIX

/// `docker-credential-latchkey`: the docker-credential-helpers protocol (`store`, `get`, `erase`, `list`,
/// `version`; JSON on standard input and output) over internet-password items labelled and keyed as
/// docker-credential-osxkeychain makes them: label "Docker Credentials", protocol, server, port, path,
/// account, default authentication type.
///
/// As Docker's own helpers, it answers a failure with the message on standard output (docker reads it
/// there: "credentials not found in native keychain" for a missing one) and exit status 1.
package enum DockerCredentialHelper {
    /// The helper's name: its application identifier and the access group of its items.
    package static let name = "docker-credential-latchkey"
    /// The label Docker's helpers give their items (`credentials.CredsLabel`); `list` lists only these.
    static let label = "Docker Credentials"
    /// Docker's message for a missing credential; its client takes it for "not found", not a failure.
    static let notFound = "credentials not found in native keychain"
    /// The most input read (a request is a URL or three short strings).
    static let maximumInputBytes = 1 << 20

    /// A failure: its message goes to standard output, the exit status is 1.
    struct Failure: Error {
        let message: String
    }

    /// Runs the helper as its process: this process's arguments, standard input and output.
    package static func main() -> Int32 {
        HelperRuntime.harden(name: name)
        return run(Array(CommandLine.arguments.dropFirst()), readInput: readStandardInput, output: .standard)
    }

    static let usage = "Usage: docker-credential-latchkey <store|get|erase|list|version>"

    /// Runs the helper with `arguments` and the input `readInput` gives.
    static func run(_ arguments: [String], readInput: () throws(Failure) -> [UInt8], output: HelperOutput) -> Int32 {
        guard arguments.count == 1, let action = arguments.first else {
            output.out(usage + "\n")
            return 1
        }
        do {
            switch action {
            case "--help", "-h", "help":
                output.out(help)
            case "version", "--version", "-v":
                output.out("\(name) (latchkey) \(HelperVersion.text)\n")
            case "store":
                let credentials: DockerCredentials
                do {
                    var input = try readInput()
                    defer { input.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
                    credentials = try DockerCredentials(json: input)
                } catch let invalid as DockerCredentials.Invalid {
                    throw Failure(message: invalid.description)
                }
                try store(credentials, in: try open())
            case "get":
                let url = try serverURL(from: readInput())
                output.out(try get(url, in: try open()).json)
            case "erase":
                try erase(try serverURL(from: readInput()), in: try open())
            case "list":
                output.out(DockerCredentials.json(list: try list(in: try open())))
            default:
                throw Failure(message: "\(name): unknown action: \(action)")
            }
            return 0
        } catch let failure as Failure {
            output.out(failure.message + "\n")
            return 1
        } catch let error as KeychainError {
            output.out(HelperRuntime.message(for: error) + "\n")
            return 1
        } catch {
            output.out("\(error)\n")
            return 1
        }
    }

    private static func open() throws(KeychainError) -> HelperKeychain { try HelperKeychain.open(as: name) }

    /// Standard input to its end, at most `maximumInputBytes`.
    static func readStandardInput() throws(Failure) -> [UInt8] {
        do {
            return try FileDescriptor.standardInput.readAll(limit: maximumInputBytes)
        } catch .tooLarge {
            throw Failure(message: "the input is larger than \(maximumInputBytes >> 20) MiB")
        } catch {
            throw Failure(message: "cannot read standard input: \(error)")
        }
    }

    /// The server URL of a `get` or `erase` request: the input without surrounding white space.
    static func serverURL(from input: [UInt8]) throws(Failure) -> String {
        let url = String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !url.isEmpty else { throw Failure(message: DockerCredentials.missingServerURL) }
        return url
    }

    static func location(_ serverURL: String) throws(Failure) -> InternetLocation {
        do {
            return try RegistryURL.location(of: serverURL)
        } catch {
            throw Failure(message: error.description)
        }
    }

    /// What Docker's helper matches a server URL's item by: protocol, server, port and path (not the label
    /// or the authentication type).
    static func matching(_ location: InternetLocation) -> [AttributeKey: AttributeValue] {
        var matching = location.attributes
        matching[.authenticationType] = nil
        return matching
    }

    /// `store`: the server URL's one item, with this user name and secret. The new item is written before
    /// any other user's item for the URL is removed, so a failure loses nothing.
    static func store(_ credentials: DockerCredentials, in keychain: HelperKeychain) throws {
        try replaceLogin(at: try location(credentials.serverURL), with: credentials, in: keychain)
    }

    private static func replaceLogin(
        at location: InternetLocation, with credentials: DockerCredentials, in keychain: HelperKeychain
    )
        throws(KeychainError)
    {
        var attributes = location.attributes
        attributes[.account] = .string(credentials.username)
        attributes[.label] = .string(label)
        _ = try keychain.service.addOrUpdate(
            NewItem(.internetPassword, attributes: attributes, data: Data(credentials.secret.utf8)))
        var others: [ItemResult] = []
        do {
            others = try keychain.service.copyMatching(
                ItemQuery(
                    .internetPassword, matching: matching(location), limit: .all,
                    returning: [.attributes, .persistentReference]))
        } catch KeychainError.itemNotFound {
            // Only the new item's attributes could have matched; nothing else to remove.
        }
        for item in others {
            let account: String? = item[.account]?.text
            if account == credentials.username { continue }
            do {
                _ = try keychain.service.delete(
                    ItemQuery(.internetPassword, persistentReference: item.persistentReference))
            } catch KeychainError.itemNotFound {
                // Removed meanwhile by another process.
            }
        }
    }

    /// `get`: the user name and secret for the server URL.
    static func get(_ serverURL: String, in keychain: HelperKeychain) throws -> DockerCredentials {
        let location = try location(serverURL)
        guard keychain.exists else { throw Failure(message: notFound) }
        do {
            guard
                let item = try keychain.service.copyMatching(
                    ItemQuery(
                        .internetPassword, matching: matching(location), limit: .one, returning: [.attributes, .data])
                ).first
            else { throw Failure(message: notFound) }
            return DockerCredentials(
                serverURL: serverURL, username: item[.account]?.text ?? "",
                secret: String(decoding: item.data ?? Data(), as: UTF8.self))
        } catch KeychainError.itemNotFound {
            throw Failure(message: notFound)
        }
    }

    /// `erase`: the server URL's items.
    static func erase(_ serverURL: String, in keychain: HelperKeychain) throws {
        let location = try location(serverURL)
        guard keychain.exists else { throw Failure(message: notFound) }
        do {
            _ = try keychain.service.delete(ItemQuery(.internetPassword, matching: matching(location)))
        } catch KeychainError.itemNotFound {
            throw Failure(message: notFound)
        }
    }

    /// `list`: each Docker item's URL and user name, from their attributes alone (no secret is read).
    static func list(in keychain: HelperKeychain) throws(KeychainError) -> [String: String] {
        guard keychain.exists else { return [:] }
        let items: [ItemResult]
        do {
            items = try keychain.service.copyMatching(
                ItemQuery(.internetPassword, matching: [.label: .string(label)], limit: .all, returning: [.attributes]))
        } catch KeychainError.itemNotFound {
            return [:]
        }
        var list: [String: String] = [:]
        for item in items {
            let url = RegistryURL.string(
                protocolCode: item[.protocol]?.text, server: item[.server]?.text ?? "",
                port: Int(item[.port]?.numberValue ?? 0), path: item[.path]?.text ?? "")
            list[url] = item[.account]?.text ?? ""
        }
        return list
    }
}
