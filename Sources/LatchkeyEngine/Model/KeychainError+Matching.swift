/// Errors matched by status, as GRDB matches `DatabaseError` by result code:
///
/// ```swift
/// do {
///     try database.add(item, caller: caller)
/// } catch KeychainError.duplicateItem {
///     try database.update(query, with: changes, caller: caller)
/// }
/// ```
///
/// `KeychainError.itemNotFound` is the status; `~=` compares it with the error's. It matches any error that
/// is a `KeychainError`, so it works in `catch` clauses of untyped `throws` too.
extension KeychainError {
    /// Matches a `KeychainError` with status `KeychainStatus.unimplemented`: `catch KeychainError.unimplemented`.
    public static var unimplemented: KeychainStatus { KeychainStatus.unimplemented }
    /// Matches a `KeychainError` with status `KeychainStatus.diskFull`: `catch KeychainError.diskFull`.
    public static var diskFull: KeychainStatus { KeychainStatus.diskFull }
    /// Matches a `KeychainError` with status `KeychainStatus.io`: `catch KeychainError.io`.
    public static var io: KeychainStatus { KeychainStatus.io }
    /// Matches a `KeychainError` with status `KeychainStatus.param`: `catch KeychainError.param`.
    public static var param: KeychainStatus { KeychainStatus.param }
    /// Matches a `KeychainError` with status `KeychainStatus.writePermission`: `catch KeychainError.writePermission`.
    public static var writePermission: KeychainStatus { KeychainStatus.writePermission }
    /// Matches a `KeychainError` with status `KeychainStatus.allocate`: `catch KeychainError.allocate`.
    public static var allocate: KeychainStatus { KeychainStatus.allocate }
    /// Matches a `KeychainError` with status `KeychainStatus.userCanceled`: `catch KeychainError.userCanceled`.
    public static var userCanceled: KeychainStatus { KeychainStatus.userCanceled }
    /// Matches a `KeychainError` with status `KeychainStatus.notAvailable`: `catch KeychainError.notAvailable`.
    public static var notAvailable: KeychainStatus { KeychainStatus.notAvailable }
    /// Matches a `KeychainError` with status `KeychainStatus.readOnly`: `catch KeychainError.readOnly`.
    public static var readOnly: KeychainStatus { KeychainStatus.readOnly }
    /// Matches a `KeychainError` with status `KeychainStatus.authFailed`: `catch KeychainError.authFailed`.
    public static var authFailed: KeychainStatus { KeychainStatus.authFailed }
    /// Matches a `KeychainError` with status `KeychainStatus.noSuchKeychain`: `catch KeychainError.noSuchKeychain`.
    public static var noSuchKeychain: KeychainStatus { KeychainStatus.noSuchKeychain }
    /// Matches a `KeychainError` with status `KeychainStatus.invalidKeychain`: `catch KeychainError.invalidKeychain`.
    public static var invalidKeychain: KeychainStatus { KeychainStatus.invalidKeychain }
    /// Matches a `KeychainError` with status `KeychainStatus.duplicateKeychain`: `catch KeychainError.duplicateKeychain`.
    public static var duplicateKeychain: KeychainStatus { KeychainStatus.duplicateKeychain }
    /// Matches a `KeychainError` with status `KeychainStatus.duplicateItem`: `catch KeychainError.duplicateItem`.
    public static var duplicateItem: KeychainStatus { KeychainStatus.duplicateItem }
    /// Matches a `KeychainError` with status `KeychainStatus.itemNotFound`: `catch KeychainError.itemNotFound`.
    public static var itemNotFound: KeychainStatus { KeychainStatus.itemNotFound }
    /// Matches a `KeychainError` with status `KeychainStatus.dataTooLarge`: `catch KeychainError.dataTooLarge`.
    public static var dataTooLarge: KeychainStatus { KeychainStatus.dataTooLarge }
    /// Matches a `KeychainError` with status `KeychainStatus.noSuchAttribute`: `catch KeychainError.noSuchAttribute`.
    public static var noSuchAttribute: KeychainStatus { KeychainStatus.noSuchAttribute }
    /// Matches a `KeychainError` with status `KeychainStatus.invalidItemRef`: `catch KeychainError.invalidItemRef`.
    public static var invalidItemRef: KeychainStatus { KeychainStatus.invalidItemRef }
    /// Matches a `KeychainError` with status `KeychainStatus.noSuchClass`: `catch KeychainError.noSuchClass`.
    public static var noSuchClass: KeychainStatus { KeychainStatus.noSuchClass }
    /// Matches a `KeychainError` with status `KeychainStatus.noDefaultKeychain`: `catch KeychainError.noDefaultKeychain`.
    public static var noDefaultKeychain: KeychainStatus { KeychainStatus.noDefaultKeychain }
    /// Matches a `KeychainError` with status `KeychainStatus.interactionNotAllowed`: `catch KeychainError.interactionNotAllowed`.
    public static var interactionNotAllowed: KeychainStatus { KeychainStatus.interactionNotAllowed }
    /// Matches a `KeychainError` with status `KeychainStatus.dataNotAvailable`: `catch KeychainError.dataNotAvailable`.
    public static var dataNotAvailable: KeychainStatus { KeychainStatus.dataNotAvailable }
    /// Matches a `KeychainError` with status `KeychainStatus.decode`: `catch KeychainError.decode`.
    public static var decode: KeychainStatus { KeychainStatus.decode }
    /// Matches a `KeychainError` with status `KeychainStatus.internal`: `catch KeychainError.internal`.
    public static var `internal`: KeychainStatus { KeychainStatus.`internal` }
    /// Matches a `KeychainError` with status `KeychainStatus.missingEntitlement`: `catch KeychainError.missingEntitlement`.
    public static var missingEntitlement: KeychainStatus { KeychainStatus.missingEntitlement }
}

extension KeychainStatus {
    /// Whether `error` is a `KeychainError` with this status.
    public static func ~= (pattern: KeychainStatus, error: any Error) -> Bool {
        (error as? KeychainError)?.status == pattern
    }

    /// Whether `error` has this status (the same test without boxing, for typed `throws(KeychainError)`).
    public static func ~= (pattern: KeychainStatus, error: KeychainError) -> Bool {
        error.status == pattern
    }
}
