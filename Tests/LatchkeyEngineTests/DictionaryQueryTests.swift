import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// Apple-style dictionaries through `DatabaseBackend`: key dispatch, value types, and the errors that
/// name the offending key (SEMANTICS.md §2–3).
@Suite(.dedicatedThreads) struct DictionaryQueryTests {
    let directory = TemporaryDirectory()

    func backend() throws -> DatabaseBackend {
        DatabaseBackend(database: try Fixture.newKeychain(in: directory), caller: Fixture.app)
    }

    func error(_ body: () throws -> Void) -> KeychainError? {
        do {
            try body()
            return nil
        } catch let error as KeychainError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    static var base: [String: Any] { ["class": "genp", "svce": "mail", "acct": "alice"] }

    @Test func aMissingClassIsParam() throws {
        let keychain = try backend()
        let failure = error { _ = try keychain.add(["svce": "mail", "v_Data": Data("x".utf8)]) }
        #expect(failure?.status == .param)
        #expect(failure?.detail == "the query has no kSecClass")
        #expect(error { _ = try keychain.copyMatching(["svce": "mail"]) }?.status == .param)
    }

    @Test func anUnknownClassIsNoSuchClass() throws {
        let failure = error { _ = try backend().copyMatching(["class": "pass"]) }
        #expect(failure?.status == .noSuchClass)
        #expect(failure?.detail == "there is no item class 'pass'")
    }

    @Test func aClassThatIsNotAStringIsParam() throws {
        #expect(error { _ = try backend().copyMatching(["class": 5]) }?.status == .param)
    }

    @Test func anUnknownFourCharacterKeyIsNoSuchAttrNamingIt() throws {
        let failure = error { _ = try backend().add(Self.base.merging(["zzzz": "x"]) { a, _ in a }) }
        #expect(failure?.status == .noSuchAttribute)
        #expect(failure?.detail == "attribute 'zzzz' does not exist in class genp")
    }

    @Test func anUnknownLongerKeyIsParamNamingIt() throws {
        let keychain = try backend()
        let failure = error { _ = try keychain.add(Self.base.merging(["kSecAttrAccount": "x"]) { a, _ in a }) }
        #expect(failure?.status == .param)
        #expect(failure?.detail == "'kSecAttrAccount' is not a keychain query key")
        #expect(
            error { _ = try keychain.copyMatching(Self.base.merging(["persistref": Data()]) { a, _ in a }) }?.status
                == .param)
    }

    static var wrongTypes: [(String, Any, String)] {
        [
            ("acct", Date(), "attribute 'acct' must be a string or data, not a date value"),
            ("acct", true, "attribute 'acct' must be a string or data, not a boolean value"),
            ("cdat", "yesterday", "attribute 'cdat' must be a date, not a string value"),
            ("crtr", Data([1]), "attribute 'crtr' must be a number, not a data value"),
            ("pdmn", "always", "attribute 'pdmn' must be one of ak, ck, dk, aku, cku, dku, akpu, not a string value"),
            ("agrp", 42, "attribute 'agrp' must be a string, not a number value"),
        ]
    }

    @Test(arguments: 0..<6)
    func aValueOfTheWrongTypeIsParamNamingTheKey(index: Int) throws {
        let (key, value, detail) = Self.wrongTypes[index]
        let failure = error { _ = try backend().add(Self.base.merging([key: value]) { _, new in new }) }
        #expect(failure?.status == .param)
        #expect(failure?.detail == detail)
    }

    @Test func aValueNoAttributeTakesIsParam() throws {
        let failure = error { _ = try backend().add(Self.base.merging(["labl": ["a", "b"]]) { _, new in new }) }
        #expect(failure?.status == .param)
        #expect(failure?.detail == "attribute 'labl' cannot hold a value of type Array<String>")
    }

    @Test func valueDataMustBeData() throws {
        let failure = error { _ = try backend().add(Self.base.merging(["v_Data": "text"]) { _, new in new }) }
        #expect(failure?.status == .param)
        #expect(failure?.detail == "kSecValueData (v_Data) must be data, not String")
    }

