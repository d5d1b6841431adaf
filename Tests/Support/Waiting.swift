import Foundation
import Testing

/// Waits for an event the test cannot be told of directly: polls `condition` every 10 ms, and records an
/// issue naming `what` when it still does not hold after `seconds`.
public func waitUntil(_ what: String, seconds: Double = 10, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while try !condition() {
        guard Date() < deadline else {
            Issue.record("timed out after \(seconds) s waiting for \(what)")
            return
        }
        Thread.sleep(forTimeInterval: 0.01)
    }
}
