import Foundation
import LatchkeyCrypto
import LatchkeyEngine
import LatchkeyFormats

/// The fuzz targets of other programs' files (LatchkeyFormats), seeded by files the real programs made:
/// gnome-keyring-daemon's login keyring (password "fuzz"), keepassxc-cli's databases (password "fuzz"; one
/// it saved with 100 AES-KDF rounds, so inputs get past the key), its XML exports, gzip's output, and the CSV
/// exports of Firefox, Chromium and Bitwarden.
extension FuzzTargets {
    static let formatNames = ["keyring", "kdbx", "kdbx-xml", "inflate", "csv"]

    /// Cheap enough for a fuzzer: a key derivation beyond these is refused. The seed keepassxc-cli saved with
    /// 100 AES-KDF rounds gets past the key; the one with a 1 MiB Argon2d stops at this check.
    static let kdbxLimits = KDBXLimits(
        argon2Memory: 64 << 10, argon2Iterations: 2, argon2Work: 1 << 20, argon2Lanes: 4, aesRounds: 10_000)

    static func runFormat(_ name: String, _ data: Data) -> Bool {
        switch name {
        case "keyring": keyring(data)
        case "kdbx": kdbx(data)
        case "kdbx-xml": kdbxXML(data)
        case "inflate": inflate(data)
        case "csv": csv(data)
        default: return false
        }
        return true
    }

    static func expectRefusal(_ error: KeychainError, _ statuses: [KeychainStatus]) {
        precondition(statuses.contains(error.status), "unexpected status \(error.status)")
        precondition(!(error.detail ?? "").isEmpty, "a refusal without a reason")
    }

    // MARK: keyring: GNOME Keyring's keyring files; what reads writes and reads back with the same items

    static func keyring(_ data: Data) {
        let password = Passphrase("fuzz")
        do throws(KeychainError) {
            let keyring = try KeyringFile.read([UInt8](data), password: password, maximumIterations: 4096)
            let again = try KeyringFile.read(try keyring.written(password: password, iterations: 1), password: password)
            precondition(again.items.map(\.label) == keyring.items.map(\.label), "labels changed on the way back")
            precondition(again.items.map(\.secret) == keyring.items.map(\.secret), "secrets changed on the way back")
        } catch {
            expectRefusal(error, [.decode, .authFailed, .param])
        }
    }

    // MARK: kdbx: KeePass databases, header to entries

    static func kdbx(_ data: Data) {
        do throws(KeychainError) {
            _ = try KDBXDatabase.read([UInt8](data), password: Passphrase("fuzz"), keyFile: nil, limits: kdbxLimits)
        } catch {
            expectRefusal(error, [.decode, .authFailed, .param])
        }
    }

    // MARK: kdbx-xml: a decrypted payload's XML into entries (protected values under a fixed ChaCha20 stream)

    static func kdbxXML(_ data: Data) {
        do throws(KeychainError) {
            let stream = try InnerStream(id: 3, key: [UInt8](repeating: 7, count: 64))
            let database = try KDBXDatabase.document(
                [UInt8](data), stream: stream, attachments: [[1, 2, 3]], headerHash: nil, what: "the XML")
            for entry in database.entries { _ = EntryMapping.item(for: entry, group: "fuzz") }
        } catch {
            expectRefusal(error, [.decode])
        }
    }

    // MARK: inflate: gzip and raw DEFLATE, bounded

    static func inflate(_ data: Data) {
        let bytes = [UInt8](data)
        do throws(KeychainError) {
            let output = try Inflate.gunzip(bytes, limit: 1 << 20, what: "the data")
            precondition(output.count <= 1 << 20, "the limit was passed")
        } catch {
            expectRefusal(error, [.decode])
        }
        var output: [UInt8] = []
        do throws(KeychainError) {
            _ = try Inflate.inflate(bytes, from: 0, into: &output, limit: 1 << 20, what: "the data")
        } catch {
            expectRefusal(error, [.decode])
        }
    }

    // MARK: csv: browsers' password exports into entries and items

    static func csv(_ data: Data) {
        do throws(KeychainError) {
            let (_, entries, _) = try BrowserExport.read([UInt8](data), what: "the export")
            for entry in entries {
                let item = EntryMapping.item(for: entry, group: "fuzz")
                // An entry whose URL the attributes give back keeps no URL beside them.
                if let address = InternetAddress.parse(entry.url), address.text == entry.url {
                    precondition(
                        item.attributes[AttributeKey.secretService("URL")] == nil
                            || item.attributes[AttributeKey.secretService("URL")] == .string(entry.url),
                        "a URL kept beside attributes that give it back")
                }
            }
        } catch {
            expectRefusal(error, [.decode])
        }
    }
}
