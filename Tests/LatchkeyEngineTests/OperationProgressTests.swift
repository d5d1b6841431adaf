import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// Long operations tell their progress handler where they are: each stage from 0, every 64 items, and the
/// last item; a stage with nothing to do says nothing.
@Suite(.dedicatedThreads) struct OperationProgressTests {
    let directory = TemporaryDirectory()

    /// Collects what a handler is told.
    final class Recorder {
        var reports: [OperationProgress] = []
        var handler: ProgressHandler { { self.reports.append($0) } }
    }

    func expected(_ stage: OperationProgress.Stage, total: Int) -> [OperationProgress] {
        (Array(stride(from: 0, to: total, by: 64)) + [total]).map {
            OperationProgress(stage, completed: $0, total: total)
        }
    }

    @Test func restoreReportsPreparingThenWriting() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let items = (0..<130).map {
            KeychainBackup.Item(
                itemClass: .genericPassword,
                attributes: [.service: .string("progress"), .account: .string("\($0)")], data: Data("s".utf8))
        }
        let recorder = Recorder()
        let summary = try keychain.restore(items, onConflict: .skip, caller: Fixture.app, progress: recorder.handler)
        #expect(summary.added == 130)
        #expect(recorder.reports == expected(.preparing, total: 130) + expected(.writing, total: 130))
    }

    @Test func aRestoreThatFailsStopsReportingWhereItFailed() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        var items = (0..<70).map {
            KeychainBackup.Item(
                itemClass: .genericPassword,
                attributes: [.service: .string("progress"), .account: .string("\($0)")], data: nil)
        }
        items.append(KeychainBackup.Item(itemClass: .genericPassword, attributes: [.server: .string("h")], data: nil))
        let recorder = Recorder()
        #expect(
            status {
                _ = try keychain.restore(items, onConflict: .skip, caller: Fixture.app, progress: recorder.handler)
            }
                == .noSuchAttribute)
        #expect(
            recorder.reports == [
                OperationProgress(.preparing, completed: 0, total: 71),
                OperationProgress(.preparing, completed: 64, total: 71),
            ])
        #expect(try keychain.rowCount() == 0, "nothing written")
    }

    @Test func listingAndIntegrityReportEveryCandidate() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.addAll(
            (0..<200).map { Fixture.password(service: "progress", account: "\($0)") }, caller: Fixture.app)
        let listing = Recorder()
        let found = try keychain.copyMatching(
            ItemQuery(.genericPassword, limit: .all, returning: [.attributes, .data]),
            caller: Fixture.app, progress: listing.handler)
        #expect(found.count == 200)
        #expect(listing.reports == expected(.reading, total: 200))

        let checking = Recorder()
        #expect(try keychain.verifyIntegrity(progress: checking.handler).verified == 200)
        #expect(checking.reports == expected(.checking, total: 200))

        let nothing = Recorder()
        #expect(
            status {
                _ = try keychain.copyMatching(
                    ItemQuery(.internetPassword, limit: .all), caller: Fixture.app,
                    progress: nothing.handler)
            } == .itemNotFound)
        #expect(nothing.reports.isEmpty, "no candidates, no report")
    }
}
