import Glibc
import LatchkeyPOSIX
import Testing

/// `FileDescriptor`: duplicates, close-on-exec, the access mode, reading to a line or to the end within a
/// limit, writing everything, and waiting for something to read.
@Suite struct FileDescriptorTests {
    /// A pipe whose ends the test closes.
    private static func pipe() throws -> (read: FileDescriptor, write: FileDescriptor) { try Pipes.make() }

    private static func closesOnExec(_ fd: FileDescriptor) -> Bool { fcntl(fd.rawValue, F_GETFD) & FD_CLOEXEC != 0 }

    @Test func theStandardStreamsAreNumberedZeroToTwo() {
        #expect(FileDescriptor.standardInput.rawValue == 0)
        #expect(FileDescriptor.standardOutput.rawValue == 1)
        #expect(FileDescriptor.standardError.rawValue == 2)
        #expect(FileDescriptor(rawValue: 7).description == "fd 7")
    }

    @Test func aDuplicateIsAboveTheStandardStreamsAndClosesOnExec() throws {
        let ends = try Self.pipe()
        defer {
            ends.read.close()
            ends.write.close()
        }
        let copy = try ends.write.duplicate()
        defer { copy.close() }
        #expect(copy.rawValue >= 3)
        #expect(copy != ends.write)
        #expect(Self.closesOnExec(copy))
        try copy.writeAll(Array("through the copy\n".utf8))
        #expect(ends.read.readLine() == Array("through the copy".utf8))
    }

    @Test func duplicatingAClosedDescriptorFailsWithEBADF() throws {
        let ends = try Self.pipe()
        ends.write.close()
        let closed = ends.write
        ends.read.close()
        #expect(throws: Errno(EBADF)) { _ = try closed.duplicate() }
    }

    @Test func closeOnExecIsSetOnADescriptorOpenedWithoutIt() throws {
        var raw: [Int32] = [-1, -1]
        #expect(Glibc.pipe(&raw) == 0)
        let ends = raw.map { FileDescriptor(rawValue: $0) }
        defer { ends.forEach { $0.close() } }
        #expect(!Self.closesOnExec(ends[0]))
        ends[0].setCloseOnExec()
        #expect(Self.closesOnExec(ends[0]))
        #expect(!Self.closesOnExec(ends[1]))
    }

    @Test func onlyTheWritingEndIsOpenForWriting() throws {
        let ends = try Self.pipe()
        defer {
            ends.read.close()
            ends.write.close()
        }
        #expect(ends.write.isOpenForWriting)
        #expect(!ends.read.isOpenForWriting)
        #expect(!FileDescriptor(rawValue: -1).isOpenForWriting)
    }

    @Test func readLineStopsAtTheNewlineAndAtTheEnd() throws {
        let ends = try Self.pipe()
        defer { ends.read.close() }
        try ends.write.writeAll(Array("first\nsecond".utf8))
        ends.write.close()
        #expect(ends.read.readLine() == Array("first".utf8))
        #expect(ends.read.readLine() == Array("second".utf8))
        #expect(ends.read.readLine() == nil)
    }

    @Test func readLineReturnsAtMostTheLimit() throws {
        let ends = try Self.pipe()
        defer {
            ends.read.close()
            ends.write.close()
        }
        try ends.write.writeAll(Array("abcdefgh\n".utf8))
        #expect(ends.read.readLine(limit: 3) == Array("abc".utf8))
        #expect(ends.read.readLine() == Array("defgh".utf8))
    }

    @Test func readAllReadsToTheEndAndRefusesMoreThanTheLimit() throws {
        let small = try Self.pipe()
        defer { small.read.close() }
        try small.write.writeAll(Array(repeating: 7, count: 100))
        small.write.close()
        #expect(try small.read.readAll(limit: 100) == Array(repeating: 7, count: 100))

        let large = try Self.pipe()
        defer { large.read.close() }
        try large.write.writeAll(Array(repeating: 9, count: 101))
        large.write.close()
        #expect(throws: FileDescriptor.ReadAllFailure.tooLarge) { _ = try large.read.readAll(limit: 100) }
    }

    @Test func readSomeGivesWhatOneReadGivesAndEmptyAtTheEnd() throws {
        let ends = try Self.pipe()
        defer { ends.read.close() }
        try ends.write.writeAll(Array("chunk".utf8))
        #expect(try ends.read.readSome(maximum: 64) == Array("chunk".utf8))
        ends.write.close()
        #expect(try ends.read.readSome(maximum: 64) == [])
    }

    @Test func writingToTheReadingEndFailsWithEBADF() throws {
        let ends = try Self.pipe()
        defer {
            ends.read.close()
            ends.write.close()
        }
        #expect(throws: Errno(EBADF)) { try ends.read.writeAll([1]) }
    }

    @Test func waitingForSomethingToReadTimesOutOrSaysWhichIsReady() throws {
        let first = try Pipes.doorbell()
        let second = try Pipes.doorbell()
        defer { [first.read, first.write, second.read, second.write].forEach { $0.close() } }
        #expect(!first.read.waitReadable(milliseconds: 10))
        #expect(FileDescriptor.waitReadable([first.read, second.read], milliseconds: 10) == [])
        second.write.ring()
        #expect(FileDescriptor.waitReadable([first.read, second.read], milliseconds: 1_000) == [second.read])
        #expect(second.read.spinUntilReadable(nanoseconds: 1_000_000))
        second.read.drain()
        #expect(!second.read.waitReadable(milliseconds: 0))
    }
}
