import FoundationEssentials

/// How long a client polls for the agent's reply before it sleeps in the kernel, learned per kind of
/// request. A thread that sleeps takes tens of microseconds to wake when the reply comes (about 70 µs on a
/// virtual machine measured here), which is most of a quick request's cost through the agent; a thread that
/// polls burns its core meanwhile. So a client polls about as long as the same kind of request took the last
/// times — a lookup tens of microseconds, an RSA signature near a millisecond — and never longer than
/// `longestSpin`: a kind that takes longer (a prompt, a durable write on a slow disk, an RSA-4096 key)
/// sleeps after the usual short poll.
package struct ReplyWait: Sendable {
    /// What makes two requests alike: the operation and, for a held key's use, the key and what is done with
    /// it (a P-256 signature and an RSA decryption take very different times).
    package struct Kind: Equatable, Sendable {
        let operation: UInt8
        let detail: Int
    }

    /// The longest poll (1.5 ms): longer waits sleep.
    package static let longestSpin = 1_500_000
    /// A sample longer than this counts as this, so one long wait (the user answering a prompt) is
    /// forgotten after a few requests.
    static let longestSample = 4 * longestSpin
    /// How many kinds are remembered: a program makes requests of a few kinds; the bound keeps one that
    /// uses many keys in turn from growing the table.
    static let kindLimit = 64

    /// A smoothed reply time per kind, in nanoseconds. A short list searched in order rather than a
    /// dictionary: a program asks of a few kinds, and a dictionary keyed by `Kind` would cost a new process
    /// the runtime's scan of every protocol conformance in the binary before its first request (about
    /// 230,000 instructions; docs/DESIGN-NOTES.md, "The CLI's start").
    private var typical: [(kind: Kind, nanoseconds: Int)] = []

    package init() {}

    /// How long to poll for the reply of a request of `kind`, in nanoseconds: `AgentFrame.replySpinNanoseconds`
    /// until one has been timed; then a quarter more than its typical time, plus 50 µs — at least the default,
    /// and `AgentFrame.replySpinNanoseconds` again when that typical time is beyond `longestSpin`.
    package func spin(for kind: Kind) -> Int {
        guard let typical = typical.first(where: { $0.kind == kind })?.nanoseconds else {
            return AgentFrame.replySpinNanoseconds
        }
        let wanted = typical + typical / 4 + 50_000
        guard wanted <= Self.longestSpin else { return AgentFrame.replySpinNanoseconds }
        return max(wanted, AgentFrame.replySpinNanoseconds)
    }

    /// Records that a request of `kind` was answered in `nanoseconds`.
    package mutating func record(_ kind: Kind, nanoseconds: Int) {
        let sample = min(max(nanoseconds, 0), Self.longestSample)
        if let index = typical.firstIndex(where: { $0.kind == kind }) {
            typical[index].nanoseconds = (3 * typical[index].nanoseconds + sample) / 4
        } else {
            if typical.count >= Self.kindLimit { typical.removeAll(keepingCapacity: true) }
            typical.append((kind, sample))
        }
    }
}

extension AgentRequest {
    /// The kind of request, for `ReplyWait`.
    package var waitKind: ReplyWait.Kind {
        switch self {
        case .keychain(.useHeldKey(let reference, let use)):
            var hasher = Hasher()
            hasher.combine(reference)
            hasher.combine(use.operation)
            return ReplyWait.Kind(operation: operation.rawValue, detail: hasher.finalize())
        default:
            return ReplyWait.Kind(operation: operation.rawValue, detail: 0)
        }
    }
}
