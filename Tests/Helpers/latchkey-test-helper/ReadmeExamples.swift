// swift-format-ignore-file
// (Its code is the README's examples, kept as the README prints them: a test finds each README block here verbatim.)
// The README's "Swift API" examples, verbatim, run in a process of their own: they use the default
// connection, which reads LATCHKEY_KEYCHAIN and LATCHKEY_PASSPHRASE from the environment — which a test
// passes to this process instead of changing its own. ReadmeExampleTests checks they match the README.
import Foundation
import Latchkey

enum ReadmeExamples {
    /// README: "The Swift API", the whole `main.swift`: it prints its values, or which failure it met.
    static func swiftAPI() {
        let keychain = Keychain(service: "com.example.mail")
        do {
            try keychain.set("hunter2", forKey: "alice@example.com")           // an atomic upsert
            let password = try keychain.string(forKey: "alice@example.com")    // nil when there is none
            print(password ?? "no password")                                    // hunter2
            try keychain.remove("alice@example.com")

            // Codable values: stored as JSON (sorted keys, dates as seconds since 2001, data as Base64).
            struct LoginInfo: Codable { var enterpriseID: String; var account: String; var password: String }
            try keychain.set(LoginInfo(enterpriseID: "jit-001", account: "alice", password: "hunter2"), forKey: "login")
            let login = try keychain.value(LoginInfo.self, forKey: "login")
            print(login?.account ?? "no login")                                 // alice

            // Modifiers return copies.
            let background = keychain.accessibility(.afterFirstUnlock).label("Mail sync token")
            try background.set("token-123", forKey: "sync")
            let keys = try keychain.allKeys()
            print(keys)                                                         // ["login", "sync"]

            // Internet passwords are keyed by server, protocol, port, path, authentication type, security domain.
            let web = Keychain(server: "example.com", protocol: .https, port: 443)
            try web.set("pa55", forKey: "alice")
        } catch .interactionNotAllowed {
            // Locked, or no passphrase to unlock with (no LATCHKEY_PASSPHRASE and no terminal to ask on): run it on
            // a terminal, give it a passphrase source (below), or use an afterFirstUnlock item for background work.
            print("the keychain is locked")
        } catch {
            print("\(error.status.name) \(error.status.rawValue): \(error.message)")
        }
    }

    /// What the example left in the keychain, read back: the removed item gone, the others as written.
    static func swiftAPIState() throws {
        let keychain = Keychain(service: "com.example.mail")
        let web = Keychain(server: "example.com", protocol: .https, port: 443)
        say("after remove \(try keychain.string(forKey: "alice@example.com") ?? "<nil>")")
        say("login \(try keychain.string(forKey: "login") ?? "<nil>")")
        say("sync \(try keychain.string(forKey: "sync") ?? "<nil>") \(try keychain.attributes(forKey: "sync")?.label ?? "-")")
        say("web \(try web.string(forKey: "alice") ?? "<nil>")")
    }
}
