import FoundationEssentials
import LatchkeyEngine
import LatchkeyPOSIX

/// `org.freedesktop.Secret.Prompt` on each prompt `Unlock` made (SecretServiceServer+Service.swift): asking
/// for the passphrase on its own thread, or dismissing it; `Completed` is emitted on the bus thread. The
/// arguments are decoded and the replies encoded by `promptCall` (SecretServiceServer+Marshalling.swift).
extension SecretServiceServer {
    /// A prompt for `owner` that unlocks `objects` — asking first, for each of `questions`, whether the owner
    /// may read another program's item; its path.
    func makePrompt(owner: String, objects: [String], questions: [(reference: Data, path: String)] = []) -> String {
        let path = SecretPaths.prompt + "/p\(nextPrompt)"
        nextPrompt += 1
        var prompt = PendingPrompt(owner: owner, objects: objects, questions: questions)
        if !questions.isEmpty, case .identified(let pinned) = standings[owner] {
            prompt.program = pinned.program
            prompt.pid = processOfPeer[owner] ?? 0
        }
        prompts[path] = prompt
        return path
    }

    /// The prompt at `path` if `sender` owns it and it is not completed yet, or `NoSuchObject`.
    func pendingPrompt(_ path: String, for sender: String) throws -> PendingPrompt {
        guard let pending = prompts[path], pending.owner == sender else {
            throw SecretServiceError.noSuchObject("no such prompt of yours")
        }
        return pending
    }

    /// `Prompt`: on the prompt's own thread (the reply goes first; the answer comes in `Completed`), asks for
    /// the passphrase when the keychain is locked, then each access question, one at a time. Completed
    /// dismissed when nothing was unlocked or allowed.
    func runPrompt(_ path: String, _ pending: PendingPrompt) {
        prompts[path] = nil
        let configuration = configuration
        let completed = completed
        let needsUnlock = !pending.questions.isEmpty ? isKeychainLocked : true
        DetachedThread.start(name: "prompt") {
            var outcome = CompletedPrompt(path: path, owner: pending.owner, dismissed: true, objects: [])
            if needsUnlock {
                let unlocked = Self.askForPassphrase(pending, configuration: configuration)
                outcome = CompletedPrompt(
                    path: path, owner: pending.owner, dismissed: !unlocked, objects: unlocked ? pending.objects : [])
                guard unlocked, !pending.questions.isEmpty else {
                    completed.queue.withLock { $0.append(outcome) }
                    return
                }
            }
            // The access questions: objects asked about are unlocked only when allowed.
            let asked = Set(pending.questions.map(\.path))
            var objects = pending.objects.filter { !asked.contains($0) }
            var once: [Data] = []
            if let access = configuration.access, let program = pending.program {
                for question in pending.questions {
                    do throws(KeychainError) {
                        if try !access.ask(program, pending.pid, question.reference) { once.append(question.reference) }
                        objects.append(question.path)
                    } catch {
                        configuration.log(
                            "a Secret Service access question for \(pending.owner) was refused: \(error.message)")
                    }
                }
            }
            outcome = CompletedPrompt(
                path: path, owner: pending.owner, dismissed: objects.isEmpty, objects: objects, allowedOnce: once)
            completed.queue.withLock { $0.append(outcome) }
        }
    }

    /// Whether the keychain is locked now (its `login` collection, as every caller sees it).
    private var isKeychainLocked: Bool {
        SecretStore(service: configuration.service(SecretStore.shared, nil), caller: SecretStore.shared).isLocked
    }

    /// Asks for the passphrase through pinentry and unlocks the keychain with it; whether it did.
    private static func askForPassphrase(
        _ pending: PendingPrompt, configuration: SecretServiceProvider.Configuration
    ) -> Bool {
        guard let presence = configuration.presence else { return false }
        do throws(KeychainError) {
            try presence.confirm(
                PresenceRequest(
                    applicationIdentifier: "a program on the desktop (\(pending.owner))",
                    operationPrompt: "unlock the keychain for the Secret Service"),
                verify: { (passphrase) throws(KeychainError) in try configuration.unlock(passphrase) })
            configuration.log("unlocked through a Secret Service prompt for \(pending.owner)")
            return true
        } catch {
            configuration.log("a Secret Service prompt for \(pending.owner) ended without unlocking: \(error.message)")
            return false
        }
    }

    /// `Dismiss`: the prompt completes dismissed.
    func dismissPrompt(_ path: String) {
        guard let pending = prompts.removeValue(forKey: path) else { return }
        completed.queue.withLock {
            $0.append(CompletedPrompt(path: path, owner: pending.owner, dismissed: true, objects: []))
        }
    }

    /// Emits `Completed` for the prompts that finished (called on the bus thread).
    func drainCompletedPrompts() {
        let finished = completed.queue.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
        for prompt in finished {
            // Allowed before `Completed` goes out: the client reads the secret as soon as it hears it.
            if !prompt.allowedOnce.isEmpty { allowedOnce[prompt.owner, default: []].formUnion(prompt.allowedOnce) }
            promptCompleted(prompt.path, dismissed: prompt.dismissed, objects: prompt.objects)
        }
    }
}
