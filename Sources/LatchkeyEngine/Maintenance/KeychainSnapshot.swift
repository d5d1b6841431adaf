package import FoundationEssentials
internal import LatchkeyCrypto

/// One versioned snapshot of a keychain, as `latchkeyd` keeps them (and `latchkey backup now` takes one):
/// the keychain's own database, copied in one read transaction, so every item in it is sealed as in the
/// keychain and opens only with the keychain's passphrase of that time. The file says when it was taken,
/// how far the change feed had come, how many items it holds and which keychain it is of; a BLAKE2b-256
/// digest of everything before it ends the file, so a changed byte or a truncated file is found before
/// anything is restored from it.
///
/// Layout: `"LKSNAPSH"`, format version (1 byte), the time taken (milliseconds since 1970, 8 bytes), the
/// change feed's last sequence (8), the live items (8), the keychain's id (16), the database's length (8),
/// the database, the digest (32). Integers are little-endian.
package struct KeychainSnapshot: Hashable, Sendable {
    /// The file.
    package let path: String
    /// When it was taken (to the millisecond).
    package let taken: Date
    /// The change feed's last sequence in it: it holds every change up to this one and none after.
    package let sequence: Int64
    /// How many items (tombstones aside) it holds.
    package let itemCount: Int
    /// The keychain it is of (`meta`'s keychain id).
    package let keychainID: Data
    /// The file's size in bytes.
    package let size: Int64

    /// The name of every snapshot file ends with this.
    package static let fileExtension = ".lksnapshot"
    static let magic = Array("LKSNAPSH".utf8)
    static let format: UInt8 = 1
    static let headerLength = 8 + 1 + 8 + 8 + 8 + 16 + 8
    static let digestLength = 32
    /// A snapshot's database is at most this large (a keychain's backup is, too).
    package static let maximumDatabaseBytes = KeychainBackup.maximumBytes

    /// The whole file in three parts — header, database, digest — written one after another (the database,
    /// the largest, is never copied).
    static func encode(
        database: [UInt8], taken: Date, sequence: Int64, itemCount: Int, keychainID: Data
    ) -> [[UInt8]] {
        var header = ByteWriter(capacity: headerLength)
        header.appendRaw(magic)
        header.append(format)
        header.append(Int64((taken.timeIntervalSince1970 * 1_000).rounded(.down)))
        header.append(sequence)
        header.append(UInt64(itemCount))
        header.appendRaw(keychainID.prefix(16))
        header.append(UInt64(database.count))
        let head = header.bytes
        var digest = [UInt8](repeating: 0, count: digestLength)
        head.withUnsafeBytes { first in
            database.withUnsafeBytes { second in
                digest.withUnsafeMutableBytes { Blake2b.hash([first, second], into: $0) }
            }
        }
        return [head, database, digest]
    }

    /// Reads what the header says (without reading the database): `errSecDecode` when the file is not a
    /// snapshot, has another format, or does not have the size its header promises.
    package static func header(of path: String) throws(KeychainError) -> KeychainSnapshot {
        guard let status = FileSystem.status(path), status.kind == .regular else {
            throw KeychainError(.io, "\(path) is not a regular file")
        }
        let bytes = try FileSystem.readPrefix(path, count: headerLength)
        return try parseHeader(bytes, path: path, fileSize: status.size)
    }

    static func parseHeader(_ bytes: Data, path: String, fileSize: Int64) throws(KeychainError) -> KeychainSnapshot {
        guard bytes.count == headerLength, Array(bytes.prefix(magic.count)) == magic else {
            throw KeychainError.decode("\(path) is not a Latchkey snapshot")
        }
        let parsed: (Int64, Int64, UInt64, Data, UInt64, UInt8)? = bytes.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            do {
                _ = try reader.readRaw(magic.count)
                let format = try reader.readByte()
                return (
                    try reader.readInt64(), try reader.readInt64(), try reader.readUInt64(), try reader.readRaw(16),
                    try reader.readUInt64(), format
                )
            } catch {
                return nil  // Cannot happen: the length was checked. Reported below as errSecDecode.
            }
        }
        guard let (milliseconds, sequence, items, keychainID, databaseLength, format) = parsed else {
            throw KeychainError.decode("\(path) is not a Latchkey snapshot")
        }
        guard format == Self.format else {
            throw KeychainError.decode(
                "\(path) has snapshot format \(format); this Latchkey reads format \(Self.format)")
        }
        guard databaseLength <= UInt64(maximumDatabaseBytes), items <= UInt64(Int32.max),
            fileSize == Int64(headerLength) + Int64(databaseLength) + Int64(digestLength)
        else {
            throw KeychainError.decode(
                "\(path) is damaged: it has \(fileSize) bytes, not the \(Int64(headerLength) &+ Int64(truncatingIfNeeded: databaseLength) &+ Int64(digestLength)) its header promises"
            )
        }
        return KeychainSnapshot(
            path: path, taken: Date(timeIntervalSince1970: Double(milliseconds) / 1_000), sequence: sequence,
            itemCount: Int(items), keychainID: keychainID, size: fileSize)
    }

    /// Reads the whole file and checks its digest; returns the database. `errSecDecode` when the file is
    /// damaged (a changed byte, a truncation) — nothing is restored from it.
    package static func verifiedDatabase(at path: String) throws(KeychainError) -> (KeychainSnapshot, [UInt8]) {
        let snapshot = try header(of: path)
        return try verify(try FileSystem.readSmallFile(path, limit: Int(snapshot.size)), path: path)
    }

    /// Checks a whole snapshot file's header and digest; returns what the header says and the database.
    static func verify(_ file: Data, path: String) throws(KeychainError) -> (KeychainSnapshot, [UInt8]) {
        guard file.count >= headerLength + digestLength else {
            throw KeychainError.decode("\(path) is not a Latchkey snapshot")
        }
        let bodyCount = file.count - digestLength
        // The header is read from the bytes the digest covers: the file may have changed since a first look.
        let snapshot = try parseHeader(Data(file.prefix(headerLength)), path: path, fileSize: Int64(file.count))
        var computed = [UInt8](repeating: 0, count: digestLength)
        file.withUnsafeBytes { raw in
            computed.withUnsafeMutableBytes {
                Blake2b.hash([UnsafeRawBufferPointer(rebasing: raw[0..<bodyCount])], into: $0)
            }
        }
        guard constantTimeEqual(Data(computed), Data(file.suffix(digestLength))) else {
            throw KeychainError.decode("\(path) is damaged: its digest does not match its contents; it is not restored")
        }
        let database = file.withUnsafeBytes { raw in [UInt8](raw[headerLength..<bodyCount]) }
        return (snapshot, database)
    }
}
