import Foundation
import LatchkeyEngine
import LatchkeyPKI
import LatchkeyProtocol
import Testing

/// How long a client polls for the agent's reply (`ReplyWait`): the default until a kind of request has been
/// timed, then about as long as that kind takes, never beyond 1.5 ms; kinds are told apart by operation and,
/// for held keys, by key and use.
@Suite struct ReplyWaitTests {
    static let lookup = AgentRequest.keychain(.status).waitKind
    static let ecdsa = KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")

    @Test func anUntimedKindPollsForTheDefault() {
        #expect(ReplyWait().spin(for: Self.lookup) == AgentFrame.replySpinNanoseconds)
    }

    @Test func aQuickKindPollsAtLeastTheDefaultAndASlowerOneAsLongAsItTakes() {
        var wait = ReplyWait()
        wait.record(Self.lookup, nanoseconds: 20_000)
        #expect(wait.spin(for: Self.lookup) == AgentFrame.replySpinNanoseconds)
        let rsa = AgentRequest.keychain(
            .useHeldKey(reference: Data(repeating: 1, count: 32), use: .sign(Self.ecdsa, Data()))
        ).waitKind
        wait.record(rsa, nanoseconds: 800_000)
        #expect(wait.spin(for: rsa) == 800_000 + 200_000 + 50_000)
        // Smoothed: one faster reply moves the estimate a quarter of the way.
        wait.record(rsa, nanoseconds: 400_000)
        #expect(wait.spin(for: rsa) == 700_000 + 175_000 + 50_000)
    }

    @Test func aKindSlowerThanTheLongestPollSleepsAfterTheDefault() {
        var wait = ReplyWait()
        let durable = AgentRequest.keychain(.delete(ItemQuery(.genericPassword))).waitKind
        wait.record(durable, nanoseconds: 1_300_000)  // 1.3 ms + a quarter + 50 µs is over 1.5 ms.
        #expect(wait.spin(for: durable) == AgentFrame.replySpinNanoseconds)
    }

    @Test func aLongWaitIsForgottenAfterAFewQuickOnes() {
        var wait = ReplyWait()
        let use = AgentRequest.keychain(
            .useHeldKey(reference: Data(repeating: 2, count: 32), use: .sign(Self.ecdsa, Data()))
        ).waitKind
        wait.record(use, nanoseconds: 100_000)
        wait.record(use, nanoseconds: 30_000_000_000)  // The user took 30 s at a prompt.
        #expect(wait.spin(for: use) == AgentFrame.replySpinNanoseconds)
        for _ in 0..<8 { wait.record(use, nanoseconds: 100_000) }
        #expect(wait.spin(for: use) < ReplyWait.longestSpin)
        #expect(wait.spin(for: use) > AgentFrame.replySpinNanoseconds)
    }

    @Test func heldKeysAndTheirUsesAreKindsOfTheirOwn() {
        let first = Data(repeating: 1, count: 32)
        let second = Data(repeating: 2, count: 32)
        let sign = AgentRequest.keychain(.useHeldKey(reference: first, use: .sign(Self.ecdsa, Data("a".utf8)))).waitKind
        #expect(
            sign
                == AgentRequest.keychain(.useHeldKey(reference: first, use: .sign(Self.ecdsa, Data("b".utf8)))).waitKind
        )
        #expect(sign != AgentRequest.keychain(.useHeldKey(reference: second, use: .sign(Self.ecdsa, Data()))).waitKind)
        let decrypt = KeyUse.decrypt(
            KeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA256"), Data(), KeyOperationParameters())
        #expect(sign != AgentRequest.keychain(.useHeldKey(reference: first, use: decrypt)).waitKind)
        #expect(AgentRequest.keychain(.status).waitKind != AgentRequest.keychain(.lock).waitKind)
    }
}
