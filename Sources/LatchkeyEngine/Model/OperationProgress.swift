/// How far a long operation (a restore, a listing of every item, an integrity check) has come; given to
/// its progress handler as the work goes, so a tool can show it. Counts only — never an item's content.
public struct OperationProgress: Hashable, Sendable {
    /// The part of the operation under way.
    public enum Stage: String, Hashable, Sendable {
        /// Reading and decrypting stored items.
        case reading
        /// Validating and encrypting items before they are written.
        case preparing
        /// Writing prepared items in the transaction.
        case writing
        /// Checking stored items (the integrity pass).
        case checking
    }

    /// The part under way.
    public var stage: Stage
    /// Items done in this stage.
    public var completed: Int
    /// Items this stage will handle in all.
    public var total: Int

    /// A report of `completed` of `total` items in `stage`.
    public init(_ stage: Stage, completed: Int, total: Int) {
        self.stage = stage
        self.completed = completed
        self.total = total
    }
}

/// Told of an operation's progress: at the start of each stage that has items (0 done), then as they
/// complete (a stage with nothing to do is not reported). It is
/// called on the operation's thread, inside its transaction: it must return quickly and must not use the
/// keychain.
public typealias ProgressHandler = (OperationProgress) -> Void

/// Reports through an optional handler at most once per `stride` items (and always the first and last).
struct ProgressReporter {
    private let handler: ProgressHandler?
    private let stage: OperationProgress.Stage
    private let total: Int
    private let stride: Int

    init(_ handler: ProgressHandler?, _ stage: OperationProgress.Stage, total: Int, stride: Int = 64) {
        self.stage = stage
        self.total = total
        self.stride = stride
        self.handler = total > 0 ? handler : nil
        self.handler?(OperationProgress(stage, completed: 0, total: total))
    }

    /// `completed` items are done.
    func report(_ completed: Int) {
        guard let handler, completed % stride == 0 || completed == total else { return }
        handler(OperationProgress(stage, completed: completed, total: total))
    }
}
