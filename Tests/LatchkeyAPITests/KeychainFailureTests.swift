import Foundation
import Latchkey
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

@Suite(.dedicatedThreads) struct KeychainFailureTests {
    @Test(arguments: [
        (KeychainStatus.itemNotFound, "itemNotFound"), (.duplicateItem, "duplicateItem"),
        (.interactionNotAllowed, "interactionNotAllowed"), (.authFailed, "authFailed"),
        (.missingEntitlement, "missingEntitlement"), (.decode, "decode"), (.param, "param"), (.io, "other"),
        (.diskFull, "other"),
    ])
    func everyStatusLandsInItsCaseAndKeepsTheError(_ status: KeychainStatus, _ name: String) {
        let error = KeychainError(status, "detail")
        let failure = KeychainFailure(error)
        #expect(String(describing: failure) == "\(status.message) (detail) [\(status.name) \(status.rawValue)]")
        #expect(failure.error == error)
        #expect(failure.status == status)
        #expect(failure.message == "\(status.message) (detail)")
        let caseName: String =
            switch failure {
            case .itemNotFound: "itemNotFound"
            case .duplicateItem: "duplicateItem"
            case .interactionNotAllowed: "interactionNotAllowed"
            case .authFailed: "authFailed"
            case .missingEntitlement: "missingEntitlement"
            case .decode: "decode"
            case .param: "param"
            case .other: "other"
            }
        #expect(caseName == name)
    }

    @Test func callersCanCatchACaseDirectly() throws {
        let memory = InMemoryKeychain()
        memory.lock()
        var caught = false
        do {
            try memory.keychain(service: "s").set("v", forKey: "k")
        } catch .interactionNotAllowed {
            caught = true
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(caught)
    }
}
