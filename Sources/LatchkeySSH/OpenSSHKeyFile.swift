import FoundationEssentials
package import LatchkeyCrypto
import LatchkeyPKI

/// OpenSSH's private key file (`-----BEGIN OPENSSH PRIVATE KEY-----`, the "openssh-key-v1" format ssh-keygen
/// writes since OpenSSH 7.8), read into keys Latchkey can hold: `openssh-key-v1\0`, the cipher and the key
/// derivation (`none`, or `bcrypt` with its salt and rounds), one public key, and the private section —
/// two equal check words, the key, its comment and padding 1, 2, 3… — encrypted under bcrypt_pbkdf of the
/// passphrase with aes128/192/256-ctr, aes128/192/256-cbc or aes256-gcm@openssh.com.
package struct OpenSSHKeyFile: Sendable {
    /// Why a key file could not be read. A wrong passphrase is told apart (the check words differ, or GCM's
    /// tag does not authenticate).
    package enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        case notAKeyFile
        case malformed(String)
        case unsupported(String)
        case passphraseNeeded
        case wrongPassphrase

        package var description: String {
            switch self {
            case .notAKeyFile: "not an OpenSSH private key file (-----BEGIN OPENSSH PRIVATE KEY-----)"
            case .malformed(let reason): "the key file is damaged: \(reason)"
            case .unsupported(let what): "\(what) is not supported"
            case .passphraseNeeded: "the key file is encrypted: its passphrase is needed"
            case .wrongPassphrase: "the passphrase does not open the key file"
            }
        }
    }

    static let beginLine = "-----BEGIN OPENSSH PRIVATE KEY-----"
    static let endLine = "-----END OPENSSH PRIVATE KEY-----"
    static let magic = Array("openssh-key-v1".utf8) + [0]

    /// The ciphers, by name: key length, IV length, block size, tag length and mode.
    private static let ciphers: [String: (key: Int, iv: Int, block: Int, tag: Int, mode: Mode)] = [
        "none": (0, 0, 8, 0, .none),
        "aes128-ctr": (16, 16, 16, 0, .ctr), "aes192-ctr": (24, 16, 16, 0, .ctr), "aes256-ctr": (32, 16, 16, 0, .ctr),
        "aes128-cbc": (16, 16, 16, 0, .cbc), "aes192-cbc": (24, 16, 16, 0, .cbc), "aes256-cbc": (32, 16, 16, 0, .cbc),
        "aes256-gcm@openssh.com": (32, 12, 16, 16, .gcm),
    ]
    private enum Mode { case none, ctr, cbc, gcm }

    /// The key's public half, as the file's envelope names it (readable without the passphrase).
    package let publicKey: SSHPublicKey
    /// Whether the private section is encrypted.
    package let isEncrypted: Bool
    private let cipherName: String
    private let salt: Data
    private let rounds: Int
    private let encrypted: Data
    private let tag: Data

    /// Reads a file's envelope; `Failure` when it is not an OpenSSH key file or is malformed.
    package init(_ text: String) throws(Failure) {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace(newlines: false) }
        guard let begin = lines.firstIndex(of: Self.beginLine), let end = lines.firstIndex(of: Self.endLine),
            begin < end
        else {
            throw .notAKeyFile
        }
        guard let decoded = Data(base64Encoded: lines[(begin + 1)..<end].joined()), decoded.starts(with: Self.magic)
        else {
            throw .malformed("its base64 is not an openssh-key-v1 key")
        }
        var reader = SSHReader(decoded.dropFirst(Self.magic.count))
        do {
            cipherName = try reader.text("the cipher")
            let kdf = try reader.text("the key derivation")
            var options = try reader.nested("the key derivation's options")
            guard try reader.uint32("the number of keys") == 1 else {
                throw Failure.unsupported("a key file of several keys")
            }
            publicKey = try SSHPublicKey(blob: try reader.string("the public key"))
            encrypted = try reader.string("the private section")
            guard let cipher = Self.ciphers[cipherName] else {
                throw Failure.unsupported("the cipher \(cipherName.prefix(64))")
            }
            tag = try reader.string(cipher.tag) ?? Data()
            try reader.expectEnd("the key")
            switch kdf {
            case "none":
                guard cipherName == "none" else {
                    throw Failure.malformed("an encrypted section without a key derivation")
                }
                salt = Data()
                rounds = 0
            case "bcrypt":
                salt = try options.string("the salt")
                rounds = Int(try options.uint32("the rounds"))
                try options.expectEnd("the bcrypt options")
                guard rounds >= 1, rounds <= BcryptPBKDF.maximumRounds, !salt.isEmpty, salt.count <= 1_024 else {
                    throw Failure.unsupported(
                        "bcrypt with \(rounds) rounds and a \(salt.count)-byte salt (at most \(BcryptPBKDF.maximumRounds) rounds)"
                    )
                }
            default:
                throw Failure.unsupported("the key derivation \(kdf.prefix(64))")
            }
            guard encrypted.count >= cipher.block, encrypted.count % cipher.block == 0 else {
                throw Failure.malformed("the private section is not whole blocks of the cipher")
            }
            isEncrypted = cipherName != "none"
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .malformed("\(error)")  // An SSHWireError: what was cut short or wrong.
        }
    }

    /// The private key and its comment, opened with `passphrase` when the file is encrypted.
    package func privateKey(passphrase: SecureBytes?) throws(Failure) -> (key: SSHPrivateKey, comment: String) {
        guard let cipher = Self.ciphers[cipherName] else { throw .unsupported("the cipher \(cipherName)") }
        let section: SecureBytes
        if cipher.mode == .none {
            section = encrypted.withUnsafeBytes { SecureBytes(copying: $0) }
        } else {
            guard let passphrase, passphrase.count > 0 else { throw .passphraseNeeded }
            guard
                let derived = BcryptPBKDF.derive(
                    passphrase: passphrase, salt: salt, rounds: rounds, length: cipher.key + cipher.iv)
            else {
                throw .malformed("bcrypt_pbkdf refuses its parameters")
            }
            let key = derived.withUnsafeBytes {
                SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<cipher.key]))
            }
            let iv = derived.withUnsafeBytes { Data($0[cipher.key..<(cipher.key + cipher.iv)]) }
            let opened: SecureBytes? =
                switch cipher.mode {
                case .gcm: KeyFileCipher.aesGCMOpen(key: key, iv: iv, ciphertext: encrypted, tag: tag)
                default:
                    KeyFileCipher.aesDecrypt(counterMode: cipher.mode == .ctr, key: key, iv: iv, ciphertext: encrypted)
                }
            guard let opened else {
                throw cipher.mode == .gcm ? .wrongPassphrase : .malformed("the private section cannot be decrypted")
            }
            section = opened
        }
        var plain = section.withUnsafeBytes { Data($0) }
        defer { plain.resetBytes(in: 0..<plain.count) }
        var reader = SSHReader(plain)
        do throws(SSHWireError) {
            guard try reader.uint32("a check word") == (try reader.uint32("a check word")) else {
                throw SSHWireError("wrong")
            }
        } catch {
            throw .wrongPassphrase  // The check words differ: the passphrase decrypted nothing.
        }
        do throws(SSHWireError) {
            let key = try SSHPrivateKey.read(&reader)
            let comment = try reader.text("the comment")
            var expected: UInt8 = 1
            while !reader.isAtEnd {
                guard try reader.byte("padding") == expected else { throw SSHWireError("its padding is not 1, 2, 3…") }
                expected &+= 1
            }
            guard key.publicKey.blob == publicKey.blob else {
                throw SSHWireError("the private key is not the envelope's public key's")
            }
            return (key, comment)
        } catch {
            throw .malformed(error.reason)
        }
    }
}

private extension SSHReader {
    /// `count` raw bytes (nil for none).
    mutating func string(_ count: Int) throws(SSHWireError) -> Data? {
        guard count > 0 else { return nil }
        guard remaining >= count else { throw SSHWireError("the tag is cut short") }
        var bytes = Data()
        for _ in 0..<count { bytes.append(try byte("the tag")) }
        return bytes
    }
}
