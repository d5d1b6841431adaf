// The program the agent tests register and run: a tiny application using the Keychain API on the default
// connection (the agent when it runs, else the keychain opened in process), plus raw protocol probes.
import Foundation
import Latchkey
import LatchkeyProtocol
import LatchkeySecurity

public enum TestClient {
    static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    public static func main(_ arguments: [String]) -> Int32 {
        guard arguments.count >= 1 else {
            say("usage: client set|get|remove|status|wait|hello ...")
            return 64
        }
        do {
            switch arguments[0] {
            case "set" where arguments.count == 4:
                try Keychain(service: arguments[1]).set(arguments[3], forKey: arguments[2])
                say("ok")
            case "set-ck" where arguments.count == 4:
                try Keychain(service: arguments[1]).accessibility(.afterFirstUnlock).set(
                    arguments[3], forKey: arguments[2])
                say("ok")
            case "get" where arguments.count == 3:
                say(try Keychain(service: arguments[1]).string(forKey: arguments[2]) ?? "<nil>")
            case "keys" where arguments.count == 2:
                say(try Keychain(service: arguments[1]).allKeys().joined(separator: ","))
            case "remove" where arguments.count == 3:
                say(try Keychain(service: arguments[1]).remove(arguments[2]) ? "removed" : "absent")
            case "shared-get" where arguments.count == 4:
                say(
                    try Keychain(service: arguments[1], accessGroup: arguments[3]).string(forKey: arguments[2])
                        ?? "<nil>")
            case "get-twice" where arguments.count == 4:
                // get-twice <service> <key> <trigger file>: reads, waits for the trigger file to appear (the test
                // stops the agent meanwhile), reads again in the same process.
                say(try Keychain(service: arguments[1]).string(forKey: arguments[2]) ?? "<nil>")
                while !FileManager.default.fileExists(atPath: arguments[3]) { usleep(10_000) }
                say(try Keychain(service: arguments[1]).string(forKey: arguments[2]) ?? "<nil>")
            case "set-many" where arguments.count == 3:
                // set-many <service> <count>: that many stores and reads in one process (one connection).
                let keychain = Keychain(service: arguments[1])
                for index in 0..<(Int(arguments[2]) ?? 0) {
                    try keychain.set("v\(index)", forKey: "k\(index)")
                    guard try keychain.string(forKey: "k\(index)") == "v\(index)" else {
                        say("read back wrong")
                        return 1
                    }
                }
                say("ok")
            case "set-wait-set" where arguments.count == 6:
                // set-wait-set <service> <key> <other key> <value> <trigger file>: stores a value, waits for the
                // trigger file (the test changes the registrations meanwhile), stores it under the other key.
                let keychain = Keychain(service: arguments[1])
                try keychain.set(arguments[4], forKey: arguments[2])
                say("first")
                while !FileManager.default.fileExists(atPath: arguments[5]) { usleep(10_000) }
                try keychain.set(arguments[4], forKey: arguments[3])
                say("second")
            case "secitem-set" where arguments.count == 4:
                // Apple's functions on the default configuration: the agent when it serves this program.
                let status = SecItemAdd(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: arguments[1],
                        kSecAttrAccount as String: arguments[2], kSecValueData as String: Data(arguments[3].utf8),
                    ] as CFDictionary, nil)
                say("SecItemAdd \(status)")
            case "held-key" where arguments.count == 3:
                // held-key <tag> <trigger file>: makes a key the agent holds (as Apple code makes a Secure Enclave
                // key), signs with it, finds it again by its tag and signs again; prints the public key and the
                // signatures, then waits for the trigger file (the test reads this process's memory meanwhile).
                var error: Unmanaged<CFError>?
                let tag = Data(arguments[1].utf8)
                guard
                    let key = SecKeyCreateRandomKey(
                        [
                            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
                            kSecAttrKeySizeInBits as String: 256,
                            kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
                            kSecPrivateKeyAttrs as String: [
                                kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: tag,
                            ],
                        ] as CFDictionary, &error)
                else {
                    say("SecKeyCreateRandomKey \(error?.takeRetainedValue().code ?? 0)")
                    return 1
                }
                let message = Data("signed where the key is held".utf8) as CFData
                var found: CFTypeRef?
                let status = SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag,
                        kSecReturnRef as String: true,
                    ] as CFDictionary, &found)
                guard status == errSecSuccess, let again = found as? SecKey,
                    let first = SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message, &error) as Data?,
                    let second = SecKeyCreateSignature(again, .ecdsaSignatureMessageX962SHA256, message, &error)
                        as Data?,
                    let publicKey = SecKeyCopyExternalRepresentation(SecKeyCopyPublicKey(key)!, &error) as Data?
                else {
                    say("failed \(status) \(error?.takeRetainedValue().code ?? 0)")
                    return 1
                }
                let exported =
                    SecKeyCopyExternalRepresentation(key, &error) == nil
                    ? "refused \(error?.takeRetainedValue().code ?? 0)" : "exported"
                func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
                say("public \(hex(publicKey)) first \(hex(first)) second \(hex(second)) export \(exported)")
                while !FileManager.default.fileExists(atPath: arguments[2]) { usleep(10_000) }
                withExtendedLifetime((key, again)) { say("done") }
            case "ephemeral-key" where arguments.count == 2:
                // ephemeral-key <trigger file>: makes an ephemeral key in the agent (Apple's non-permanent token
                // key), prints its handle, and keeps running until the trigger file appears.
                guard let client = try AgentClient.connect(keychainPath: KeychainLocation.defaultPath()) else {
                    say("no agent")
                    return 1
                }
                let service = AgentKeychainService(client: client)
                guard
                    let made = try service.createHeldKey(
                        HeldKeyRequest(type: .ellipticCurve, bits: 256, isPermanent: false),
                        returning: [.data])
                else {
                    say("no key")
                    return 1
                }
                say("handle " + made.persistentReference.map { String(format: "%02x", $0) }.joined())
                while !FileManager.default.fileExists(atPath: arguments[1]) { usleep(10_000) }
                say("done")
            case "fork-ephemeral":
                // fork-ephemeral: makes an ephemeral key in the agent, forks, lets the child's copy of the key's
                // handle go (and the child exit), then signs with it in the parent: "parent signed" or the status.
                guard let client = try AgentClient.connect(keychainPath: KeychainLocation.defaultPath()) else {
                    say("no agent")
                    return 1
                }
                let service = AgentKeychainService(client: client)
                guard
                    let made = try service.createHeldKey(
                        HeldKeyRequest(type: .ellipticCurve, bits: 256, isPermanent: false),
                        returning: [.attributes, .data])
                else {
                    say("no key")
                    return 1
                }
                var held: HeldKey? = try HeldKey(result: made, service: service)
                let child = fork()
                guard child >= 0 else {
                    say("fork failed")
                    return 1
                }
                if child == 0 {
                    held = nil  // The child's copy goes; its deinit runs here, in the child.
                    _exit(0)
                }
                var status: Int32 = 0
                guard waitpid(child, &status, 0) == child else {
                    say("wait failed")
                    return 1
                }
                do {
                    _ = try held?.sign(KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256"), Data("m".utf8))
                    say("parent signed")
                } catch {
                    say("parent status \(error.status.rawValue)")
                }
            case "use-key" where arguments.count == 2:
                // use-key <handle as hex>: signs with the agent's key of that handle; prints "signed" or the status.
                guard let client = try AgentClient.connect(keychainPath: KeychainLocation.defaultPath()) else {
                    say("no agent")
                    return 1
                }
                var handle = Data()
                var text = Substring(arguments[1])
                while text.count >= 2, let byte = UInt8(text.prefix(2), radix: 16) {
                    handle.append(byte)
                    text = text.dropFirst(2)
                }
                do {
                    _ = try AgentKeychainService(client: client).useHeldKey(
                        handle,
                        for: .sign(KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256"), Data("m".utf8)))
                    say("signed")
                } catch {
                    say("status \(error.status.rawValue)")
                }
            case "secitem-get" where arguments.count == 3:
                var result: CFTypeRef?
                let status = SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: arguments[1],
                        kSecAttrAccount as String: arguments[2], kSecReturnData as String: true,
                    ] as CFDictionary, &result)
                say(
                    "SecItemCopyMatching \(status) \((result as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "-")"
                )
            case "secitem-set-protected" where arguments.count == 4:
                // secitem-set-protected <service> <account> <secret>: an item released only after the user confirms.
                guard
                    let control = SecAccessControlCreateWithFlags(
                        kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, .userPresence, nil)
                else {
                    say("SecAccessControlCreateWithFlags failed")
                    return 1
                }
                let status = SecItemAdd(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: arguments[1],
                        kSecAttrAccount as String: arguments[2], kSecValueData as String: Data(arguments[3].utf8),
                        kSecAttrAccessControl as String: control,
                    ] as CFDictionary, nil)
                say("SecItemAdd \(status)")
            case "secitem-get-ui" where arguments.count >= 4:
                // secitem-get-ui <service> <account> <allow|fail|skip> [operation prompt]
                let modes = [
                    "allow": kSecUseAuthenticationUIAllow, "fail": kSecUseAuthenticationUIFail,
                    "skip": kSecUseAuthenticationUISkip,
                ]
                guard let mode = modes[arguments[3]] else { return 64 }
                var query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: arguments[1],
                    kSecAttrAccount as String: arguments[2], kSecReturnData as String: true,
                    kSecUseAuthenticationUI as String: mode,
                ]
                if arguments.count > 4 { query[kSecUseOperationPrompt as String] = arguments[4] }
                var result: CFTypeRef?
                let status = SecItemCopyMatching(query as CFDictionary, &result)
                say(
                    "SecItemCopyMatching \(status) \((result as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "-")"
                )
            case "status":
                guard let client = try AgentClient.connect(keychainPath: KeychainLocation.defaultPath()) else {
                    say("no agent")
                    return 0
                }
                let status = try client.status()
                let identity = status.caller.identity
                say(
                    "\(status.lockState) \(status.caller) \(identity?.applicationIdentifier ?? "-") \(identity?.accessGroups.joined(separator: ",") ?? "")"
                )
            case "wait" where arguments.count <= 2:
                // wait [seconds]: says "waiting" first, so a test can tell the wait began before it unlocks.
                let seconds = arguments.count == 2 ? Int(arguments[1]) ?? 20 : 20
                let semaphore = DispatchSemaphore(value: 0)
                let outcome = Outcome()
                say("waiting")
                Task {
                    do {
                        try await KeychainConnection.default.waitUntilProtectedDataAvailable(timeout: .seconds(seconds))
                        outcome.text = "available"
                    } catch {
                        outcome.text = "failed \((error as? KeychainError)?.status.rawValue ?? 0)"
                    }
                    semaphore.signal()
                }
                semaphore.wait()
                say(outcome.text)
            case "hello":
                // A raw hello: prints the agent's answer, even a refusal (which the API would turn into a fallback).
                guard let stream = AgentStream.connect(path: AgentLocation.socketPath()) else {
                    say("cannot connect")
                    return 0
                }
                // The agent greets a process it serves; it refuses any other with a response instead.
                let first = try stream.receive()
                let response: AgentResponse
                if let greeting = try? AgentGreeting.decode(first) {
                    try stream.send(
                        AgentRequest.hello(keychainPath: KeychainLocation.defaultPath(), challenge: greeting.challenge)
                            .encoded(id: 1))
                    response = try AgentResponse.decode(try stream.receive())
                } else {
                    response = try AgentResponse.decode(first)  // A refusal instead of a greeting.
                }
                switch response.outcome {
                case .success: say("0 ")
                case .failure(let error): say("\(error.status.rawValue) \(error.detail ?? "")")
                }
            default:
                say("bad command")
                return 64
            }
            return 0
        } catch let failure as KeychainFailure {
            say("error \(failure.status.rawValue) \(failure.error.detail ?? "")")
            return 1
        } catch let error as KeychainError {
            say("error \(error.status.rawValue) \(error.detail ?? "")")
            return 1
        } catch {
            say("error \(error)")
            return 1
        }
    }
}

/// A box for the result of the waiting task (set once, read after the semaphore).
final class Outcome: @unchecked Sendable {
    // @unchecked: written by the task before it signals, read by the main thread after it waits.
    var text = ""
}
