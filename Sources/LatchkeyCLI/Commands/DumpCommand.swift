import FoundationEssentials
import Latchkey

/// dump-keychain: every item's attributes, and its secret only when asked.
enum DumpCommand {
    static let command = Command(
        "dump-keychain", synopsis: "[-d] [keychain]", summary: "Dump a keychain's items.",
        details: """
            Prints every item of the keychain — generic and internet passwords, certificates and keys, in every \
            access group — in the layout of `security find-generic-password`. Secrets are printed only with -d, \
            after each item as "data:" and the value. The passphrase is needed.
            """,
        options: [
            OptionSpec(.dumpSecrets, "Also print each item's secret."),
            OptionSpec(.accessControlLists, "Not supported: Latchkey has access groups, not access control lists."),
            OptionSpec(.raw, "Not supported: Latchkey never prints encrypted bytes."),
        ] + passphraseOptions
    ) { arguments, context in
        if arguments.has(.accessControlLists) || arguments.has(.raw) {
            throw UsageError(message: "-a and -r are not supported; -d prints the secrets")
        }
        let path = context.keychainPath(arguments.positionals.first)
        let (keychain, confirmation) = try context.openUnlockedConfirming(
            path, displayName: context.keychainName(arguments.positionals.first),
            arguments: arguments)
        let caller = commandLineCaller(group: nil, environment: context.environment)
        for itemClass in ItemClass.stored {
            let items: [ItemResult]
            do throws(KeychainError) {
                items = try keychain.copyMatching(
                    ItemQuery(
                        itemClass, synchronizable: .any, limit: .all,
                        returning: arguments.has(.dumpSecrets) ? [.attributes, .data] : [.attributes]),
                    caller: caller, presence: confirmation)
            } catch {
                guard error.status == .itemNotFound else { throw error }
                continue
            }
            for item in items {
                context.stdout.write(ItemPrinter.block(item, keychainPath: path))
                if arguments.has(.dumpSecrets) {
                    context.stdout.line("data:")
                    context.stdout.line(PrintBuffer.format(Array(item.data ?? Data())))
                }
            }
        }
        return 0
    }
}
