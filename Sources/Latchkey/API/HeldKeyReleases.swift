import Dispatch
import FoundationEssentials
import LatchkeyEngine

/// Where the releases of ephemeral keys run when their last `HeldKey` goes: in order, on a queue of their
/// own, so that a handle going never waits for the service. A release through the agent is a request like any
/// other; made from `deinit` it would stall whatever thread dropped the key (an app's main thread) for a
/// round trip, and for the reply timeout when the agent is busy or hung. A release that never runs (the
/// program exits first) loses nothing: the agent drops a key whose process has ended, and a key made in this
/// process goes with it.
package enum HeldKeyReleases {
    private static let queue = DispatchQueue(label: "latchkey.held-key-releases")

    /// Releases `reference` in `service`, later and on the releases' queue.
    static func release(_ reference: Data, in service: any KeychainService) {
        queue.async {
            do {
                try service.releaseHeldKey(reference)
            } catch {
                // Nothing to report to: the key is already gone (a lock, an agent restart), or the agent cannot be
                // reached — then it goes when this process ends or the keychain locks.
            }
        }
    }

    /// Returns once every release asked for so far has run.
    package static func waitForPendingReleases() { queue.sync {} }
}
