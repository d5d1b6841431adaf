import Latchkey
import LatchkeySync

/// `latchkey sync`'s exit statuses and messages: each cause of failure its own status and a message that
/// names the cause first and then what to do. The one table behind `latchkey help sync`, the manual page
/// and docs/SYNC.md ("Exit statuses"); a failure of the keychain itself (a wrong passphrase, nobody to ask
/// for it) keeps the tool's rule: the low byte of its status.
enum SyncExitStatus {
    static let usage: Int32 = 64
    static let refusedRows: Int32 = 65
    static let serverUnreachable: Int32 = 69
    static let awaitingApproval: Int32 = 75
    static let serverRefused: Int32 = 76
    static let deviceRemoved: Int32 = 77
    static let configuration: Int32 = 78
    static let noVault: Int32 = 79
    static let wrongRecoveryCode: Int32 = 80
    static let noSuchJoinCode: Int32 = 81
    static let noSuchName: Int32 = 82

    /// Every status `latchkey sync` may exit with, and what it means.
    static let table: [(status: Int32, meaning: String)] = [
        (0, "Done (status also when the server cannot be reached: it says so)."),
        (usage, "A usage error: an unknown action or option, a bad value, or a connection string libpq cannot parse."),
        (
            refusedRows,
            "The round ran, but refused rows that did not verify (altered, replayed or forged): sync status lists them."
        ),
        (serverUnreachable, "The server cannot be reached, or refused the connection."),
        (awaitingApproval, "This device waits for a device of the vault to approve it (sync approve CODE there)."),
        (serverRefused, "The server answered with an error, or sent a vault key that does not verify."),
        (deviceRemoved, "This device was removed from the vault, or the server does not know it."),
        (configuration, "This keychain is not set up for sync (setup or join), or is set up already (leave first)."),
        (
            noVault,
            "join: the server holds no vault, several (name one with --vault), or not the one named; or its device name is taken."
        ),
        (wrongRecoveryCode, "join: the recovery code is not this vault's, or is not a recovery code."),
        (noSuchJoinCode, "approve: no device waiting to join shows that code."),
        (
            noSuchName,
            "remove-device or conflicts: the vault has no device of that name, or there is no conflict of that number."
        ),
        (
            51,
            "The keychain's passphrase is wrong (36: none was given and there is no terminal to ask on; as every command)."
        ),
    ]

    /// The failure to report for a sync error: its message (the cause first) and status; nil for an error
    /// of the keychain itself, which keeps the tool's rule.
    static func failure(for error: KeychainError) -> CommandFailure? {
        guard let cause = error.syncFailure else { return nil }
        let detail = error.detail ?? error.message
        switch cause {
        case .notSetUp:
            return CommandFailure(
                message: "this keychain is not set up for sync: run latchkey sync setup, or latchkey sync join",
                exitStatus: configuration)
        case .alreadySetUp:
            return CommandFailure(
                message: "this keychain is set up for sync already: latchkey sync leave first",
                exitStatus: configuration)
        case .malformedServer:
            return CommandFailure(
                message:
                    "the connection string is not one libpq can read: \(stripped(detail, "the sync server's connection string: "))",
                exitStatus: usage)
        case .serverUnreachable:
            return CommandFailure(
                message: "cannot reach the sync server: \(stripped(detail, "the sync server: "))",
                exitStatus: serverUnreachable)
        case .serverRefused:
            return CommandFailure(
                message: "the sync server refused: \(stripped(detail, "the sync server: "))", exitStatus: serverRefused)
        case .forgedKey:
            return CommandFailure(
                message: "a vault key from the server does not verify: \(detail)", exitStatus: serverRefused)
        case .noVault, .deviceNameTaken:
            return CommandFailure(message: detail, exitStatus: noVault)
        case .wrongRecoveryCode:
            return CommandFailure(message: "wrong recovery code: \(detail)", exitStatus: wrongRecoveryCode)
        case .deviceRemoved:
            return CommandFailure(
                message:
                    "\(detail): it gets no new keys and its pushes are refused; latchkey sync leave, then join again",
                exitStatus: deviceRemoved)
        case .awaitingApproval:
            return CommandFailure(message: detail, exitStatus: awaitingApproval)
        case .noSuchJoinCode:
            return CommandFailure(
                message: "\(detail); latchkey sync approve without a code lists the devices waiting",
                exitStatus: noSuchJoinCode)
        case .noSuchDevice:
            return CommandFailure(message: "\(detail); latchkey sync status lists the devices", exitStatus: noSuchName)
        case .noSuchConflict:
            return CommandFailure(message: "\(detail); latchkey sync conflicts lists them", exitStatus: noSuchName)
        }
    }

    private static func stripped(_ detail: String, _ prefix: String) -> String {
        detail.hasPrefix(prefix) ? String(detail.dropFirst(prefix.count)) : detail
    }
}
