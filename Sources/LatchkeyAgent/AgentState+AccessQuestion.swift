import FoundationEssentials
import LatchkeyCaller
import LatchkeyEngine

/// The access question (issue 53) as every front end asks it — the agent's socket, the SSH agent and the
/// Secret Service: whether an identified program is on an item's access list, and the question itself, whose
/// Always allow puts it there.
extension AgentState {
    /// Every group: what the agent itself finds an item with, to ask about it (the item is named, never read,
    /// until the user allows it).
    static let everyGroup = CallerIdentity(
        applicationIdentifier: "latchkeyd", accessGroups: [CallerIdentity.wildcardGroup])

    /// The persistent references of the items whose access lists name `program`. None before the first unlock
    /// or when the lists cannot be read (then no list names it as far as anyone can tell).
    func itemsListing(_ program: TrustedProgram) -> Set<Data> {
        do {
            return Set(try keychain.itemsListing(program))
        } catch {
            return []  // Sealed or unreadable: nothing is granted on a list nobody can read.
        }
    }

    /// Whether `program` is on the access list of the item `reference` names (`itemsListing`).
    func isListed(_ program: TrustedProgram, onItem reference: Data) -> Bool {
        itemsListing(program).contains(reference)
    }

    /// Whether a question could be put to the user now: the agent has pinentry and a display or terminal for
    /// it. Front ends that cannot carry a refusal's words (the SSH agent) show an item only when it could.
    var canAskAboutAccess: Bool { prompter.canAsk }

    /// Asks whether `program` — process `pid` — may read the item `reference` names (`AccessPrompter`); on
    /// Always allow, adds it to the item's list before returning. Throws the refusal (denied now or before,
    /// nobody to ask, too many questions), `refusal`'s words first where nobody can be asked.
    func askAccess(
        _ program: TrustedProgram, pid: Int32, reference: Data, itemClass: ItemClass, names: String?,
        storedBy: String?, refusal: KeychainError
    ) throws(KeychainError) -> AccessPrompter.Answer {
        let question = AccessPrompter.Question(
            program: program, pid: pid, parent: AccessPrompter.parent(of: pid), reference: reference,
            itemClass: itemClass, names: names, storedBy: storedBy)
        let epoch = keychain.lockStateAndEpoch.epoch
        let answer = try prompter.ask(question, epoch: epoch, refusal: refusal)
        // Locked while the user was asked: the answer came too late to read anything with.
        let now = keychain.lockStateAndEpoch
        guard now.state == .unlocked, now.epoch == epoch else {
            throw KeychainError(.interactionNotAllowed, "the keychain locked while the user was asked")
        }
        if answer == .alwaysAllow { try keychain.grantAccess(to: program, onItem: reference, origin: .answer) }
        return answer
    }
}
