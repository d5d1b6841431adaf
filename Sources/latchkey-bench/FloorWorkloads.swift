import Foundation
import LatchkeyCrypto
import LatchkeyStorage

/// The floor: raw SQLite with Latchkey's pragmas (WAL, synchronous=FULL, secure_delete) and rows of the same
/// size, indexed the same way, plus one XChaCha20-Poly1305 seal or open of the secret per item — what no
/// keychain built on this file design can beat.
struct FloorWorkloads {
    let directory: String
    let size: Int
    let rowBytes: Int
    let samples: Int
    let secret = Data(repeating: 0x5A, count: 32)
    let key = SecureBytes(randomCount: AEAD.keyLength)
    var path: String { directory + "/floor.db" }

    func keyFor(_ index: Int) -> Data {
        var digest = Data(count: 32)
        digest.withUnsafeMutableBytes { $0.storeBytes(of: UInt64(index).littleEndian, as: UInt64.self) }
        return digest
    }

    /// A row value: the sealed secret, padded with random bytes to the keychain's average row size.
    func value() -> Data {
        let sealed = AEAD.seal(secret, key: key, associatedData: Data())
        return sealed + SecureRandom.bytes(max(0, rowBytes - sealed.count))
    }

    func openDatabase() throws -> Connection {
        let db = try Connection(path: path, mode: .readWrite)
        try db.execute(
            "PRAGMA journal_mode = WAL; PRAGMA cache_size = -32768; PRAGMA synchronous = FULL; PRAGMA secure_delete = ON; PRAGMA temp_store = MEMORY"
        )
        return db
    }

    func run() throws -> (results: [WorkloadResult], diskBytesPerItem: Double) {
        guard FileManager.default.createFile(atPath: path, contents: Data(), attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteUnknown)
        }
        var db = try openDatabase()
        try db.execute(
            "CREATE TABLE floor (id INTEGER PRIMARY KEY, k BLOB NOT NULL UNIQUE, g INTEGER NOT NULL, v BLOB NOT NULL); CREATE INDEX floor_g ON floor (g)"
        )
        var results: [WorkloadResult] = []

        let batch = batchSize(forKeychainOf: size)
        var batchSamples = Samples()
        var inserted = 0
        while inserted < size {
            let count = min(batch, size - inserted)
            batchSamples.nanoseconds.append(
                try time {
                    try db.transaction(writing: true) {
                        for index in inserted..<(inserted + count) {
                            try db.run(
                                "INSERT INTO floor (k, g, v) VALUES (?, ?, ?)",
                                [.blob(keyFor(index)), .integer(Int64(index / 10)), .blob(value())])
                        }
                    }
                } / Double(count) * Double(batch))  // A short last batch, per item.
            inserted += count
        }
        results.append(WorkloadResult(name: Workload.batchAdd.rawValue, samples: batchSamples, itemsPerSample: batch))
        let disk = Double(diskBytes(directory: directory, prefix: "floor.db")) / Double(size)

        var find = Samples()
        for _ in 0..<samples {
            let index = Int.random(in: 0..<size)
            find.nanoseconds.append(
                try time {
                    let stored = try db.blob("SELECT v FROM floor WHERE k = ?", [.blob(keyFor(index))])!
                    _ = try AEAD.open(stored.prefix(secret.count + AEAD.overhead), key: key, associatedData: Data())
                })
        }
        results.append(WorkloadResult(name: Workload.findData.rawValue, samples: find))

        var findService = Samples()
        for _ in 0..<samples {
            let group = Int.random(in: 0..<max(1, size / 10))
            findService.nanoseconds.append(
                try time {
                    try db.transaction(writing: false) {
                        try db.forEachRow("SELECT v FROM floor WHERE g = ?", [.integer(Int64(group))]) { row in
                            _ = try AEAD.open(
                                row.blob(0)!.prefix(secret.count + AEAD.overhead), key: key, associatedData: Data())
                        }
                    }
                })
        }
        results.append(WorkloadResult(name: Workload.findService.rawValue, samples: findService))

        let durable = max(50, samples / 20)
        var add = Samples()
        for index in 0..<durable {
            add.nanoseconds.append(
                try time {
                    try db.transaction(writing: true) {
                        try db.run(
                            "INSERT INTO floor (k, g, v) VALUES (?, ?, ?)",
                            [.blob(keyFor(size + index)), .integer(-1), .blob(value())])
                    }
                })
        }
        results.append(WorkloadResult(name: Workload.durableAdd.rawValue, samples: add))

        var update = Samples()
        for _ in 0..<durable {
            let index = Int.random(in: 0..<size)
            update.nanoseconds.append(
                try time {
                    try db.transaction(writing: true) {
                        try db.run("UPDATE floor SET v = ? WHERE k = ?", [.blob(value()), .blob(keyFor(index))])
                    }
                })
        }
        results.append(WorkloadResult(name: Workload.update.rawValue, samples: update))

        var delete = Samples()
        for index in 0..<durable {
            delete.nanoseconds.append(
                try time {
                    try db.transaction(writing: true) {
                        try db.run("DELETE FROM floor WHERE k = ?", [.blob(keyFor(size + index))])
                    }
                })
        }
        results.append(WorkloadResult(name: Workload.delete.rawValue, samples: delete))

        var open = Samples()
        for _ in 0..<20 {
            db = try Connection(path: ":memory:", mode: .memory)  // Closes the previous connection.
            open.nanoseconds.append(
                try time {
                    db = try openDatabase()
                    _ = try db.blob("SELECT v FROM floor WHERE k = ?", [.blob(keyFor(0))])
                })
        }
        results.append(WorkloadResult(name: Workload.open.rawValue, samples: open))

        var unlock = Samples()
        let passphrase = SecureBytes(copying: Array("benchmark passphrase".utf8))
        for _ in 0..<3 {
            unlock.nanoseconds.append(
                try time {
                    _ = try PasswordKDF.deriveKey(
                        passphrase: passphrase, salt: SecureRandom.bytes(PasswordKDF.saltLength), parameters: .default)
                })
        }
        results.append(WorkloadResult(name: Workload.unlock.rawValue, samples: unlock))
        return (results, disk)
    }
}
