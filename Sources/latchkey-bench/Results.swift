/// The figures of one workload at one size.
struct WorkloadResult: Codable, Sendable {
    var name: String
    var samples: Samples
    /// How many items one sample covers (a batch sample covers a whole batch).
    var itemsPerSample: Int = 1

    var medianPerItem: Double { samples.median / Double(itemsPerSample) }
    var itemsPerSecond: Double { 1e9 / medianPerItem }
}

/// Items per batch-add transaction: 5,000, or a fifth of a keychain smaller than 25,000 items, so that
/// every size is measured over five transactions at least (never one transaction scaled up).
func batchSize(forKeychainOf size: Int) -> Int { max(1, min(5_000, size / 5)) }

/// Everything measured at one size, by one child process.
struct SizeResult: Codable, Sendable {
    var size: Int
    var latchkey: [WorkloadResult] = []
    var floor: [WorkloadResult] = []
    var peakMemoryBytes: Int = 0
    var latchkeyDiskBytesPerItem: Double = 0
    var floorDiskBytesPerItem: Double = 0
    var floorRowBytes: Int = 0
    var concurrentReads: [ConcurrentReadResult] = []

    func latchkey(_ name: String) -> WorkloadResult? { latchkey.first { $0.name == name } }
    func floor(_ name: String) -> WorkloadResult? { floor.first { $0.name == name } }
}

/// The workloads, with the floor workload each is compared with.
enum Workload: String, CaseIterable, Sendable {
    case durableAdd = "durable add (one per transaction)"
    case batchAdd = "batch add (per item; transactions of 5,000, or of a fifth of smaller keychains)"
    case findData = "find one item's data by service + account"
    case findService = "find all attributes of one service (10 items)"
    case update = "update one item's data"
    case delete = "delete one item"
    case open = "open a keychain"
    case unlock = "unlock (Argon2id, 64 MiB, 3 passes)"
}
