import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// `catch KeychainError.itemNotFound`: errors match by status, in typed and untyped `throws` alike, and
/// only the error with that status matches.
@Suite(.dedicatedThreads) struct ErrorMatchingTests {
    /// Which catch clause took the error.
    enum Caught: Equatable { case duplicate, notFound, param, other, none }

    func classify(_ body: () throws -> Void) -> Caught {
        do {
            try body()
            return .none
        } catch KeychainError.duplicateItem {
            return .duplicate
        } catch KeychainError.itemNotFound {
            return .notFound
        } catch KeychainError.param {
            return .param
        } catch {
            return .other
        }
    }

    func classifyTyped(_ body: () throws(KeychainError) -> Void) -> Caught {
        do throws(KeychainError) {
            try body()
            return .none
        } catch KeychainError.duplicateItem {
            return .duplicate
        } catch KeychainError.itemNotFound {
            return .notFound
        } catch {
            return .other
        }
    }

    @Test func catchClausesMatchTheStatus() throws {
        let keychain = KeychainDatabase.inMemory()
        let item = Fixture.password(service: "s", account: "a")
        #expect(classify { try keychain.add(item, caller: Fixture.app) } == .none)
        #expect(classify { try keychain.add(item, caller: Fixture.app) } == .duplicate)
        #expect(
            classify { _ = try keychain.copyMatching(Fixture.query(service: "nothing"), caller: Fixture.app) }
                == .notFound)
        #expect(
            classify {
                try keychain.add(
                    NewItem(.genericPassword, data: Data(count: ItemLimits.maximumDataBytes + 1)), caller: Fixture.app)
            }
                == .param)
        #expect(classify { throw CocoaError(.fileNoSuchFile) } == .other, "a foreign error matches no status")
        #expect(classify { throw KeychainError(.io) } == .other, "a status without a clause falls through")

        #expect(classifyTyped { () throws(KeychainError) in try keychain.add(item, caller: Fixture.app) } == .duplicate)
        #expect(
            classifyTyped { () throws(KeychainError) in
                _ = try keychain.copyMatching(Fixture.query(service: "nothing"), caller: Fixture.app)
            } == .notFound)
        #expect(classifyTyped { () throws(KeychainError) in throw KeychainError(.authFailed) } == .other)
    }

    @Test func theStatusConstantsAreTheStatuses() {
        #expect(KeychainError.itemNotFound == KeychainStatus.itemNotFound)
        #expect(KeychainError.missingEntitlement.rawValue == -34018)
        #expect(KeychainError.internal == KeychainStatus.internal)
        // `switch` over an error works the same way.
        let error: any Error = KeychainError(.interactionNotAllowed, "locked")
        switch error {
        case KeychainError.itemNotFound: Issue.record("matched the wrong status")
        case KeychainError.interactionNotAllowed: break
        default: Issue.record("matched nothing")
        }
    }
}
