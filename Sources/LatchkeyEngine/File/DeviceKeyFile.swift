import FoundationEssentials
internal import LatchkeyCrypto
import LatchkeyPOSIX

/// The device key: a random key in a 0600 file beside the keychain (`<keychain>.device-key`) that wraps
/// the `dk`/`dku` class keys and the index key, so "always" items open without the passphrase.
///
/// What it protects against, honestly: someone who copies the keychain file alone (a backup, a synced
/// folder) cannot read `dk` items or confirm guesses of attribute values. Someone who can read both files
/// — any process of the same user — can read `dk`/`dku` items; that is what "always available" means.
enum DeviceKeyFile {
    private static let magic = Data("LKDEVK01".utf8)
    private static let length = 8 + 16 + 32

    static func path(forKeychain path: String) -> String { path + ".device-key" }

    /// `magic ‖ keychain id ‖ key`.
    static func contents(keychainID: Data, key: SecureBytes) -> Data {
        var data = magic + keychainID
        key.withUnsafeBytes { data.append(contentsOf: $0) }
        return data
    }

    /// The key in the file when it belongs to `keychainID`; nil when the file is missing or belongs to
    /// another keychain. A file anyone but its owner could read (or write) is refused, as ssh refuses such
    /// a private key: someone who copied it could read every "always" item of a copy of the keychain.
    static func read(path: String, keychainID: Data) throws(KeychainError) -> SecureBytes? {
        guard FileSystem.exists(path) else { return nil }
        try FileSystem.requirePrivateFile(path, what: "device key file")
        var contents = try FileSystem.readSmallFile(path, limit: length)
        defer { contents.withUnsafeMutableBytes { wipeBytes($0) } }
        guard contents.count == length, contents.prefix(8) == magic,
            contents.dropFirst(8).prefix(16) == keychainID
        else { return nil }
        return contents.suffix(32).withUnsafeBytes { SecureBytes(copying: $0) }
    }

    /// Writes the file through a temporary name and a rename, replacing a stale one.
    static func write(path: String, keychainID: Data, key: SecureBytes) throws(KeychainError) {
        let temporary = path + ".tmp-" + Hex.encode(SecureRandom.bytes(6))
        var data = contents(keychainID: keychainID, key: key)
        defer { data.withUnsafeMutableBytes { wipeBytes($0) } }
        try FileSystem.createExclusiveFile(temporary, contents: data)
        do {
            try FileSystem.replace(path, with: temporary)
        } catch {
            try? FileSystem.removeFile(temporary)  // Cleanup only; the rename error is what the caller sees.
            throw error
        }
    }

    static func associatedData(keychainID: Data) -> Data { Data("latchkey/v1/device-keybag".utf8) + keychainID }
}
