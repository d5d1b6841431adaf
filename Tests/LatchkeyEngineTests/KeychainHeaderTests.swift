import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyEngine

/// The header check before SQLite opens a file, against another process checkpointing at the same moment.
@Suite(.dedicatedThreads) struct KeychainHeaderTests {
    let directory = TemporaryDirectory()

    /// A keychain file as another process's checkpoint leaves it for an instant: page 1 (the header with the
    /// new page count) already written, the pages that grow the file not yet. Returns the path and the rest.
    func midCheckpoint() throws -> (path: String, rest: Data) {
        let path = directory.file("growing.keychain")
        let keychain = try Fixture.newKeychain(in: directory, name: "growing.keychain")
        for index in 0..<200 {
            try keychain.add(Fixture.password(service: "s", account: "\(index)"), caller: Fixture.app)
        }
        _ = consume keychain  // The last handle checkpoints and removes the log.
        let full = try Data(contentsOf: URL(fileURLWithPath: path))
        let cut = full.count / 2
        try full.prefix(cut).write(to: URL(fileURLWithPath: path))
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        return (path, full.suffix(from: cut))
    }

    @Test func aFileThatGrowsWhileItIsCheckedIsNotTakenForATruncatedOne() throws {
        let (path, rest) = try midCheckpoint()
        // The checkpoint finishes while this process looks: the file grows to what its header says.
        try KeychainHeader.check(path: path) {
            guard let handle = FileHandle(forWritingAtPath: path) else { return }
            handle.seekToEndOfFile()
            handle.write(rest)
            handle.closeFile()
        }
        #expect(try KeychainDatabase.open(at: path).rowCount() == 200)
    }

    @Test func aFileThatStaysShortIsTruncated() throws {
        let (path, _) = try midCheckpoint()
        #expect(status { try KeychainHeader.check(path: path) } == .invalidKeychain)
    }
}
