import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCLI

/// Progress on long work: drawn on a terminal's standard error, never anywhere else.
@Suite(.dedicatedThreads) struct ProgressTests {
    let sandbox = CLISandbox()
    static let erase = "\r\u{1B}[K"

    /// A clock the test moves.
    final class ManualClock {
        var seconds = 0.0
    }

    @Test func meterDrawsEachStageThrottlesAndErasesItsLine() {
        let sink = BufferSink()
        let clock = ManualClock()
        let meter = ProgressMeter("importing", sink: sink, interval: 0.1, now: { clock.seconds })
        meter.update(OperationProgress(.preparing, completed: 0, total: 2_000))
        clock.seconds = 0.05
        meter.update(OperationProgress(.preparing, completed: 64, total: 2_000))  // too soon: not drawn
        clock.seconds = 0.5
        meter.update(OperationProgress(.preparing, completed: 1_000, total: 2_000))
        clock.seconds = 0.52
        meter.update(OperationProgress(.preparing, completed: 2_000, total: 2_000))  // the last is always drawn
        meter.update(OperationProgress(.writing, completed: 0, total: 2_000))  // a new stage restarts the rate
        clock.seconds = 2.52
        meter.update(OperationProgress(.writing, completed: 128, total: 2_000))
        meter.finish()
        meter.finish()  // erases once
        let e = Self.erase
        #expect(
            sink.text == e + "importing: preparing 0 of 2,000 items (0%)"
                + e + "importing: preparing 1,000 of 2,000 items (50%), 2,000/s, 1 s left"
                + e + "importing: preparing 2,000 of 2,000 items (100%), 3,846/s"
                + e + "importing: writing 0 of 2,000 items (0%)"
                + e + "importing: writing 128 of 2,000 items (6%), 64/s, 30 s left"
                + e)
    }

    @Test func aLineLongerThanTheTerminalIsCutToFitOnOneRow() {
        let sink = BufferSink()
        let clock = ManualClock()
        var width: Int? = 40
        let meter = ProgressMeter(
            "exporting internet passwords", sink: sink, now: { clock.seconds }, columns: { width })
        meter.update(OperationProgress(.reading, completed: 0, total: 100_000))
        width = nil  // Not a terminal any more, or one that does not say: the whole line.
        meter.update(OperationProgress(.checking, completed: 0, total: 100_000))
        #expect(
            sink.text == Self.erase + "exporting internet passwords: reading 0"
                + Self.erase + "exporting internet passwords: checking 0 of 100,000 items (0%)")
        #expect("exporting internet passwords: reading 0".count == 39)
    }

    @Test func meterThatNeverDrewErasesNothing() {
        let sink = BufferSink()
        ProgressMeter("doctor", sink: sink).finish()
        #expect(sink.data.isEmpty)
    }

    @Test func timesLeftAndNumbersReadTheSameInEveryLocale() {
        #expect(ProgressMeter.remaining(0.2) == "1 s")
        #expect(ProgressMeter.remaining(59) == "59 s")
        #expect(ProgressMeter.remaining(125) == "2 min 5 s")
        #expect(ProgressMeter.remaining(3_840) == "1 h 4 min")
        #expect(ProgressMeter.grouped(0) == "0")
        #expect(ProgressMeter.grouped(999) == "999")
        #expect(ProgressMeter.grouped(1_000) == "1,000")
        #expect(ProgressMeter.grouped(1_234_567) == "1,234,567")
        #expect(
            ProgressMeter.line("x", OperationProgress(.checking, completed: 0, total: 0), elapsed: 1)
                == "x: checking 0 of 0 items")
    }

    /// A keychain with three items and a backup of it.
    func keychainAndBackup() throws -> String {
        try sandbox.createKeychain()
        for (account, secret) in [("a", "1"), ("b", "2"), ("c", "3")] {
            try sandbox.run("add-generic-password", "-a", account, "-s", "progress", "--password-stdin", input: secret)
        }
        let backup = sandbox.directory.file("progress.lkb")
        let export = try sandbox.run(["export", "-o", backup], environment: backupEnvironment)
        #expect(export.status == 0)
        #expect(export.stderr == "exported 3 items to \(backup)\n", "no progress on a pipe")
        try sandbox.createKeychain("other")
        return backup
    }

    var backupEnvironment: [String: String] {
        sandbox.unattended.merging(["LATCHKEY_BACKUP_PASSPHRASE": "backup passphrase"]) { _, new in new }
    }

    @Test func importExportAndDoctorShowProgressOnATerminal() throws {
        let backup = try keychainAndBackup()
        let e = Self.erase

        let importing = try PseudoTerminalSession(
            executable: sandbox.binary, arguments: ["import", "-i", backup, "other"],
            environment: backupEnvironment)
        #expect(importing.expect(e + "importing: preparing 0 of 3 items (0%)"))
        #expect(importing.expect(e + "importing: preparing 3 of 3 items (100%)"))
        #expect(importing.expect(e + "importing: writing 0 of 3 items (0%)"))
        #expect(importing.expect(e + "importing: writing 3 of 3 items (100%)"))
        #expect(
            importing.expect(e + "added 3, updated 0, skipped 0\r\n"), "the meter's line is erased before the summary")
        #expect(importing.wait() == 0, "\(importing.transcript)")

        let second = sandbox.directory.file("second.lkb")
        let exporting = try PseudoTerminalSession(
            executable: sandbox.binary, arguments: ["export", "-o", second, "other"],
            environment: backupEnvironment)
        #expect(exporting.expect(e + "exporting generic passwords: reading 0 of 3 items (0%)"))
        #expect(exporting.expect(e + "exporting generic passwords: reading 3 of 3 items (100%)"))
        #expect(exporting.expect(e + "exported 3 items to \(second)\r\n"))
        #expect(exporting.wait() == 0, "\(exporting.transcript)")
        #expect(!exporting.transcript.contains("internet passwords"), "a class with no items draws nothing")

        let doctor = try PseudoTerminalSession(
            executable: sandbox.binary, arguments: ["doctor", "other"],
            environment: sandbox.unattended)
        #expect(doctor.expect(e + "doctor: checking 0 of 3 items (0%)"))
        #expect(doctor.expect(e + "doctor: checking 3 of 3 items (100%)"))
        #expect(doctor.expect(e + "ok       integrity: 3 rows: 3 verified, 0 damaged"))
        #expect(doctor.wait() == 0, "\(doctor.transcript)")
    }

    @Test func nothingIsDrawnWhenStandardErrorIsNotATerminal() throws {
        let backup = try keychainAndBackup()
        let imported = try sandbox.run(["import", "-i", backup, "other"], environment: backupEnvironment)
        #expect(imported.status == 0)
        #expect(imported.stdout == "added 3, updated 0, skipped 0\n")
        #expect(imported.stderr == "")
        let doctor = try sandbox.run(["doctor", "other"], environment: sandbox.unattended)
        #expect(doctor.status == 0, "\(doctor.stdout)")
        #expect(doctor.stderr == "")
        #expect(!doctor.stdout.contains("\u{1B}"))
    }
}
