import CPowerLoss
// A helper the tests spawn as a separate process: to create a keychain under a chosen umask, to write
// while being killed, and to hammer one file from several processes.
import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeySecurity
import SeedManagers
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes a line to standard output at once (unbuffered), so the parent sees every acknowledgement
/// before a SIGKILL.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("latchkey-test-helper: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { fail("usage: latchkey-test-helper <command> ...") }
let caller = CallerIdentity(applicationIdentifier: "com.example.helper", accessGroups: ["com.example.helper"])

func open(_ path: String, _ passphrase: String) -> KeychainDatabase {
    do {
        let keychain = try KeychainDatabase.open(at: path)
        try keychain.unlock(with: Passphrase(passphrase))
        return keychain
    } catch {
        fail("open: \(error)")
    }
}

@Sendable func item(_ key: String, _ value: String) -> NewItem {
    NewItem(.genericPassword, attributes: [.service: .string("crash"), .account: .string(key)], data: Data(value.utf8))
}

@Sendable func query(_ key: String) -> ItemQuery {
    ItemQuery(.genericPassword, matching: [.service: .string("crash"), .account: .string(key)])
}

switch arguments[1] {
case "fork-random":
    // fork-random: draws from the random pool, forks, and prints the next 32 bytes each process draws,
    // the child's line first. A child must never repeat the parent's bytes.
    _ = SecureRandom.bytes(16)
    let hex = { (data: Data) in data.map { String(format: "%02x", $0) }.joined() }
    let child = fork()
    guard child >= 0 else { fail("fork failed") }
    if child == 0 {
        let line = "child " + hex(SecureRandom.bytes(32)) + "\n"
        _ = line.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
        _exit(0)
    }
    var status: Int32 = 0
    guard waitpid(child, &status, 0) == child, status == 0 else { fail("child failed") }
    say("parent " + hex(SecureRandom.bytes(32)))

case "batcher":
    // batcher <path> <passphrase> <first batch> <batch size>: adds batches of items in one transaction
    // each (accounts "b<batch>-<n>", label "b<batch>"), printing "ack <batch>" after each commit, until killed.
    guard arguments.count == 6, var batch = Int(arguments[4]), let size = Int(arguments[5]) else {
        fail("bad arguments")
    }
    let keychain = open(arguments[2], arguments[3])
    say("ready")
    while true {
        let items = (0..<size).map { number in
            NewItem(
                .genericPassword,
                attributes: [
                    .service: .string("batch"), .account: .string("b\(batch)-\(number)"), .label: .string("b\(batch)"),
                ], data: Data("b\(batch)-\(number)".utf8))
        }
        do {
            try keychain.addAll(items, caller: caller)
        } catch {
            fail("batch \(batch): \(error)")
        }
        say("ack \(batch)")
        batch += 1
    }

case "readme-swift-api":
    ReadmeExamples.swiftAPI()

case "readme-swift-api-state":
    do {
        try ReadmeExamples.swiftAPIState()
    } catch {
        fail("\(error)")
    }

case "hold-write":
    // hold-write <path> <passphrase> <seconds>: opens a write transaction, says "holding", keeps it open.
    guard arguments.count == 5, let seconds = Double(arguments[4]) else { fail("bad arguments") }
    let keychain = open(arguments[2], arguments[3])
    do {
        try keychain.holdWriteTransaction(seconds: seconds) { say("holding") }
    } catch {
        fail("hold-write: \(error)")
    }

case "feed-writer":
    // feed-writer <path> <passphrase> <n>: adds n items, then prints the change feed as "<seq> <kind>".
    guard arguments.count == 5, let count = Int(arguments[4]) else { fail("bad arguments") }
    let keychain = open(arguments[2], arguments[3])
    do {
        for index in 0..<count { try keychain.add(item("feed-\(index)", "value"), caller: caller) }
        for change in try keychain.changes(after: 0) { say("\(change.sequence) \(change.kind)") }
    } catch {
        fail("feed-writer: \(error)")
    }

case "make-fixture":
    // make-fixture <directory>: a keychain of every kind of content this Latchkey writes — the fixture a
    // format migration is tested against (Tests/Fixtures/format-v1 was made by this command at format v1).
    guard arguments.count == 3 else { fail("bad arguments") }
    let path = arguments[2] + "/login.keychain"
    let passphrase = Passphrase("fixture passphrase")
    do {
        let keychain = try KeychainDatabase.create(at: path, passphrase: passphrase, keyDerivation: .minimum)
        let app = CallerIdentity(
            applicationIdentifier: "com.example.app", accessGroups: ["com.example.app", "com.example.shared"])
        let other = CallerIdentity(applicationIdentifier: "com.example.other")
        func generic(
            _ service: String, _ account: String, _ secret: String, _ extra: [AttributeKey: AttributeValue] = [:]
        ) -> NewItem {
            NewItem(
                .genericPassword,
                attributes: [.service: .string(service), .account: .string(account)].merging(extra) { _, new in new },
                data: Data(secret.utf8))
        }
        try keychain.add(
            generic("mail", "alice", "ak-secret", [.label: .string("Mail"), .comment: .string("a comment")]),
            caller: app)
        try keychain.add(generic("mail", "bob", "ck-secret", [.accessible: .string("ck")]), caller: app)
        try keychain.add(generic("mail", "carol", "dk-secret", [.accessible: .string("dk")]), caller: app)
        try keychain.add(generic("mail", "dave", "aku-secret", [.accessible: .string("aku")]), caller: app)
        try keychain.add(
            generic("shared", "erin", "shared-secret", [.accessGroup: .string("com.example.shared")]), caller: app)
        try keychain.add(generic("mail", "alice", "other-group-secret"), caller: other)
        try keychain.add(generic("synced", "frank", "sync-secret", [.synchronizable: .bool(true)]), caller: app)
        try keychain.add(generic("synced", "gone", "deleted-secret", [.synchronizable: .bool(true)]), caller: app)
        try keychain.delete(
            ItemQuery(.genericPassword, matching: [.account: .string("gone")], synchronizable: .yes), caller: app)
        try keychain.add(
            NewItem(
                .internetPassword,
                attributes: [
                    .server: .string("example.com"), .account: .string("web"), .protocol: .string("htps"),
                    .port: .number(443),
                    .path: .string("/login"), .authenticationType: .string("form"), .securityDomain: .string("realm"),
                ], data: Data("inet-secret".utf8)), caller: app)
        try keychain.add(
            NewItem(
                .genericPassword,
                attributes: [
                    .service: .string("binary"), .account: .string("blob"),
                    .generic: .data(Data([0, 1, 2, 255])),
                ],
                data: Data([0xde, 0xad, 0xbe, 0xef])), caller: app)
        try keychain.addAll(
            (0..<1_000).map {
                generic("bulk-\($0 / 10)", "account-\($0)", "bulk-secret-\($0)", [.label: .string("Bulk \($0)")])
            },
            caller: app)
        try keychain.updateSettings(KeychainSettings(autoLockAfterSeconds: 300, lockOnSleep: true))
        try keychain.register(
            ApplicationRegistration(
                executablePath: "/usr/bin/true", executableDigest: Data(repeating: 7, count: 32),
                applicationIdentifier: "com.example.app", accessGroups: ["com.example.app"]),
            passphrase: passphrase)
    } catch {
        fail("make-fixture: \(error)")
    }
    say("made \(path)")

case "prompt-without-terminal":
    // prompt-without-terminal: asks for a passphrase on the terminal; prints the status and detail.
    do {
        _ = try PassphraseSource.prompt.read()
        say("read a passphrase")
    } catch {
        say("\(error.status.rawValue) \(error.detail ?? "")")
    }

case "create-with-umask":
    // create-with-umask <path> <passphrase> <octal umask>
    guard arguments.count == 5, let mask = mode_t(arguments[4], radix: 8) else { fail("bad arguments") }
    umask(mask)
    do {
        _ = try KeychainDatabase.create(at: arguments[2], passphrase: Passphrase(arguments[3]), keyDerivation: .minimum)
        let keychain = open(arguments[2], arguments[3])
        try keychain.add(item("umask", "value"), caller: caller)
        // While the keychain is open its write-ahead log and shared memory exist: report their modes.
        for suffix in ["-wal", "-shm"] {
            var info = stat()
            guard stat(arguments[2] + suffix, &info) == 0 else { fail("no \(suffix) while open") }
            say("\(suffix) \(String(info.st_mode & 0o7777, radix: 8))")
        }
    } catch {
        fail("create: \(error)")
    }
    say("created")

case "writer":
    // writer <path> <passphrase> <seed> <keys>: forever, pick a key and write version n+1 of it; print
    // "ack <key> <value>" only after the write returned success.
    guard arguments.count == 6, var seed = UInt64(arguments[4]), let keys = Int(arguments[5]) else {
        fail("bad arguments")
    }
    let keychain = open(arguments[2], arguments[3])
    var versions: [String: Int] = [:]
    for index in 0..<keys {
        let key = "k\(index)"
        if let found = try? keychain.copyMatching(
            ItemQuery(
                .genericPassword, matching: [.service: .string("crash"), .account: .string(key)], returning: [.data]),
            caller: caller
        ).first, let text = found.data.flatMap({ String(data: $0, encoding: .utf8) }),
            let number = Int(text.split(separator: "-").last ?? "")
        {
            versions[key] = number
        }
    }
    say("ready")
    while true {
        seed = seed &* 6364136223846793005 &+ 1442695040888963407
        let key = "k\(Int(seed >> 33) % keys)"
        let next = (versions[key] ?? 0) + 1
        let value = "\(key)-" + String(repeating: "x", count: Int(seed >> 50) % 4000) + "-\(next)"
        do {
            if versions[key] == nil {
                try keychain.add(item(key, value), caller: caller)
            } else {
                try keychain.update(query(key), with: ItemChanges(data: Data(value.utf8)), caller: caller)
            }
        } catch {
            fail("write \(key): \(error)")
        }
        versions[key] = next
        say("ack \(key) \(next)")
    }

case "power-writer":
    // power-writer <path> <passphrase> <seed> <keys> <honor-syncs 1|0> <writes>: under the power-loss VFS,
    // write <writes> versions of random keys, printing "ack <key> <version>" after each success, then end
    // at once without closing the keychain (no checkpoint at close): the test cuts the power there.
    guard arguments.count == 8, var seed = UInt64(arguments[4]), let keys = Int(arguments[5]),
        let honor = Int32(arguments[6]),
        let writes = Int(arguments[7])
    else { fail("bad arguments") }
    guard latchkey_power_loss_register(honor) == 0 else { fail("cannot register the power-loss VFS") }
    let keychain = open(arguments[2], arguments[3])
    var versions: [String: Int] = [:]
    for _ in 0..<writes {
        seed = seed &* 6364136223846793005 &+ 1442695040888963407
        let key = "k\(Int(seed >> 33) % keys)"
        let next = (versions[key] ?? 0) + 1
        let value = "\(key)-" + String(repeating: "x", count: Int(seed >> 50) % 2000) + "-\(next)"
        do {
            if versions[key] == nil {
                try keychain.add(item(key, value), caller: caller)
            } else {
                try keychain.update(query(key), with: ItemChanges(data: Data(value.utf8)), caller: caller)
            }
        } catch {
            fail("write \(key): \(error)")
        }
        versions[key] = next
        say("ack \(key) \(next)")
    }
    _exit(0)

case "adder":
    // adder <path> <passphrase> <prefix> <count>: add, read back and update <count> items of its own.
    guard arguments.count == 6, let count = Int(arguments[5]) else { fail("bad arguments") }
    let keychain = open(arguments[2], arguments[3])
    let prefix = arguments[4]
    do {
        for index in 0..<count {
            try keychain.add(item("\(prefix)-\(index)", "v1"), caller: caller)
        }
        for index in 0..<count {
            try keychain.update(query("\(prefix)-\(index)"), with: ItemChanges(data: Data("v2".utf8)), caller: caller)
            let found = try keychain.copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.service: .string("crash"), .account: .string("\(prefix)-\(index)")],
                    returning: [.data]), caller: caller)
            guard found.first?.data == Data("v2".utf8) else { fail("read back a wrong value") }
        }
    } catch {
        fail("adder: \(error)")
    }
    say("done")

