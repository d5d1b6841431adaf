import Foundation
import Latchkey
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

@Suite(.dedicatedThreads) struct KeychainCodableTests {
    struct LoginInfo: Codable, Equatable, Sendable {
        var enterpriseID: String
        var account: String
        var password: String
        var issued: Date
        var token: Data
    }

    let memory = InMemoryKeychain()
    let info = LoginInfo(
        enterpriseID: "jit-001", account: "alice", password: "hunter2",
        issued: Date(timeIntervalSinceReferenceDate: 700_000_000.25), token: Data([1, 2, 3]))

    @Test func codableValuesRoundTrip() throws {
        let keychain = memory.keychain(service: "com.example.login")
        try keychain.set(info, forKey: "login")
        #expect(try keychain.value(LoginInfo.self, forKey: "login") == info)
        #expect(try keychain.value(LoginInfo.self, forKey: "other") == nil)
        try keychain.set([1, 2, 3], forKey: "numbers")
        #expect(try keychain.value([Int].self, forKey: "numbers") == [1, 2, 3])
    }

    @Test func theEncodingIsStableAndDocumented() throws {
        let keychain = memory.keychain(service: "com.example.login")
        try keychain.set(info, forKey: "login")
        let stored = try #require(try keychain.data(forKey: "login"))
        #expect(
            String(decoding: stored, as: UTF8.self)
                == #"{"account":"alice","enterpriseID":"jit-001","issued":700000000.25,"password":"hunter2","token":"AQID"}"#
        )
    }

    @Test func bytesThatDoNotDecodeAreAClearFailureWithoutTheBytes() throws {
        let keychain = memory.keychain(service: "com.example.login")
        try keychain.set("not json at all: secret-value", forKey: "login")
        let failure = #expect(throws: KeychainFailure.self) { try keychain.value(LoginInfo.self, forKey: "login") }
        guard case .decode(let error)? = failure else {
            Issue.record("expected .decode")
            return
        }
        #expect(error.status == .decode)
        #expect(
            error.detail
                == "the value stored for key 'login' is not a valid LoginInfo (not valid JSON at the top level)")
        #expect(!error.description.contains("secret-value"))

        try keychain.set(#"{"account":"alice"}"#, forKey: "partial")
        let partial = #expect(throws: KeychainFailure.self) { try keychain.value(LoginInfo.self, forKey: "partial") }
        #expect(
            partial?.error.detail
                == "the value stored for key 'partial' is not a valid LoginInfo (missing key 'enterpriseID' at the top level)"
        )

        try keychain.set(#"{"account":7,"enterpriseID":"x","password":"p","issued":1,"token":""}"#, forKey: "typed")
        let typed = #expect(throws: KeychainFailure.self) { try keychain.value(LoginInfo.self, forKey: "typed") }
        #expect(
            typed?.error.detail
                == "the value stored for key 'typed' is not a valid LoginInfo (expected String at account)")
    }

    @Test func unencodableValuesAreParam() throws {
        let failure = #expect(throws: KeychainFailure.self) {
            try memory.keychain(service: "s").set([Double.nan], forKey: "k")
        }
        guard case .param? = failure else {
            Issue.record("expected .param")
            return
        }
        #expect(try memory.itemCount() == 0)
    }
}
