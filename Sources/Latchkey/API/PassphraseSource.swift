public import Foundation
internal import LatchkeyCrypto

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
    public static func automatic(environment: [String: String] = ProcessInfo.processInfo.environment) -> PassphraseSource {
        environment[environmentVariable] != nil ? .environment : .prompt
    }

    /// Reads the passphrase. `errSecInteractionNotAllowed` when there is no terminal to prompt on;
    /// `errSecAuthFailed`-free: checking the passphrase is the keychain's job.
    public func read(prompt: String = "Keychain passphrase: ",
                     environment: [String: String] = ProcessInfo.processInfo.environment) throws(KeychainError)
        -> Passphrase
    {
        switch self {
        case .prompt:
            guard let bytes = TerminalInput.readHidden(prompt: prompt) else {
                throw KeychainError(.interactionNotAllowed,
                                    "no terminal to ask for the passphrase; set \(Self.environmentVariable) or pass a file descriptor")
            }
            return Passphrase(bytes: bytes)
        case .fileDescriptor(let fd):
            guard let bytes = TerminalInput.readLine(fileDescriptor: fd) else {
                throw KeychainError.param("file descriptor \(fd) gave no passphrase")
            }
            return Passphrase(bytes: bytes)
        case .keyFile(let path):
            guard let info = FileSystem.status(path) else {
                throw KeychainError.param("the key file \(path) does not exist")
            }
            guard info.permissions & 0o077 == 0 else {
                throw KeychainError(.writePermission, "the key file \(path) is readable by others (mode 0\(String(info.permissions & 0o777, radix: 8))); run chmod 600 on it")
            }
            var contents = try FileSystem.readSmallFile(path, limit: 64 << 10)
            defer { contents.withUnsafeMutableBytes { wipeBytes($0) } }
            let line = contents.prefix { $0 != UInt8(ascii: "\n") }
            return Passphrase(bytes: Array(line))
        case .environment:
            guard let value = environment[Self.environmentVariable] else {
                throw KeychainError.param("\(Self.environmentVariable) is not set")
            }
            return Passphrase(value)
        }
    }
}
