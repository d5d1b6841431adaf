import Foundation
import Latchkey
import LatchkeyPOSIX

/// The keychain a credential helper uses: the default keychain (`LATCHKEY_KEYCHAIN`, else
/// `$XDG_DATA_HOME/latchkey/login.keychain`), through the agent when it serves the helper, else opened in the
/// helper's own process with the passphrase (`LATCHKEY_PASSPHRASE`, else a prompt on the terminal; with no
/// terminal, `errSecInteractionNotAllowed` at once, never a wait). The Latchkey library makes that choice
/// (`KeychainConnection`, `AgentRouting`); the helper only names itself.
struct HelperKeychain {
    /// The keychain file.
    let path: String
    /// The typed seam every operation goes through.
    let service: any KeychainService

    /// The keychain for the helper called `name` (its application identifier, and so the access group its
    /// items go to, unless `LATCHKEY_APPLICATION_ID` names another).
    ///
    /// The agent, when one serves the keychain, is met first, while this process can still be identified by
    /// it (the agent reads the executable behind its peer); from then on the process is not dumpable, so no
    /// other process of the user may read the secrets it is about to handle.
    static func open(as name: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(KeychainError) -> HelperKeychain
    {
        let path = KeychainLocation.defaultPath(environment: environment)
        let identifier = environment["LATCHKEY_APPLICATION_ID"].flatMap { $0.isEmpty ? nil : $0 } ?? name
        _ = try AgentRouting.client(for: path, environment: environment)
        do {
            try Processes.setNotDumpable()
        } catch {
            // Not fatal: the helper still works; the user is told that its memory is less guarded.
            FileHandle.standardError.write(
                Data("\(name): warning: cannot protect this process's memory (\(error))\n".utf8))
        }
        let connection = KeychainConnection.embedded(
            path: path, passphrase: .automatic(environment: environment), applicationIdentifier: identifier)
        return HelperKeychain(path: path, service: connection.service(accessGroups: []))
    }

    /// Whether there is a keychain to read: its file exists (a helper asked for nothing creates none).
    var exists: Bool { FileManager.default.fileExists(atPath: path) }
}
