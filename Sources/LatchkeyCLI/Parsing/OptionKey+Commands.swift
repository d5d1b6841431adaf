/// Every option of the tool, by what it means, with its letter and long name: the one place they are written.
/// A letter that means one thing in one command and another in the next is two keys (`-a`: `.account`,
/// `.everyKeychain`, `.allMatches`, `.algorithm`…); an option spelt and meaning the same in several commands
/// is one key (`--access-group`, `--passphrase-fd`), whose help each command words for itself.
extension OptionKey {
    // MARK: Every command

    static let help = OptionKey(short: "h", long: "help")

    // MARK: Shared by several commands

    static let passphraseFD = OptionKey(long: "passphrase-fd")
    static let passphraseFile = OptionKey(long: "passphrase-file")
    /// `-k, --keychain`: the keychain of the commands Latchkey adds.
    static let keychain = OptionKey(short: "k", long: "keychain")
    /// `-k` alone: the keychain of `security`'s commands that take it as an option.
    static let keychainShort = OptionKey(short: "k")
    static let accessGroup = OptionKey(long: "access-group")
    static let kdfMemory = OptionKey(long: "kdf-memory")
    static let kdfPasses = OptionKey(long: "kdf-passes")
    static let keyPassphraseFD = OptionKey(long: "key-passphrase-fd")
    static let recoveryCodeFD = OptionKey(long: "recovery-code-fd")
    static let unattended = OptionKey(long: "unattended")
    static let json = OptionKey(long: "json")
    static let item = OptionKey(long: "item")
    static let dryRun = OptionKey(long: "dry-run")

    // MARK: Keychains

    /// `-p`: a passphrase on the command line (create-, unlock-keychain; the new one of set-keychain-password).
    static let passphrase = OptionKey(short: "p")
    static let oldPassphrase = OptionKey(short: "o")
    static let newPassphraseFD = OptionKey(long: "new-passphrase-fd")
    static let domain = OptionKey(short: "d")
    static let searchList = OptionKey(short: "s")
    static let setDefault = OptionKey(short: "s")
    static let everyKeychain = OptionKey(short: "a")
    static let noPassphrase = OptionKey(short: "u")
    static let noAgent = OptionKey(long: "no-agent")
    /// `unlock-keychain --derived-key-fd`: pam_latchkey's early derivation.
    static let derivedKeyFD = OptionKey(long: "derived-key-fd")
    static let lockOnSleep = OptionKey(short: "l")
    static let lockAfterTimeout = OptionKey(short: "u")
    static let timeout = OptionKey(short: "t")

    // MARK: Passwords

    static let account = OptionKey(short: "a")
    static let serviceOrServer = OptionKey(short: "s")
    static let creator = OptionKey(short: "c")
    static let typeCode = OptionKey(short: "C")
    static let kind = OptionKey(short: "D")
    static let comment = OptionKey(short: "j")
    static let label = OptionKey(short: "l")
    static let generic = OptionKey(short: "G")
    static let securityDomain = OptionKey(short: "d")
    static let path = OptionKey(short: "p")
    static let port = OptionKey(short: "P")
    static let protocolCode = OptionKey(short: "r")
    static let authenticationType = OptionKey(short: "t")
    static let synchronizable = OptionKey(long: "synchronizable")
    static let password = OptionKey(short: "w")
    /// add-generic-password's `-p`, the legacy form of `-w`.
    static let legacyPassword = OptionKey(short: "p")
    static let passwordHex = OptionKey(short: "X")
    static let passwordFD = OptionKey(long: "password-fd")
    static let passwordStdin = OptionKey(long: "password-stdin")
    static let update = OptionKey(short: "U")
    static let anyApplication = OptionKey(short: "A")
    static let trustedApplication = OptionKey(short: "T")
    static let accessibility = OptionKey(long: "accessibility")
    static let printPassword = OptionKey(short: "g")
    static let passwordOnly = OptionKey(short: "w")
    /// delete-…-password's `-g`, accepted and ignored.
    static let ignoredPrintPassword = OptionKey(short: "g")

    // MARK: Certificates and identities

