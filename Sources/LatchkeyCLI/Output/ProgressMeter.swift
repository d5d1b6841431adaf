import Dispatch
import FoundationEssentials
import Latchkey
import LatchkeyPOSIX

/// Progress of a long operation on a terminal's standard error, redrawn in place:
///
///     importing: writing 41,000 of 100,000 items (41%), 52,300/s, 1 s left
///
/// It draws at the start of each stage and then at most every `interval` seconds, and erases its line when
/// the work ends, so the command's own output follows on a clean line. Commands get one only when standard
/// error is a terminal (`CLIContext.withProgress`): piped or redirected output never holds it.
final class ProgressMeter {
    private let activity: String
    private let sink: any OutputSink
    private let now: () -> Double
    private let interval: Double
    private let columns: () -> Int?
    private var stage: OperationProgress.Stage?
    private var stageStart = 0.0
    private var lastDraw = -Double.infinity
    private var drawn = false

    /// A meter for `activity` ("importing") drawing on `sink`; `now` gives seconds on a monotonic clock.
    /// `columns` gives the terminal's width (asked at each redraw, so a resized window is followed): a
    /// line is cut to one column less, since a line that wraps cannot be redrawn in place.
    init(
        _ activity: String, sink: any OutputSink, interval: Double = 0.1,
        now: @escaping () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 },
        columns: @escaping () -> Int? = { nil }
    ) {
        self.activity = activity
        self.sink = sink
        self.interval = interval
        self.now = now
        self.columns = columns
    }

    /// Takes one report from the engine: draws it when a stage starts or ends, or when `interval` has passed.
    func update(_ progress: OperationProgress) {
        let time = now()
        if progress.stage != stage {
            stage = progress.stage
            stageStart = time
        } else if time - lastDraw < interval && progress.completed < progress.total {
            return
        }
        lastDraw = time
        drawn = true
        var line = Self.line(activity, progress, elapsed: time - stageStart)
        if let width = columns(), line.count >= width { line = String(line.prefix(max(0, width - 1))) }
        sink.write("\r\u{1B}[K" + line)
    }

    /// Erases the meter's line (when it drew one).
    func finish() {
        guard drawn else { return }
        drawn = false
        sink.write("\r\u{1B}[K")
    }

    /// The text of one report: counts, share, and — once a rate can be known — items per second and the
    /// time left at that rate.
    static func line(_ activity: String, _ progress: OperationProgress, elapsed: Double) -> String {
        let done = grouped(progress.completed)
        let total = grouped(progress.total)
        var text = "\(activity): \(progress.stage.rawValue) \(done) of \(total) items"
        if progress.total > 0 {
            text += " (\(progress.completed * 100 / progress.total)%)"
        }
        if progress.completed > 0 && elapsed >= 0.05 {
            let rate = Double(progress.completed) / elapsed
            text += ", \(grouped(Int(rate.rounded())))/s"
            if progress.completed < progress.total {
                text += ", " + remaining(Double(progress.total - progress.completed) / rate) + " left"
            }
        }
        return text
    }

    /// 1234567 as "1,234,567", whatever the locale (the meter's text is the same everywhere).
    static func grouped(_ number: Int) -> String { number.grouped }

    /// "3 s", "2 min 5 s", "1 h 4 min".
    static func remaining(_ seconds: Double) -> String {
        let whole = max(1, Int(seconds.rounded(.up)))
        if whole < 60 { return "\(whole) s" }
        if whole < 3_600 { return "\(whole / 60) min \(whole % 60) s" }
        return "\(whole / 3_600) h \(whole % 3_600 / 60) min"
    }
}

extension CLIContext {
    /// Runs `body` with a progress handler that draws on standard error when it is a terminal (and does
    /// nothing otherwise), erasing the meter afterwards, whatever `body` does.
    func withProgress<T, Failure: Error>(
        _ activity: String, _ body: (ProgressHandler?) throws(Failure) -> T
    ) throws(Failure) -> T {
        guard let terminal = progressTerminal else { return try body(nil) }
        let meter = ProgressMeter(activity, sink: terminal, columns: { FileDescriptor.standardError.terminalColumns })
        defer { meter.finish() }
        return try body { meter.update($0) }
    }
}
