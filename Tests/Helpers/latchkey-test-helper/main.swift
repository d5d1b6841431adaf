// A helper the tests spawn as a separate process: to create a keychain under a chosen umask, to write
// while being killed, and to hammer one file from several processes.
import Foundation
import Latchkey
import LatchkeySecurity
import SeedManagers

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

func item(_ key: String, _ value: String) -> NewItem {
    NewItem(.genericPassword, attributes: [.service: .string("crash"), .account: .string(key)], data: Data(value.utf8))
}

func query(_ key: String) -> ItemQuery {
    ItemQuery(.genericPassword, matching: [.service: .string("crash"), .account: .string(key)])
}

switch arguments[1] {
case "create-with-umask":
    // create-with-umask <path> <passphrase> <octal umask>
    guard arguments.count == 5, let mask = mode_t(arguments[4], radix: 8) else { fail("bad arguments") }
    umask(mask)
    do {
        _ = try KeychainDatabase.create(at: arguments[2], passphrase: Passphrase(arguments[3]), keyDerivation: .minimum)
        let keychain = open(arguments[2], arguments[3])
        try keychain.add(item("umask", "value"), caller: caller)
    } catch {
        fail("create: \(error)")
    }
    say("created")

case "writer":
    // writer <path> <passphrase> <seed> <keys>: forever, pick a key and write version n+1 of it; print
    // "ack <key> <value>" only after the write returned success.
    guard arguments.count == 6, var seed = UInt64(arguments[4]), let keys = Int(arguments[5]) else { fail("bad arguments") }
    let keychain = open(arguments[2], arguments[3])
    var versions: [String: Int] = [:]
    for index in 0..<keys {
        let key = "k\(index)"
        if let found = try? keychain.copyMatching(
            ItemQuery(.genericPassword, matching: [.service: .string("crash"), .account: .string(key)], returning: [.data]),
            caller: caller).first, let text = found.data.flatMap({ String(data: $0, encoding: .utf8) }),
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
                ItemQuery(.genericPassword, matching: [.service: .string("crash"), .account: .string("\(prefix)-\(index)")],
                          returning: [.data]), caller: caller)
            guard found.first?.data == Data("v2".utf8) else { fail("read back a wrong value") }
        }
    } catch {
        fail("adder: \(error)")
    }
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
            try keychain.set(LoginInfo(enterpriseID: arguments[5], account: arguments[6], password: arguments[7]),
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
        ZJKeyChainManager.saveLoginInfoToKeyChain(enterpriseID: arguments[3], account: arguments[4], password: arguments[5])
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
