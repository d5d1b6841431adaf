import Foundation
import LatchkeyEngine

/// `org.freedesktop.Secret.Prompt` on each prompt `Unlock` made (SecretServiceServer+Service.swift): asking
/// for the passphrase on its own thread, or dismissing it; `Completed` is emitted on the bus thread. The
/// arguments are decoded and the replies encoded by `promptCall` (SecretServiceServer+Marshalling.swift).
extension SecretServiceServer {
    /// A prompt for `owner` that unlocks `objects`; its path.
    func makePrompt(owner: String, objects: [String]) -> String {
        let path = SecretPaths.prompt + "/p\(nextPrompt)"
        nextPrompt += 1
        prompts[path] = (owner, objects)
        return path
    }

    /// The prompt at `path` if `sender` owns it and it is not completed yet, or `NoSuchObject`.
    func pendingPrompt(_ path: String, for sender: String) throws -> (owner: String, objects: [String]) {
        guard let pending = prompts[path], pending.owner == sender else {
            throw SecretServiceError.noSuchObject("no such prompt of yours")
        }
        return pending
    }

    /// `Prompt`: asks for the passphrase on the prompt's own thread (the reply goes first; the answer comes
    /// in `Completed`).
    func runPrompt(_ path: String, _ pending: (owner: String, objects: [String])) {
        prompts[path] = nil
        let configuration = configuration
        let completed = completed
        let thread = Thread {
            var dismissed = true
            if let presence = configuration.presence {
                do throws(KeychainError) {
                    try presence.confirm(
                        PresenceRequest(
                            applicationIdentifier: "a program on the desktop (\(pending.owner))",
                            operationPrompt: "unlock the keychain for the Secret Service"),
                        verify: { (passphrase) throws(KeychainError) in try configuration.unlock(passphrase) })
                    dismissed = false
                    configuration.log("unlocked through a Secret Service prompt for \(pending.owner)")
                } catch {
                    configuration.log(
                        "a Secret Service prompt for \(pending.owner) ended without unlocking: \(error.message)")
                }
            }
            completed.queue.withLock { $0.append((path, dismissed, dismissed ? [] : pending.objects)) }
        }
        thread.start()
    }

    /// `Dismiss`: the prompt completes dismissed.
    func dismissPrompt(_ path: String) {
        prompts[path] = nil
        completed.queue.withLock { $0.append((path, true, [])) }
    }

    /// Emits `Completed` for the prompts that finished (called on the bus thread).
    func drainCompletedPrompts() {
        let finished = completed.queue.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
        for (path, dismissed, objects) in finished { promptCompleted(path, dismissed: dismissed, objects: objects) }
    }
}
