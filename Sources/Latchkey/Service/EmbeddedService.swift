import FoundationEssentials
import LatchkeyEngine
import Synchronization

/// The keychain files this process has opened in embedded mode, each opened and unlocked once.
final class EmbeddedKeychains: Sendable {
    static let shared = EmbeddedKeychains()
    private let open = Mutex<[String: KeychainDatabase]>([:])

    func database(path: String, passphrase: PassphraseSource) throws(KeychainError) -> KeychainDatabase {
        let key = FileSystem.standardizedPath(path)
        if let cached = open.withLock({ $0[key] }) { return cached }
        // Opening may prompt and runs Argon2id: done outside the lock; a racing opener's handle is dropped.
        let database = try Self.openOrCreate(path: key, passphrase: passphrase)
        return open.withLock { opened in
            if let existing = opened[key] { return existing }
            opened[key] = database
            return database
        }
    }

    /// Whether `path` is open in this process.
    func isOpen(path: String) -> Bool {
        let key = FileSystem.standardizedPath(path)
        return open.withLock { $0[key] != nil }
    }

    /// Forgets every handle (for tests that delete keychain files).
    func removeAll() { open.withLock { $0.removeAll() } }

    private static func openOrCreate(path: String, passphrase: PassphraseSource) throws(KeychainError)
        -> KeychainDatabase
    {
        if FileSystem.exists(path) {
            let database = try KeychainDatabase.open(at: path)
            try database.unlock(with: try passphrase.read(prompt: "Passphrase for keychain \(path): "))
            return database
        }
        let chosen = try passphrase.read(prompt: "New passphrase for keychain \(path): ")
        if passphrase == .prompt {
            let again = try passphrase.read(prompt: "Repeat the new passphrase: ")
            guard again == chosen else { throw KeychainError.param("the two passphrases differ") }
        }
        do {
            return try KeychainDatabase.create(at: path, passphrase: chosen)
        } catch {
            // Another process created it meanwhile: open theirs.
            guard error.status == .duplicateKeychain else { throw error }
            let database = try KeychainDatabase.open(at: path)
            try database.unlock(with: chosen)
            return database
        }
    }
}

/// `KeychainService` on a keychain this process opens itself on first use (and unlocks with the passphrase
/// from its `PassphraseSource`), as the caller — whose identifier may come from the program's file name, so
/// it is checked like any name: never the wildcard.
struct EmbeddedService: KeychainService {
    let path: String
    let passphrase: PassphraseSource
    let caller: CallerIdentity

    func local() throws(KeychainError) -> LocalKeychainService {
        try CallerIdentity.validate(name: caller.applicationIdentifier, as: "the application identifier")
        return LocalKeychainService(
            database: try EmbeddedKeychains.shared.database(path: path, passphrase: passphrase), caller: caller,
            presence: TerminalPresence())
    }

    /// Whether this process has the keychain open already.
    var isOpen: Bool { EmbeddedKeychains.shared.isOpen(path: path) }

    func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply { try local().perform(request) }
}
