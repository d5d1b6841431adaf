// latchkey-demo: Latchkey's main job on the embedded default keychain, end to end. It creates (or opens)
// the default keychain, stores a credential, reads it back, updates it, deletes it, and then searches every
// file of the keychain for the secret and its attributes to show that none is stored in plaintext.
import Foundation
import Latchkey

func fail(_ error: any Error) -> Never {
    let message = (error as? KeychainError)?.message ?? "\(error)"
    FileHandle.standardError.write(Data("latchkey-demo: \(message)\n".utf8))
    exit(1)
}

/// Opens and unlocks the keychain at `path`, or creates it (asking twice for a new passphrase at a prompt).
func openOrCreate(_ path: String, source: PassphraseSource) throws -> KeychainDatabase {
    if FileManager.default.fileExists(atPath: path) {
        let keychain = try KeychainDatabase.open(at: path)
        try keychain.unlock(with: try source.read(prompt: "Passphrase for \(path): "))
        let derivation = try keychain.keyDerivation
        print("Opened and unlocked the existing keychain (\(derivation)).")
        return keychain
    }
    let passphrase = try source.read(prompt: "New passphrase for \(path): ")
    if source == .prompt {
        let again = try source.read(prompt: "Repeat the passphrase: ")
        guard again == passphrase else { throw KeychainError(.param, "the two passphrases differ") }
    }
    let keychain = try KeychainDatabase.create(at: path, passphrase: passphrase)
    let derivation = try keychain.keyDerivation
    print("Created a new keychain (\(derivation)).")
    return keychain
}

/// The files of the keychain at `path` (database, WAL, shared memory, device key).
func keychainFiles(_ path: String) throws -> [String] {
    let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
    let name = URL(fileURLWithPath: path).lastPathComponent
    return try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(name) }.sorted()
        .map { directory + "/" + $0 }
}

func runDemo() throws {
    let path = KeychainLocation.defaultPath()
    let caller = CallerIdentity(applicationIdentifier: "latchkey.demo")
    print("Keychain: \(path)")
    let keychain = try openOrCreate(path, source: PassphraseSource.automatic())

    // A fresh credential each run: a login token for an enterprise account, as in the seed articles.
    let nonce = UUID().uuidString.prefix(8)
    let service = "com.example.enterprise-login.\(nonce)"
    let account = "employee-\(nonce)"
    let firstSecret = "token-\(UUID().uuidString)"
    let secondSecret = "token-\(UUID().uuidString)"
    let matching: [AttributeKey: AttributeValue] = [.service: .string(service), .account: .string(account)]
    let read = ItemQuery(.genericPassword, matching: matching, returning: [.data, .attributes])
    let target = ItemQuery(.genericPassword, matching: matching)

    try keychain.add(
        NewItem(
            .genericPassword, attributes: matching.merging([.label: .string("Enterprise login (demo)")]) { a, _ in a },
            data: Data(firstSecret.utf8)), caller: caller)
    print("Stored    genp service=\(service) account=\(account) (\(firstSecret.utf8.count) bytes, accessibility ak)")

    let stored = try keychain.copyMatching(read, caller: caller)[0]
    print("Read back \(stored.data == Data(firstSecret.utf8) ? "the same secret" : "A DIFFERENT SECRET")")

    try keychain.update(target, with: ItemChanges(data: Data(secondSecret.utf8)), caller: caller)
    let updated = try keychain.copyMatching(read, caller: caller)[0]
    print(
        "Updated   the secret; read back \(updated.data == Data(secondSecret.utf8) ? "the new secret" : "A WRONG SECRET")"
    )

    let deleted = try keychain.delete(target, caller: caller)
    print("Deleted   \(deleted) item")
    do {
        _ = try keychain.copyMatching(read, caller: caller)
        print("The item is still there!")
    } catch {
        guard error.status == .itemNotFound else { throw error }
        print("Looked up again: \(error.status.name) (\(error.status.rawValue))")
    }

    // Every file of the keychain, searched for every value this run wrote.
    var bytes = 0
    var leaks: [String] = []
    let files = try keychainFiles(path)
    for file in files {
        let contents = try Data(contentsOf: URL(fileURLWithPath: file))
        bytes += contents.count
        for value in [firstSecret, secondSecret, service, account] where contents.range(of: Data(value.utf8)) != nil {
            leaks.append("\(value) in \(file)")
        }
    }
    let names = files.map { URL(fileURLWithPath: $0).lastPathComponent }.joined(separator: ", ")
    print(
        "Searched  \(files.count) files (\(names); \(bytes) bytes) for both secrets, the service and the account: "
            + (leaks.isEmpty ? "no plaintext found" : "FOUND \(leaks)"))
    let report = try keychain.verifyIntegrity()
    print("Integrity \(report)")
    if !leaks.isEmpty || !report.isHealthy { exit(1) }
}

do {
    try runDemo()
} catch {
    fail(error)
}