case "filler":
    // filler <path> <passphrase> <file size limit in bytes> <count>: under RLIMIT_FSIZE (writes past the
    // limit fail with EFBIG, as a quota or a failing disk would), add 8 KiB items until one fails; print
    // "ack <key>" per success, then "fail <status>", then the status of a read and of a second write.
    guard arguments.count == 6, let limit = UInt64(arguments[4]), let count = Int(arguments[5]) else {
        fail("bad arguments")
    }
    let keychain = open(arguments[2], arguments[3])
    signal(SIGXFSZ, SIG_IGN)
    var limits = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t(limit))
    guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limits) == 0 else { fail("setrlimit: \(errno)") }
    var acknowledged: [String] = []
    for index in 0..<count {
        let key = "fill-\(index)"
        do {
            try keychain.add(item(key, key + String(repeating: "·", count: 4096)), caller: caller)
            acknowledged.append(key)
            say("ack \(key)")
        } catch {
            say("fail \(error.status.rawValue)")
            break
        }
    }
    func status(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "0"
        } catch {
            return "\((error as? KeychainError)?.status.rawValue ?? -1)"
        }
    }
    say(
        "read "
            + status {
                guard let key = acknowledged.first else { return }
                _ = try keychain.copyMatching(query(key), caller: caller)
            })
    say(
        "write "
            + status { try keychain.add(item("after-failure", String(repeating: "·", count: 8192)), caller: caller) })

