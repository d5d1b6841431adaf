import FoundationEssentials
import LatchkeyPOSIX
import Synchronization

/// The access log's journal (docs/DESIGN-NOTES.md, "The access log"): the entries of reads and refusals,
/// each sealed and numbered exactly as its row in `access_log` will be, appended to `<keychain>-accesslog`
/// with one `write` before the agent answers — so a kill -9 loses none — and folded into the database in
/// batches (`KeychainDatabase.foldAccessJournal`), where the log keeps its bounded, synced home. A fold moves
/// the file aside (`-accesslog-fold`), inserts its records (`INSERT OR IGNORE` by number: a fold repeated
/// after a crash adds nothing twice) and removes it. Readers see the database, the fold and the journal
/// together. The file holds only sealed entries and their numbers, as the table does.
///
/// A record: the sealed entry's length (UInt32), its number (Int64), the sealed entry. A record cut short (a
/// crash in the middle of a write) ends the file's readable part; the next open cuts it off.
final class AccessJournal: Sendable {
    /// `<keychain>-accesslog`: where entries are appended.
    let path: String
    /// `<keychain>-accesslog-fold`: a journal being folded into the database (or left by a fold a crash cut
    /// short, folded first the next time).
    var foldPath: String { path + "-fold" }

    private struct State {
        /// The journal, open for appending, once an entry was written in this process.
        var descriptor: FileDescriptor?
        /// The number the next entry gets; nil until the first entry is numbered.
        var nextSequence: Int64?
    }
    private let state = Mutex(State())
    /// One fold at a time.
    let folding = Mutex(())

    /// The largest journal a reader reads whole: a fold runs every second while the agent serves, so the file
    /// stays far below it.
    static let readLimit = 512 << 20

    init(keychainPath: String) { path = keychainPath + "-accesslog" }

    deinit { state.withLock { $0.descriptor?.close() } }

    /// One record's bytes.
    static func record(sequence: Int64, sealed: Data) -> [UInt8] {
        var writer = ByteWriter(capacity: sealed.count + 12)
        writer.append(UInt32(sealed.count))
        writer.append(sequence)
        writer.appendRaw(sealed)
        return writer.bytes
    }

    /// The whole records in a journal file's bytes, and where the last of them ends.
    static func records(in bytes: [UInt8]) -> (records: [(sequence: Int64, sealed: Data)], end: Int) {
        var records: [(sequence: Int64, sealed: Data)] = []
        var end = 0
        bytes.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            while true {
                do throws(ByteReader.Truncated) {
                    let length = Int(try reader.readUInt32())
                    let sequence = try reader.readInt64()
                    let sealed = try reader.readRaw(length)
                    records.append((sequence, sealed))
                    end = reader.offset
                } catch {
                    return  // The end, or a record cut short: what follows the last whole record is not read.
                }
            }
        }
        return (records, end)
    }

    /// The records of the journal file at `path`: none when there is no file.
    static func records(at path: String) throws(KeychainError) -> [(sequence: Int64, sealed: Data)] {
        guard let bytes = try contents(of: path) else { return [] }
        return records(in: bytes).records
    }

    /// The bytes of the journal file at `path`, or nil when there is none.
    private static func contents(of path: String) throws(KeychainError) -> [UInt8]? {
        do {
            return try Files.read(path, limit: readLimit)
        } catch .system(.noSuchFile) {
            return nil
        } catch {
            throw KeychainError(.io, "cannot read the access log's journal \(path): \(error)")
        }
    }

    /// The first of `count` new numbers: after every entry numbered so far — in the database
    /// (`lastInDatabase`, asked once) and in the journal files.
    func reserve(_ count: Int, lastInDatabase: () throws(KeychainError) -> Int64) throws(KeychainError) -> Int64 {
        if state.withLock({ $0.nextSequence }) == nil {
            let database = try lastInDatabase()
            let journals = (try Self.records(at: path) + Self.records(at: foldPath)).map(\.sequence).max() ?? 0
            state.withLock { state in
                if state.nextSequence == nil { state.nextSequence = max(database, journals) + 1 }
            }
        }
        return state.withLock { state in
            let first = state.nextSequence ?? 1
            state.nextSequence = first + Int64(count)
            return first
        }
    }

    /// Appends `bytes` (whole records) to the journal with one write. After a failed write the journal is
    /// opened again for the next append, and a record the failure cut short is cut off then.
    func append(_ bytes: [UInt8]) throws(KeychainError) {
        try state.withLock { (state) throws(KeychainError) in
            let descriptor: FileDescriptor
            if let open = state.descriptor {
                descriptor = open
            } else {
                descriptor = try openJournal()
                state.descriptor = descriptor
            }
            do {
                try descriptor.writeAll(bytes)
            } catch {
                descriptor.close()
                state.descriptor = nil
                throw KeychainError(.io, "cannot write the access log's journal \(path): \(error)")
            }
        }
    }

    /// Opens the journal for appending, first cutting off a record a crash cut short.
    private func openJournal() throws(KeychainError) -> FileDescriptor {
        do {
            if let bytes = try Self.contents(of: path) {
                let end = Self.records(in: bytes).end
                if end < bytes.count { try Files.truncate(path, to: end) }
            }
            return try Files.openForAppending(path)
        } catch {
            throw error as? KeychainError
                ?? KeychainError(.io, "cannot open the access log's journal \(path): \(error)")
        }
    }

    /// Moves the journal aside to be folded (closing it here: the next append starts a new one). False when
    /// there is nothing to fold.
    func detachForFolding() throws(KeychainError) -> Bool {
        try state.withLock { (state) throws(KeychainError) in
            guard let status = FileStatus.of(path: path), status.size > 0 else { return false }
            state.descriptor?.close()
            state.descriptor = nil
            do {
                try Files.rename(path, to: foldPath)
            } catch {
                throw KeychainError(.io, "cannot move the access log's journal aside: \(error)")
            }
            return true
        }
    }
}
