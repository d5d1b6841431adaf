import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

/// An item's access list through the agent's socket: a program the agent does not serve reads the one item
/// `latchkey access add` lists it on — nothing else of that group — across agent restarts, and not once it
/// is taken off (at once, in the same agent).
@Suite(.serialized, .dedicatedThreads) struct AgentAccessListTests {
    /// The reference, in hex, of client a's item `service`/`key`.
    func reference(_ sandbox: AgentSandbox, service: String, key: String) throws -> String {
        let database = try KeychainDatabase.open(at: sandbox.keychainPath)
        try database.unlock(with: Passphrase(AgentSandbox.passphrase))
        let found = try database.copyMatching(
            ItemQuery(
                .genericPassword, matching: [.service: .string(service), .account: .string(key)],
                returning: .reference),
            caller: CallerIdentity(applicationIdentifier: "test", accessGroups: ["*"]))
        return Hex.encode(try #require(found.first?.persistentReference))
    }

    @Test func aListedProgramReadsTheItemUntilItIsTakenOff() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.register(AgentSandbox.clientPath("a"), appID: "com.example.a", groups: ["a"])
        #expect(try sandbox.client("a", "set", "mail", "k", "secret one") == "ok\n")
        #expect(try sandbox.client("a", "set", "mail", "other", "secret two") == "ok\n")
        let b = AgentSandbox.clientPath("b")
        // No display to ask on (the agent sandbox has none): the refusal names the command that grants the item.
        func refusal(_ item: String) -> String {
            "error -34018 \(b) is not registered with the agent; register it with `latchkey register-application \(b)`, "
                + "or let it open the keychain with the passphrase; \(b) is not on the access list of an item it asked "
                + "for, and there is no display or terminal to ask on: to let it read the item, latchkey access add "
                + "\(item) \(b); without the agent: no terminal to ask for the passphrase; "
                + "set LATCHKEY_PASSPHRASE or pass a file descriptor\n"
        }
        let item = try reference(sandbox, service: "mail", key: "k")
        let other = try reference(sandbox, service: "mail", key: "other")
        #expect(try sandbox.client("b", "get", "mail", "k") == refusal(item))

        let added = try sandbox.cli("access", "add", item, b)
        #expect(added.stdout == "\(b) may now read item \(item)\n", "\(added.stderr)")
        #expect(try sandbox.client("b", "get", "mail", "k") == "secret one\n")
        #expect(try sandbox.client("b", "get", "mail", "other") == refusal(other), "only the listed item")
        #expect(sandbox.agentLog.contains("granted access to an item for \(b) (executable "), "\(sandbox.agentLog)")
        let listed = try sandbox.cli("access", "list").stdout
        #expect(listed.hasPrefix("\(item) genp service=mail account=k\n    executable \(b) "), "\(listed)")

        // Kept across a restart of the agent (the list is in the keychain).
        sandbox.stop()
        try sandbox.start()
        try sandbox.unlock()
        #expect(try sandbox.client("b", "get", "mail", "k") == "secret one\n")

        #expect(try sandbox.cli("access", "remove", item, b).status == 0)
        #expect(try sandbox.client("b", "get", "mail", "k") == refusal(item), "revoked at once")
    }
}