    @Test func returnKeysMustBeBooleans() throws {
        let keychain = try backend()
        _ = try keychain.add(Self.base.merging(["v_Data": Data("x".utf8)]) { a, _ in a })
        let failure = error { _ = try keychain.copyMatching(Self.base.merging(["r_Data": 1]) { a, _ in a }) }
        #expect(failure?.status == .param)
        #expect(failure?.detail == "'r_Data' must be a boolean, not Int")
        #expect(
            error { _ = try keychain.copyMatching(Self.base.merging(["r_Everything": true]) { a, _ in a }) }?.status
                == .param)
        // NSNumber(value: true) is Apple's CFBoolean and is accepted.
        #expect(
            try keychain.copyMatching(Self.base.merging(["r_Data": NSNumber(value: true)]) { a, _ in a }) as? Data
                == Data("x".utf8))
    }

    @Test func matchLimitValuesAreChecked() throws {
        let keychain = try backend()
        _ = try keychain.add(Self.base.merging(["v_Data": Data("x".utf8)]) { a, _ in a })
        for bad: Any in ["m_LimitTwo", 0, -3, Date()] {
            #expect(
                error { _ = try keychain.copyMatching(Self.base.merging(["m_Limit": bad]) { a, _ in a }) }?.status
                    == .param)
        }
        #expect(
            error { _ = try keychain.copyMatching(Self.base.merging(["m_Whatever": true]) { a, _ in a }) }?.detail
                == "'m_Whatever' is not a supported kSecMatch key")
    }

    @Test func trustMatchingIsUnimplementedNotIgnored() throws {
        let keychain = try backend()
        let failure = error { _ = try keychain.copyMatching(["class": "cert", "m_SearchList": [Data()]]) }
        #expect(failure?.status == .unimplemented)
        #expect(failure?.detail == "'m_SearchList' matching is not supported yet")
        // An item list is honoured (SecCertificateTests); a list naming nothing in the keychain finds nothing.
        #expect(
            error { _ = try keychain.copyMatching(["class": "cert", "m_ItemList": [Data()]]) }?.status == .itemNotFound)
        // A policy must be one, and matches certificates and identities only (Apple's errSecUnsupportedOperation, -4).
        #expect(error { _ = try keychain.copyMatching(["class": "cert", "m_Policy": [Data()]]) }?.status == .param)
        let password = error { _ = try keychain.copyMatching(["class": "genp", "m_Policy": TrustPolicy.basicX509]) }
        #expect(password?.status == .unimplemented)
        #expect(password?.detail == "kSecMatchPolicy matches certificates and identities, not genp")
    }

    @Test func caseInsensitiveMatchingIsAcceptedButMatchingStaysExact() throws {
        let keychain = try backend()
        _ = try keychain.add(Self.base.merging(["v_Data": Data("x".utf8)]) { a, _ in a })
        let query: [String: Any] = ["class": "genp", "svce": "MAIL", "m_CaseInsensitive": true]
        #expect(error { _ = try keychain.copyMatching(query) }?.status == .itemNotFound)
    }

    @Test func dataProtectionKeychainFlagIsAcceptedAndUIKeysIgnored() throws {
        let keychain = try backend()
        _ = try keychain.add(Self.base.merging(["v_Data": Data("x".utf8), "nleg": true]) { a, _ in a })
        let found = try keychain.copyMatching(
            Self.base.merging(["r_Data": true, "u_OpPrompt": "Unlock"]) { a, _ in a })
        #expect(found as? Data == Data("x".utf8))
        #expect(
            error { _ = try keychain.copyMatching(Self.base.merging(["u_Mystery": 1]) { a, _ in a }) }?.status
                == .param)
    }

    @Test func anAccessControlThatIsNotOneIsParam() throws {
        let keychain = try backend()
        let failure = error { _ = try keychain.add(Self.base.merging(["accc": Data()]) { a, _ in a }) }
        #expect(failure == KeychainError(.param, "kSecAttrAccessControl must be a SecAccessControl, not Data"))
        #expect(
            error { _ = try keychain.add(Self.base.merging(["accc": "ak"]) { a, _ in a }) }
                == KeychainError(.param, "kSecAttrAccessControl must be a SecAccessControl, not String"))
    }

    @Test func tooManyKeysIsParam() throws {
        var query: [String: Any] = ["class": "genp"]
        for index in 0..<130 { query["k\(index)"] = "x" }
        #expect(error { _ = try backend().copyMatching(query) }?.status == .param)
    }

    @Test func numericStringsBecomeNumbersForNumberAttributes() throws {
        let keychain = try backend()
        let added =
            try keychain.add([
                "class": "keys", "kcls": "1", "type": "42", "bsiz": 2048, "r_Attributes": true,
            ]) as? [String: Any]
        #expect(added?["kcls"] as? Int == 1)
        #expect(added?["type"] as? Int == 42)
        #expect(added?["bsiz"] as? Int == 2048)
        let found = try keychain.copyMatching(["class": "keys", "kcls": 1, "type": 42, "r_Attributes": true])
        #expect((found as? [String: Any])?["bsiz"] as? Int == 2048)
    }

    @Test func textAndDataWithTheSameBytesMatchForBlobAttributes() throws {
        let keychain = try backend()
        _ = try keychain.add(Self.base.merging(["v_Data": Data("x".utf8)]) { a, _ in a })
        let found = try keychain.copyMatching(["class": "genp", "acct": Data("alice".utf8), "r_Attributes": true])
        #expect((found as? [String: Any])?["acct"] as? String == "alice")
    }
}