case "mixer":
    // mixer <path> <passphrase> <worker> <seed> <operations>: two threads, each owning ten keys
    // ("<worker>.<thread>.<n>"), run random adds, updates, upserts, deletes and reads on them while the
    // other workers do the same; every status must be the one a serial model of its own keys predicts.
    // Prints "final <key> <value>" for every key the model holds at the end, then "done".
    guard arguments.count == 7, let seed = UInt64(arguments[5]), let operations = Int(arguments[6]) else {
        fail("bad arguments")
    }
    let keychain = open(arguments[2], arguments[3])
    let worker = arguments[4]
    let lines = Mutex<[String]>([])
    let failures = Mutex<[String]>([])
    DispatchQueue.concurrentPerform(iterations: 2) { thread in
        var state = seed &+ UInt64(thread) &* 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(truncatingIfNeeded: state >> 33)
        }
        var model: [String: String] = [:]
        func expect(_ what: String, _ expected: Int32, _ body: () throws -> Void) {
            do {
                try body()
                if expected != 0 { failures.withLock { $0.append("\(what): success, expected \(expected)") } }
            } catch {
                let status = (error as? KeychainError)?.status.rawValue ?? -1
                if status != expected {
                    failures.withLock { $0.append("\(what): \(status) (\(error)), expected \(expected)") }
                }
            }
        }
        for step in 0..<operations {
            let key = "\(worker).\(thread).\(next() % 10)"
            let value = "\(key)#\(step)"
            let present = model[key] != nil
            switch next() % 5 {
            case 0:
                expect("add \(key)", present ? -25299 : 0) { try keychain.add(item(key, value), caller: caller) }
                if !present { model[key] = value }
            case 1:
                expect("update \(key)", present ? 0 : -25300) {
                    try keychain.update(query(key), with: ItemChanges(data: Data(value.utf8)), caller: caller)
                }
                if present { model[key] = value }
            case 2:
                expect("upsert \(key)", 0) { _ = try keychain.addOrUpdate(item(key, value), caller: caller) }
                model[key] = value
            case 3:
                expect("delete \(key)", present ? 0 : -25300) { _ = try keychain.delete(query(key), caller: caller) }
                model[key] = nil
            default:
                var found: String?
                expect("read \(key)", present ? 0 : -25300) {
                    let items = try keychain.copyMatching(
                        ItemQuery(
                            .genericPassword, matching: [.service: .string("crash"), .account: .string(key)],
                            returning: .data), caller: caller)
                    found = items.first?.data.map { String(decoding: $0, as: UTF8.self) }
                }
                if found != model[key] {
                    failures.withLock { $0.append("read \(key): \(found ?? "nil"), expected \(model[key] ?? "nil")") }
                }
            }
        }
        let finals = model.map { "final \($0.key) \($0.value)" }
        lines.withLock { $0.append(contentsOf: finals) }
    }
    for failure in failures.withLock({ $0 }) { FileHandle.standardError.write(Data((failure + "\n").utf8)) }
    guard failures.withLock({ $0.isEmpty }) else { exit(2) }
    for line in lines.withLock({ $0 }).sorted() { say(line) }
    say("done")

