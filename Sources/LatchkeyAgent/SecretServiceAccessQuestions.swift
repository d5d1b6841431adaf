import FoundationEssentials
import LatchkeyEngine
import LatchkeySecretService

extension AgentServer {
    /// What the Secret Service asks the agent about other programs' items under isolation (issue 53): the
    /// items a program's access lists name, whether the user can be asked, and the question — naming the item
    /// by its label and Secret Service attributes, and the program that stored it by its access group.
    static func accessQuestions(_ state: AgentState) -> SecretServiceProvider.Configuration.AccessQuestions {
        SecretServiceProvider.Configuration.AccessQuestions(
            listed: { program in state.itemsListing(program) },
            canAsk: { state.canAskAboutAccess },
            ask: { (program, pid, reference) throws(KeychainError) in
                let query = ItemQuery(
                    .genericPassword, synchronizable: .any, persistentReference: reference, returning: .attributes)
                guard let item = try state.keychain.copyMatching(query, caller: AgentState.everyGroup).first else {
                    throw KeychainError(.itemNotFound)
                }
                let answer = try state.askAccess(
                    program, pid: pid, reference: reference, itemClass: item.itemClass,
                    names: names(of: item.attributes), storedBy: item.attributes[.accessGroup]?.stringValue,
                    refusal: KeychainError(.missingEntitlement, "the item is another program's"))
                return answer == .alwaysAllow
            })
    }

    /// A Secret Service item as its user knows it: its label and attributes (never the random account the
    /// provider gives it).
    static func names(of attributes: [AttributeKey: AttributeValue]) -> String {
        let label = attributes[.label]?.stringValue ?? ""
        let pairs = attributes.compactMap { key, value -> String? in
            guard AttributeKey.isSecretServiceAttribute(key), let text = value.stringValue, !text.isEmpty else {
                return nil
            }
            return "\(key.rawValue.dropFirst(AttributeKey.secretServicePrefix.count))=\(text)"
        }.sorted()
        return ([label.isEmpty ? "an item" : "\"\(label)\""] + pairs).joined(separator: " ")
    }
}
