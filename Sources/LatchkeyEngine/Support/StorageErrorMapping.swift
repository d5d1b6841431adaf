internal import LatchkeyStorage

extension KeychainError {
    /// Maps a SQLite failure to Apple's status; SQLite's own message (never a bound value) is the detail.
    init(storage error: StorageError) {
        let detail = "SQLite: \(error.message)"
        if error.isDiskFull {
            self.init(.diskFull, "the disk is full; nothing was changed (\(detail))")
        } else if error.isBusy {
            self.init(.io, "the keychain file stayed locked by another process (\(detail))")
        } else if error.isCorruptOrForeign {
            self.init(.decode, "the keychain file is damaged (\(detail))")
        } else if error.isReadOnly {
            self.init(.readOnly, detail)
        } else if error.isOutOfMemory {
            self.init(.allocate, detail)
        } else if error.isTooBig {
            self.init(.param, "a value is too large (\(detail))")
        } else if error.isConstraintViolation {
            self.init(.duplicateItem, detail)
        } else if error.isIOError || error.isCantOpen {
            self.init(.io, detail)
        } else {
            self.init(.internal, detail)
        }
    }
}

/// Runs `body`, turning any error that is not already a `KeychainError` into one.
func mappingStorageErrors<T>(_ body: () throws -> T) throws(KeychainError) -> T {
    do {
        return try body()
    } catch let error as KeychainError {
        throw error
    } catch let error as StorageError {
        throw KeychainError(storage: error)
    } catch {
        throw KeychainError(.internal, "\(error)")
    }
}
