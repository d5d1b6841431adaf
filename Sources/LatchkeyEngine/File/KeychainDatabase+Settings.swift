import FoundationEssentials
internal import LatchkeyStorage

extension KeychainDatabase {
    /// Settings stored in the file.
    public var settings: KeychainSettings {
        get throws(KeychainError) {
            let (seconds, sleep) = try mappingStorageErrors {
                try pool.read { db in
                    (try MetaTable.value(.autoLockSeconds, in: db), try MetaTable.value(.lockOnSleep, in: db))
                }
            }
            return KeychainSettings(
                autoLockAfterSeconds: seconds.flatMap { String(data: $0, encoding: .utf8) }.flatMap { Int($0) },
                lockOnSleep: sleep == Data("1".utf8))
        }
    }

    /// Stores new settings.
    public func updateSettings(_ settings: KeychainSettings) throws(KeychainError) {
        try settings.validate()
        try mappingStorageErrors {
            try pool.write { db in
                if let seconds = settings.autoLockAfterSeconds {
                    try MetaTable.set(.autoLockSeconds, Data(String(seconds).utf8), in: db)
                } else {
                    try MetaTable.remove(.autoLockSeconds, in: db)
                }
                try MetaTable.set(.lockOnSleep, Data((settings.lockOnSleep ? "1" : "0").utf8), in: db)
            }
        }
    }
}
