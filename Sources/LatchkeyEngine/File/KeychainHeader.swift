import FoundationEssentials

/// Checks the first 100 bytes of a file before SQLite sees it, so a foreign or truncated file gets a clear
/// `errSecInvalidKeychain` and is never written to.
enum KeychainHeader {
    private static let magic = Data("SQLite format 3\u{0}".utf8)

    /// `afterReadingHeader` runs between reading the header and looking at the log and the file's size (a
    /// test puts another process's checkpoint there).
    static func check(path: String, afterReadingHeader: () -> Void = {}) throws(KeychainError) {
        guard let info = FileSystem.status(path) else {
            throw KeychainError(.noSuchKeychain, "\(path) does not exist")
        }
        guard info.kind == .regular else {
            throw KeychainError(.invalidKeychain, "\(path) is not a regular file")
        }
        guard info.size > 0 else { throw KeychainError(.invalidKeychain, "\(path) is empty") }
        let header = try FileSystem.readPrefix(path, count: 100)
        let compared = min(header.count, magic.count)
        guard header.prefix(compared) == magic.prefix(compared) else {
            throw KeychainError(.invalidKeychain, "\(path) is not a Latchkey keychain (not an SQLite database)")
        }
        guard header.count == 100 else {
            throw KeychainError(.invalidKeychain, "\(path) is truncated (\(header.count) bytes)")
        }
        let rawPageSize = Int(bigEndian16(header, at: 16))
        let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
        let changeCounter = bigEndian32(header, at: 24)
        let pageCount = Int64(bigEndian32(header, at: 28))
        let validFor = bigEndian32(header, at: 92)
        afterReadingHeader()
        // The page count in the header is valid when the change counter matches "version-valid-for". With a
        // write-ahead log beside the file, a checkpoint cut short (a full disk, a crash) may have written the
        // new header but not every page yet; the log still holds them, so SQLite's recovery decides.
        // Another process may be checkpointing while this one looks (page 1 first, then the pages that grow
        // the file, then the log emptied), so the three are observed in that order — header, log, size —
        // and a file that is growing is never taken for a truncated one. (Latchkey never shrinks the file.)
        let logSize = FileSystem.status(path + "-wal")?.size ?? 0
        let size = FileSystem.status(path)?.size ?? info.size
        if pageCount > 0 && changeCounter == validFor && logSize == 0 && size < pageCount * Int64(pageSize) {
            throw KeychainError(
                .invalidKeychain, "\(path) is truncated (\(size) of \(pageCount * Int64(pageSize)) bytes)")
        }
    }

    private static func bigEndian16(_ data: Data, at offset: Int) -> UInt16 {
        UInt16(data[data.startIndex + offset]) << 8 | UInt16(data[data.startIndex + offset + 1])
    }

    private static func bigEndian32(_ data: Data, at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 << 8 | UInt32(data[data.startIndex + offset + $1]) }
    }
}