case "api":
    // api set|get|remove <service> <key> [value]: the friendly Keychain API on the default connection
    // (LATCHKEY_KEYCHAIN, LATCHKEY_PASSPHRASE, LATCHKEY_APPLICATION_ID), as an app in its own process would.
    guard arguments.count >= 5 else { fail("bad arguments") }
    let keychain = Keychain(service: arguments[3])
    do {
        switch arguments[2] {
        case "set" where arguments.count == 6: try keychain.set(arguments[5], forKey: arguments[4])
        case "get": say(try keychain.string(forKey: arguments[4]) ?? "<nil>")
        case "remove": say(try keychain.remove(arguments[4]) ? "removed" : "absent")
        case "set-login" where arguments.count == 8:
            try keychain.set(
                LoginInfo(enterpriseID: arguments[5], account: arguments[6], password: arguments[7]),
                forKey: arguments[4])
        case "get-login":
            let info = try keychain.value(LoginInfo.self, forKey: arguments[4])
            say(info.map { "\($0.enterpriseID) \($0.account) \($0.password)" } ?? "<nil>")
        default: fail("bad api command")
        }
    } catch {
        fail("api: \(error.status.rawValue) \(error.message)")
    }

case "seed":
    // seed save|read|delete [enterprise account password]: ZJKeyChainManager over the global SecItem
    // functions and the default connection.
    guard arguments.count >= 3 else { fail("bad arguments") }
    switch arguments[2] {
    case "save" where arguments.count == 6:
        ZJKeyChainManager.saveLoginInfoToKeyChain(
            enterpriseID: arguments[3], account: arguments[4], password: arguments[5])
        say(SecCopyLastErrorDetail() ?? "saved")
    case "read":
        let info = ZJKeyChainManager.readLoginInfoFromKeyChain()
        say(info.isEmpty ? "<empty>" : info.joined(separator: " "))
    case "delete":
        ZJKeyChainManager.deleteLoginInfoFromKeyChain()
        say("deleted")
    default: fail("bad seed command")
    }

default:
    fail("unknown command \(arguments[1])")
}

/// The seeds' login information as a Codable value.
struct LoginInfo: Codable {
    var enterpriseID: String
    var account: String
    var password: String
}
