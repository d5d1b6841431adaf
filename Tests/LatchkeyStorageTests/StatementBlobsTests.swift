import Foundation
import LatchkeyStorage
import Testing

/// `Statement.blobs` reads several blob columns of a row into one shared buffer: each comes back with its
/// own bytes, NULL as nil and an empty blob as empty, whatever their order and sizes.
@Suite struct StatementBlobsTests {
    @Test func eachColumnGetsItsOwnBytesFromTheSharedBuffer() throws {
        let db = try Connection(path: ":memory:", mode: .memory)
        try db.execute("CREATE TABLE t (a BLOB, b BLOB, c BLOB, d BLOB, e BLOB, n INTEGER)")
        let long = Data((0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let short = Data([1, 2, 3])
        let digest = Data((1...16).map { UInt8($0) })
        try db.run(
            "INSERT INTO t VALUES (?, NULL, ?, ?, ?, 42)", [.blob(long), .blob(Data()), .blob(short), .blob(digest)])

        var read: [Data?] = []
        var number: Int64 = 0
        try db.forEachRow("SELECT a, b, c, d, e, n FROM t") { row in
            read = row.blobs([4, 0, 1, 2, 3])
            number = row.integer(5)
        }
        #expect(read.count == 5)
        #expect(read[0] == digest)
        #expect(read[1] == long)
        #expect(read[2] == nil)
        #expect(read[3] == Data())
        #expect(read[4] == short)
        #expect(number == 42)
        // Slices of one buffer: their bytes read the same through their own indices.
        let first = try #require(read[1])
        #expect(first[first.startIndex] == 0 && first[first.startIndex + 1] == 7)
        #expect(Array(try #require(read[0])) == Array(1...16))
    }

    @Test func aRowOfNullsAndEmptiesReadsAsNilAndEmpty() throws {
        let db = try Connection(path: ":memory:", mode: .memory)
        try db.execute("CREATE TABLE t (a BLOB, b BLOB)")
        try db.run("INSERT INTO t VALUES (NULL, ?)", [.blob(Data())])
        var read: [Data?] = [Data([9])]
        try db.forEachRow("SELECT a, b FROM t") { read = $0.blobs([0, 1]) }
        #expect(read == [nil, Data()])
    }
}
