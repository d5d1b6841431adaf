package import LatchkeyPOSIX

/// Whether a process runs in the agent's own user and pid namespaces, where the kernel's word on who sends a
/// message holds (a process can name only its own pid there, without privilege over the namespace).
package enum NamespaceCheck {
    /// The agent's own namespaces, read once.
    private static let own: [Namespace.Kind: Namespace] = {
        var own: [Namespace.Kind: Namespace] = [:]
        for kind in [Namespace.Kind.user, .pid] { own[kind] = Namespace.current(kind) }
        return own
    }()

    /// Why the process of `handle` cannot be trusted to be who it seems, or nil when it can.
    package static func reason(for handle: ProcessHandle) -> String? {
        for kind in [Namespace.Kind.user, .pid] {
            guard let mine = own[kind] else { return "the agent cannot read its own \(kind.link) namespace" }
            guard let theirs = handle.namespace(kind) else {
                return
                    "the agent cannot read the \(kind) namespace of pid \(handle.pid) (it ended, or may not be looked at)"
            }
            if theirs != mine {
                return "pid \(handle.pid) runs in another \(kind) namespace than the agent (a container or a sandbox), "
                    + "where the credentials its messages carry cannot be trusted"
            }
        }
        return nil
    }
}
