import Foundation
import Latchkey
import LatchkeyStorage

/// Latchkey's own workloads on a keychain file of `size` items: 10 accounts per service, a 32-byte secret
/// and a label each.
struct LatchkeyWorkloads {
    let directory: String
    let size: Int
    let samples: Int
    let caller = CallerIdentity(applicationIdentifier: "bench.app")
    let passphrase = Passphrase("benchmark passphrase")
    var path: String { directory + "/bench.keychain" }

    func item(_ index: Int) -> NewItem {
        NewItem(
            .genericPassword,
            attributes: [
                .service: .string("service-\(index / 10)"), .account: .string("account-\(index)"),
                .label: .string("Label \(index)"),
            ], data: Data(repeating: UInt8(truncatingIfNeeded: index), count: 32))
    }

    func run() throws -> (results: [WorkloadResult], diskBytesPerItem: Double, rowBytes: Int) {
        var keychain = try KeychainDatabase.create(at: path, passphrase: passphrase)
        var results: [WorkloadResult] = []

        let batch = batchSize(forKeychainOf: size)
        var batchSamples = Samples()
        var inserted = 0
        while inserted < size {
            let count = min(batch, size - inserted)
            let items = (inserted..<(inserted + count)).map(item)
            batchSamples.nanoseconds.append(
                // A short last batch, per item.
                try time { try keychain.addAll(items, caller: caller) } / Double(count) * Double(batch))
            inserted += count
        }
        results.append(WorkloadResult(name: Workload.batchAdd.rawValue, samples: batchSamples, itemsPerSample: batch))
        let disk = Double(diskBytes(directory: directory, prefix: "bench.keychain")) / Double(size)
        let rowBytes = try averageRowBytes()

        var find = Samples()
        for _ in 0..<samples {
            let index = Int.random(in: 0..<size)
            let query = ItemQuery(
                .genericPassword,
                matching: [
                    .service: .string("service-\(index / 10)"), .account: .string("account-\(index)"),
                ], returning: .data)
            find.nanoseconds.append(
                try time {
                    let found = try keychain.copyMatching(query, caller: caller)
                    precondition(found.count == 1)
                })
        }
        results.append(WorkloadResult(name: Workload.findData.rawValue, samples: find))

        var findService = Samples()
        for _ in 0..<samples {
            let query = ItemQuery(
                .genericPassword, matching: [.service: .string("service-\(Int.random(in: 0..<max(1, size / 10)))")],
                limit: .all, returning: .attributes)
            findService.nanoseconds.append(try time { _ = try keychain.copyMatching(query, caller: caller) })
        }
        results.append(WorkloadResult(name: Workload.findService.rawValue, samples: findService))

        let durable = max(50, samples / 20)
        var add = Samples()
        for index in 0..<durable {
            let newItem = item(size + index)
            add.nanoseconds.append(try time { try keychain.add(newItem, caller: caller) })
        }
        results.append(WorkloadResult(name: Workload.durableAdd.rawValue, samples: add))

        var update = Samples()
        for _ in 0..<durable {
            let index = Int.random(in: 0..<size)
            let query = ItemQuery(
                .genericPassword,
                matching: [
                    .service: .string("service-\(index / 10)"), .account: .string("account-\(index)"),
                ])
            let changes = ItemChanges(data: Data(repeating: 7, count: 32))
            update.nanoseconds.append(try time { try keychain.update(query, with: changes, caller: caller) })
        }
        results.append(WorkloadResult(name: Workload.update.rawValue, samples: update))

        var delete = Samples()
        for index in 0..<durable {
            let query = ItemQuery(
                .genericPassword,
                matching: [
                    .service: .string("service-\((size + index) / 10)"), .account: .string("account-\(size + index)"),
                ])
            delete.nanoseconds.append(try time { try keychain.delete(query, caller: caller) })
        }
        results.append(WorkloadResult(name: Workload.delete.rawValue, samples: delete))

        var open = Samples()
        for _ in 0..<20 {
            keychain = KeychainDatabase.inMemory()  // Releases (closes) the previous handle first.
            open.nanoseconds.append(try time { keychain = try KeychainDatabase.open(at: path) })
        }
        results.append(WorkloadResult(name: Workload.open.rawValue, samples: open))

        var unlock = Samples()
        for _ in 0..<3 {
            unlock.nanoseconds.append(try time { try keychain.unlock(with: passphrase) })
        }
        results.append(WorkloadResult(name: Workload.unlock.rawValue, samples: unlock))
        return (results, disk, rowBytes)
    }

    /// The average stored size of an item row (all columns), for the floor's rows.
    func averageRowBytes() throws -> Int {
        let db = try Connection(path: path, mode: .readWrite)
        let average = try db.integer(
            "SELECT CAST(avg(length(id) + length(agrp) + length(pk) + length(idx) + length(item_key) + length(attrs) + length(data) + 16) AS INTEGER) FROM items"
        )
        return Int(average ?? 256)
    }
}
