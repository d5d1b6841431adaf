import FoundationEssentials
import LatchkeyEngine

/// Under the isolated policy, other programs' items (issue 53; docs/LATCHKEY-SECURITY.md, "The Secret
/// Service"): a connection reads those whose access lists name its program as its own; a search that names an
/// attribute also returns, as locked, the matching items it may not read — when the user can be asked — and
/// `Unlock` on one makes a prompt that asks the user (Deny, Allow once, Always allow). Allow once lets the
/// connection read the item's secret once; Always allow puts the program on the item's list. Such items are
/// never changed or deleted by it, and nothing of them but their path shows before the user allows it (a
/// locked item's properties are empty).
extension SecretServiceServer {
    /// How many offered items the provider remembers per connection; beyond, it forgets them and starts again.
    static let offerLimit = 256

    /// What the caller of the call being answered may do with other programs' items, or nil: not isolated,
    /// no access lists, or a caller without a program to name (one that sees every group, or acts as the
    /// user).
    func otherItems() -> OtherItems? {
        guard configuration.policy == .isolated, let access = configuration.access, let sender = currentSender,
            case .identified(let pinned) = standings[sender], let program = pinned.program
        else { return nil }
        let everyGroup = CallerIdentity(
            applicationIdentifier: pinned.identity.applicationIdentifier, accessGroups: [CallerIdentity.wildcardGroup])
        let requester = requester(of: sender)
        final class Listed {
            var references: Set<Data>?
        }
        let listed = Listed()
        let isListed = { (reference: Data) -> Bool in
            if listed.references == nil { listed.references = access.listed(program) }
            return listed.references?.contains(reference) == true
        }
        return OtherItems(
            everyGroup: configuration.service(everyGroup, nil),
            reading: { [unowned self] reference in
                var why = requester
                why?.reason =
                    self.allowedOnce[sender]?.contains(reference) == true && !isListed(reference)
                    ? "the user's answer: allow once" : "the item's access list"
                return self.configuration.service(everyGroup, why)
            },
            mayRead: { [unowned self] reference in
                self.allowedOnce[sender]?.contains(reference) == true || isListed(reference)
            },
            mayAsk: access.canAsk(),
            isOffered: { [unowned self] reference in self.offers[sender]?.contains(reference) == true },
            offer: { [unowned self] references in
                guard !references.isEmpty else { return }
                var offered = self.offers[sender] ?? []
                if offered.count + references.count > Self.offerLimit { offered.removeAll() }
                offered.formUnion(references.prefix(Self.offerLimit))
                self.offers[sender] = offered
            },
            read: { [unowned self] reference in
                guard !isListed(reference) else { return }
                self.allowedOnce[sender]?.remove(reference)
            })
    }

    /// Of `objects`, the items offered to `sender` that it may not read yet: what an `Unlock` asks the user
    /// about, each with its reference.
    func accessQuestions(in objects: [String], for sender: String) -> [(reference: Data, path: String)] {
        guard let others = otherItems() else { return [] }
        return objects.compactMap { path in
            guard let (_, reference) = SecretPaths.parseItem(path, alias: resolveAlias),
                others.isOffered(reference), !others.mayRead(reference)
            else { return nil }
            return (reference, path)
        }
    }
}