    static let allMatches = OptionKey(short: "a")
    static let commonName = OptionKey(short: "c")
    static let email = OptionKey(short: "e")
    static let printEmail = OptionKey(short: "m")
    static let pem = OptionKey(short: "p")
    static let printHashes = OptionKey(short: "Z")
    static let sha1Hash = OptionKey(short: "Z")
    static let trustSettings = OptionKey(short: "t")
    static let policy = OptionKey(short: "p")
    static let host = OptionKey(short: "s")
    static let validOnly = OptionKey(short: "v")
    static let certificateFile = OptionKey(short: "c")
    static let rootFile = OptionKey(short: "r")
    static let clientCertificate = OptionKey(short: "C")
    static let date = OptionKey(short: "d")
    static let quiet = OptionKey(short: "q")
    static let noNetwork = OptionKey(short: "L")
    static let algorithm = OptionKey(short: "a")
    static let keySize = OptionKey(short: "s")
    static let tag = OptionKey(long: "tag")

    // MARK: Applications and access

    static let appID = OptionKey(long: "app-id")
    static let wildcard = OptionKey(long: "wildcard")
    static let accessService = OptionKey(short: "s", long: "service")
    static let accessServer = OptionKey(long: "server")
    static let accessAccount = OptionKey(short: "a", long: "account")

    // MARK: log

    static let program = OptionKey(long: "program")
    static let since = OptionKey(long: "since")

    // MARK: ssh-key

    static let keyType = OptionKey(short: "t")
    static let confirm = OptionKey(long: "confirm")
    static let approvalSeconds = OptionKey(long: "approval-seconds")
    static let approvalScope = OptionKey(long: "approval-scope")
    static let programs = OptionKey(long: "programs")
    static let keyPassphraseFile = OptionKey(long: "key-passphrase-file")

    // MARK: tpm

    static let pcrs = OptionKey(long: "pcrs")
    static let policyKey = OptionKey(long: "policy-key")
    static let signingKey = OptionKey(long: "key")
    static let pcr = OptionKey(long: "pcr")
    static let policyOutput = OptionKey(long: "output")
    static let noTPM = OptionKey(long: "no-tpm")
    static let setLockoutAuth = OptionKey(long: "set-lockout-auth")
    static let leaveLockoutAuth = OptionKey(long: "leave-lockout-auth")

    // MARK: dump-keychain

    static let dumpSecrets = OptionKey(short: "d")
    static let accessControlLists = OptionKey(short: "a")
    static let raw = OptionKey(short: "r")

    // MARK: export and import

    static let output = OptionKey(short: "o", long: "output")
    static let includeThisDeviceOnly = OptionKey(long: "include-this-device-only")
    static let toSecretService = OptionKey(long: "to-secret-service")
    static let toFormat = OptionKey(long: "to")
    static let filePassphraseFD = OptionKey(long: "file-passphrase-fd")
    static let backupPassphraseFD = OptionKey(long: "backup-passphrase-fd")
    static let input = OptionKey(short: "i", long: "input")
    static let onConflict = OptionKey(long: "on-conflict")
    static let allowExpensiveKDF = OptionKey(long: "allow-expensive-kdf")
    static let fromSecretService = OptionKey(long: "from-secret-service")
    static let fromFormat = OptionKey(long: "from")
    static let keyFile = OptionKey(long: "key-file")
    /// `-t` of `security`'s import and export: what the file holds.
    static let pkiType = OptionKey(short: "t")
    /// `-f` of `security`'s import and export: the file's format.
    static let pkiFormat = OptionKey(short: "f")
    /// `-P`: the passphrase of a PKCS #12 file or of private keys, on the command line.
    static let keyPassphrase = OptionKey(short: "P")

    // MARK: backup

    static let snapshotDirectory = OptionKey(long: "directory")
    static let keep = OptionKey(long: "keep")
    static let at = OptionKey(long: "at")
    static let verify = OptionKey(long: "verify")
    static let snapshotPassphraseFD = OptionKey(long: "snapshot-passphrase-fd")

    // MARK: doctor

    static let noUnlock = OptionKey(long: "no-unlock")
    static let desktop = OptionKey(long: "desktop")

    // MARK: sync

    static let syncServer = OptionKey(long: "server")
    static let deviceName = OptionKey(long: "name")
    static let vault = OptionKey(long: "vault")
    static let recoveryCodeFile = OptionKey(long: "recovery-code-file")
    static let wait = OptionKey(long: "wait")
    static let restore = OptionKey(long: "restore")
    static let drop = OptionKey(long: "drop")
    static let collectTombstones = OptionKey(long: "collect-tombstones")
}
