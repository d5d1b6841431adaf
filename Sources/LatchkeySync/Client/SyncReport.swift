/// What one sync round did.
package struct SyncReport: Sendable, Equatable {
    /// Rows the server accepted from this device.
    package var pushed = 0
    /// Rows pulled from the server.
    package var pulled = 0
    /// Other devices' versions written to this keychain.
    package var applied = 0
    /// Versions that lost and were kept as conflict records.
    package var conflicts = 0
    /// Rows refused on verification.
    package var rejected = 0
    /// Rows kept in the inbox until unlock, and local changes not pushed while their class is locked.
    package var waiting = 0
    /// Whether the round resynchronised in full (this device came back after tombstones were collected).
    package var fullResync = false
    /// Whether the server was found older than this device's last pull (restored from a backup): the round
    /// pushed again what it lost and read everything again.
    package var serverWentBack = false

    package init() {}
}

/// A device of the vault as `latchkey sync status` shows it.
package struct SyncDeviceStatus: Sendable, Equatable {
    package var name: String
    package var state: String
    package var lastSeen: String
    package var isThisDevice: Bool
    /// Whether its approval tag verifies under this device's vault keys (a device the server slipped in does not).
    package var verified: Bool
}
