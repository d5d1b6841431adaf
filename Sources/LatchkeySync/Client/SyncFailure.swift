package import LatchkeyEngine

/// Why a sync call failed, beyond its keychain status (which stays the one the library and the agent
/// switch on): the causes `latchkey sync` tells apart in its exit statuses and messages (docs/SYNC.md,
/// "Exit statuses"). Carried as the error's `reason` ("sync.deviceRemoved").
package enum SyncFailure: String, Sendable, CaseIterable {
    /// The keychain has no sync configuration (errSecNotAvailable).
    case notSetUp
    /// setup or join on a keychain set up already (errSecDuplicateItem).
    case alreadySetUp
    /// libpq cannot parse the connection string (errSecParam).
    case malformedServer
    /// The server cannot be reached, or refused the connection (errSecNotAvailable).
    case serverUnreachable
    /// The server answered with an error, or a schema newer than this Latchkey (errSecIO).
    case serverRefused
    /// A vault key from the server does not verify: sealed wrong, or forged (errSecAuthFailed).
    case forgedKey
    /// join: the server holds no vault, several (name one with --vault), or not the one named (errSecParam, errSecItemNotFound).
    case noVault
    /// join: the vault has a device of that name already (errSecDuplicateItem).
    case deviceNameTaken
    /// join: the recovery code is not this vault's, or not a recovery code at all (errSecAuthFailed, errSecParam).
    case wrongRecoveryCode
    /// This device was removed from the vault, or the server does not know it (errSecAuthFailed).
    case deviceRemoved
    /// This device waits for a device of the vault to approve it (errSecInteractionNotAllowed).
    case awaitingApproval
    /// approve: no device waiting to join shows the code (errSecItemNotFound).
    case noSuchJoinCode
    /// remove-device: the vault has no device of that name (errSecItemNotFound).
    case noSuchDevice
    /// conflicts --restore/--drop: there is no conflict of that number (errSecItemNotFound).
    case noSuchConflict

    /// An error of this cause, with its keychain status and detail.
    package func error(_ status: KeychainStatus, _ detail: String) -> KeychainError {
        KeychainError(status, detail, reason: "sync." + rawValue)
    }
}

extension KeychainError {
    /// The sync cause of this error, when sync threw it with one.
    package var syncFailure: SyncFailure? {
        guard let reason, reason.hasPrefix("sync.") else { return nil }
        return SyncFailure(rawValue: String(reason.dropFirst("sync.".count)))
    }
}
