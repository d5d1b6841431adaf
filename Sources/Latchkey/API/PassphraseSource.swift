public import FoundationEssentials
internal import LatchkeyCrypto
import LatchkeyPOSIX

/// Where a keychain's passphrase comes from when the keychain has to be unlocked.
///
/// From the safest to the least safe: an interactive prompt (echo off), a file descriptor or key file
/// (mode 0600) that a parent process or a secrets manager provides, and the `LATCHKEY_PASSPHRASE`
/// environment variable — visible to every process that can read this one's environment, so meant for
/// throwaway automation only.
public enum PassphraseSource: Sendable, Hashable {
    /// Ask on the controlling terminal, echo off.
    case prompt
    /// Read one line from an open file descriptor (for example `3<passphrase-file` in a shell).
    case fileDescriptor(Int32)
    /// Read the first line of a file, which must not be readable by group or others.
    case keyFile(String)
    /// `LATCHKEY_PASSPHRASE` (the least safe source).
    case environment

    /// The environment variable read by `.environment`.
    public static let environmentVariable = "LATCHKEY_PASSPHRASE"

    /// The default order: the environment variable when it is set, else the terminal prompt.
    public static func automatic(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> PassphraseSource
    {
        environment[environmentVariable] != nil ? .environment : .prompt
    }

    /// Reads the passphrase. `errSecInteractionNotAllowed` when there is no terminal to prompt on;
    /// `errSecAuthFailed`-free: checking the passphrase is the keychain's job.
    public func read(
        prompt: String = "Keychain passphrase: ",
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(KeychainError)
        -> Passphrase
    {
        switch self {
        case .prompt:
            guard var bytes = Terminal.readHidden(prompt: prompt) else {
                throw KeychainError(
                    .interactionNotAllowed,
                    "no terminal to ask for the passphrase; set \(Self.environmentVariable) or pass a file descriptor")
            }
            defer { bytes.withUnsafeMutableBytes { wipeBytes($0) } }
            return Passphrase(bytes: bytes)
        case .fileDescriptor(let fd):
            guard var bytes = FileDescriptor(rawValue: fd).readLine() else {
                throw KeychainError.param("file descriptor \(fd) gave no passphrase")
            }
            defer { bytes.withUnsafeMutableBytes { wipeBytes($0) } }
            return Passphrase(bytes: bytes)
        case .keyFile(let path):
            var bytes = try Self.readKeyFile(path)
            defer { bytes.withUnsafeMutableBytes { wipeBytes($0) } }
            return Passphrase(bytes: bytes)
        case .environment:
            guard let value = environment[Self.environmentVariable] else {
                throw KeychainError.param("\(Self.environmentVariable) is not set")
            }
            return Passphrase(value)
        }
    }

    /// The largest key file read (a passphrase is a line, not a document).
    public static let maximumKeyFileBytes = 64 << 10

    /// The first line of a key file: a regular file (a FIFO or a device is refused at once, never waited
    /// on) of at most 64 KiB that no one but its owner may read.
    static func readKeyFile(_ path: String) throws(KeychainError) -> [UInt8] {
        guard let info = FileStatus.of(path: path) else {
            throw KeychainError.param("the key file \(path) does not exist")
        }
        guard info.kind == .regular else {
            throw KeychainError.param(
                "the key file \(path) is not a regular file (a symbolic link, a FIFO or a device)")
        }
        guard !info.isAccessibleByOthers else {
            throw KeychainError(
                .writePermission,
                "the key file \(path) is readable by others (mode \(info.octalPermissions)); run chmod 600 on it")
        }
        var contents: [UInt8]
        do throws(Files.ReadFailure) {
            contents = try Files.read(path, limit: maximumKeyFileBytes)
        } catch {
            switch error {
            case .tooLarge:
                throw KeychainError.param("the key file \(path) is larger than \(maximumKeyFileBytes >> 10) KiB")
            case .notRegularFile: throw KeychainError.param("the key file \(path) is not a regular file")
            case .system(let failure): throw KeychainError(.io, "cannot read the key file \(path): \(failure)")
            }
        }
        defer { contents.withUnsafeMutableBytes { wipeBytes($0) } }
        return Array(contents.prefix { $0 != UInt8(ascii: "\n") })
    }
}
