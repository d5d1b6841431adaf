import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct SizeLimitTests {
    let directory = TemporaryDirectory()

    @Test func aSixteenMebibyteSecretRoundTrips() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let big = Data((0..<ItemLimits.maximumDataBytes).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try keychain.add(
            NewItem(.genericPassword, attributes: [.service: .string("big")], data: big), caller: Fixture.app)
        let found = try keychain.copyMatching(
            ItemQuery(.genericPassword, matching: [.service: .string("big")], returning: .data), caller: Fixture.app)
        #expect(found.first?.data == big)
        // An attribute-only update keeps the large secret without re-encrypting it.
        try keychain.update(
            ItemQuery(.genericPassword, matching: [.service: .string("big")]),
            with: ItemChanges(attributes: [.label: .string("renamed")]), caller: Fixture.app)
        #expect(
            try keychain.copyMatching(
                ItemQuery(.genericPassword, matching: [.label: .string("renamed")], returning: .data),
                caller: Fixture.app
            )
            .first?.data == big)
    }

    @Test func aLargerSecretIsParamAndNothingIsStored() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let tooBig = Data(count: ItemLimits.maximumDataBytes + 1)
        let failure = #expect(throws: KeychainError.self) {
            try keychain.add(
                NewItem(.genericPassword, attributes: [.service: .string("big")], data: tooBig),
                caller: Fixture.app)
        }
        #expect(failure?.status == .param)
        #expect(failure?.detail == "v_Data is 16777217 bytes; the limit is 16777216 bytes (16 MiB)")
        #expect(try keychain.rowCount() == 0)
        try keychain.add(Fixture.password(service: "small", account: "a"), caller: Fixture.app)
        #expect(
            status {
                try keychain.update(
                    Fixture.query(service: "small", returning: []),
                    with: ItemChanges(data: tooBig), caller: Fixture.app)
            } == .param)
        #expect(
            try keychain.copyMatching(Fixture.query(service: "small"), caller: Fixture.app).first?.data
                == Data("s3cret".utf8))
    }

    @Test func absurdAttributeSizesAreParam() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let huge = String(repeating: "a", count: ItemLimits.maximumAttributeBytes + 1)
        let failure = #expect(throws: KeychainError.self) {
            try keychain.add(Fixture.password(service: "s", account: huge), caller: Fixture.app)
        }
        #expect(failure?.status == .param)
        #expect(failure?.detail == "attribute 'acct' is larger than 65536 bytes")
        #expect(
            status {
                try keychain.add(
                    NewItem(
                        .genericPassword,
                        attributes: [
                            .service: .string("s"), .generic: .data(Data(count: 10 << 20)),
                        ]), caller: Fixture.app)
            } == .param)
        #expect(
            status {
                _ = try keychain.copyMatching(
                    ItemQuery(.genericPassword, matching: [.account: .string(huge)]),
                    caller: Fixture.app)
            } == .param)
        let largest = String(repeating: "b", count: ItemLimits.maximumAttributeBytes)
        try keychain.add(Fixture.password(service: "s", account: largest), caller: Fixture.app)
        #expect(
            try keychain.copyMatching(Fixture.query(service: "s", account: largest), caller: Fixture.app).count == 1)
    }
}
