import Foundation
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

/// Three devices make random changes while the network and the server fail under them — connections
/// killed (and through PgBouncer, the pooler restarted), the server crashed or stopped mid-push and
/// mid-pull and restarted, a device offline for a while —
/// and then heal. Checked against a model: every device ends with the same items; each item's value is one
/// some device wrote; every acknowledged write is the final value, a conflict record, or overwritten by a
/// later change of the same item; no item appears twice.
@Suite("Three devices converge through failures", .serialized)
struct SyncConvergenceTests {
    final class Running: @unchecked Sendable {
        // @unchecked: handed to one background thread at a time; the test waits for it before touching the device.
        let device: SyncDevice
        var failure: KeychainError?
        init(_ device: SyncDevice) { self.device = device }
    }

    @Test(arguments: SyncConnection.allCases) func threeDevicesConvergeAfterRandomChangesAndPartitions(
        _ connection: SyncConnection
    ) throws {
        var random = TestSeed.generator("threeDevicesConverge-\(connection)")
        let cluster = try SyncTestServer(connection)
        let devices = try ["one", "two", "three"].map { try SyncDevice($0) }
        let code = try devices[0].setup(cluster)
        for device in devices.dropFirst() { try device.join(cluster, recoveryCode: code) }

        let accounts = (0..<6).map { "k\($0)" }
        var written: [String: [String]] = [:]  // account → every value written, in order
        var lastChange: [String: Int] = [:]  // account → step of its last change (write or delete)
        var changeSteps: [String: Int] = [:]  // value → step it was written
        var offline: Set<Int> = []
        var counter = 0

        for step in 0..<160 {
            let index = Int.random(in: 0..<3, using: &random)
            let device = devices[index]
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<45:
                let account = accounts.randomElement(using: &random)!
                counter += 1
                let value = "\(device.name)-\(counter)"
                let exists = try device.contents()["mail/\(account)"] != nil
                if exists { try device.update(account, value) } else { try device.add(account, value) }
                written[account, default: []].append(value)
                lastChange[account] = step
                changeSteps[value] = step
            case 45..<55:
                let account = accounts.randomElement(using: &random)!
                if try device.contents()["mail/\(account)"] != nil {
                    try device.delete(account)
                    lastChange[account] = step
                }
            case 55..<80:
                guard !offline.contains(index) else { continue }
                _ = trySync(device)
            case 80..<86:
                // A sync in flight while the server crashes under it (mid-push or mid-pull).
                let running = Running(device)
                let done = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    do throws(KeychainError) { try running.device.sync() } catch { running.failure = error }
                    done.signal()
                }
                Thread.sleep(forTimeInterval: Double(Int.random(in: 0..<30, using: &random)) / 1000)
                cluster.stop(crash: Int.random(in: 0..<2, using: &random) == 0)
                done.wait()
                if let failure = running.failure { #expect(failure.status == .notAvailable, "\(failure)") }
                try cluster.start()
            case 86..<92:
                // Every connection killed by the server; through PgBouncer, now and then the pooler restarted too
                // (every client connection closed).
                try cluster.psql(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = 'latchkey' AND pid <> pg_backend_pid()"
                )
                if let bouncer = cluster.bouncer, Int.random(in: 0..<2, using: &random) == 0 {
                    bouncer.stop(crash: Int.random(in: 0..<2, using: &random) == 0)
                    try bouncer.start()
                }
            default:
                // A device goes offline, or comes back.
                if offline.contains(index) { offline.remove(index) } else { offline.insert(index) }
            }
        }

        // Heal: everyone online, rounds until nothing moves.
        for _ in 0..<4 { for device in devices { #expect(trySync(device) == nil) } }
        let finals = try devices.map { try $0.contents() }
        #expect(finals[1] == finals[0])
        #expect(finals[2] == finals[0])
        for device in devices {
            #expect(try device.keychain.sync.counts().pending == 0)
            #expect(try device.keychain.sync.counts().inbox == 0)
            let rejections = try device.keychain.sync.rejections().map {
                "#\($0.sequence) v\($0.version): \($0.reason)"
            }
            #expect(rejections.isEmpty, "\(device.name): \(rejections)")
            let all = try device.keychain.copyMatching(
                ItemQuery(.genericPassword, synchronizable: .yes, limit: .all, returning: [.attributes]),
                caller: SyncDevice.app)
            #expect(all.count == finals[0].count, "an item appears twice")
            #expect(try device.keychain.orphanIndexEntries() == 0)
            #expect(try device.keychain.verifyIntegrity().damaged.isEmpty)
        }
        let conflictValues = Set(
            try devices.flatMap { try $0.client.conflicts() }.compactMap { $0.record?.data }.map {
                String(decoding: $0, as: UTF8.self)
            })
        for (key, value) in finals[0] {
            let account = String(key.dropFirst("mail/".count))
            #expect(written[account, default: []].contains(value), "\(key) holds \(value), which nobody wrote")
        }
        for (account, values) in written {
            let final = finals[0]["mail/\(account)"]
            for value in values where value != final && !conflictValues.contains(value) {
                // Lost only if nothing changed the item after it was written.
                #expect(changeSteps[value]! < lastChange[account]!, "\(value) of \(account) was lost")
                if changeSteps[value]! == lastChange[account]! {
                    Issue.record("\(value) of \(account) was lost: final \(final ?? "none")")
                }
            }
        }
    }

    func trySync(_ device: SyncDevice) -> KeychainError? {
        do throws(KeychainError) {
            try device.sync()
            return nil
        } catch {
            return error
        }
    }
}
