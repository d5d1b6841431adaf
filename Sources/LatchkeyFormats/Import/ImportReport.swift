package import LatchkeyEngine

/// What an import did (or, dry, would do): items added by class, items the keychain had already, and
/// entries left out, each with why.
package struct ImportReport: Sendable, Hashable {
    /// Items added, by class.
    package var imported: [ItemClass: Int] = [:]
    /// Entries the keychain already holds as they are (a second import of the same file adds nothing).
    package var present = 0
    /// Entries not imported, and why, in the file's order.
    package var skipped: [SkippedEntry] = []
    /// Items found new that the keychain had by the time they were written (another program added them, or
    /// their access control kept them out of the comparison): the keychain's were kept.
    package var keptAtWrite = 0

    package init() {}

    package var importedCount: Int { imported.values.reduce(0, +) - keptAtWrite }

    /// The report's lines, as `latchkey import` prints them: what was (or would be) imported, by class;
    /// what was there already; and each reason for a skip with its count and the first five names.
    package func lines(source: String, dryRun: Bool) -> [String] {
        let names: [(ItemClass, String, String)] = [
            (.internetPassword, "internet password", "internet passwords"),
            (.genericPassword, "generic password", "generic passwords"),
            (.certificate, "certificate", "certificates"), (.key, "key", "keys"),
        ]
        let kinds = names.compactMap { itemClass, one, many -> String? in
            guard let count = imported[itemClass], count > 0 else { return nil }
            return "\(count) \(count == 1 ? one : many)"
        }
        let total = importedCount
        var lines = [
            "\(dryRun ? "would import" : "imported") \(total) item\(total == 1 ? "" : "s") from \(source)"
                + (kinds.isEmpty ? "" : ": " + kinds.joined(separator: ", ")),
            "already in the keychain: \(present)",
            "skipped: \(skipped.count + keptAtWrite)",
        ]
        if keptAtWrite > 0 {
            lines.append("  the keychain had them when they were written, and kept its own (\(keptAtWrite))")
        }
        var reasons: [String] = []
        var byReason: [String: [String]] = [:]
        for entry in skipped {
            if byReason[entry.reason] == nil { reasons.append(entry.reason) }
            byReason[entry.reason, default: []].append(entry.name)
        }
        for reason in reasons {
            let all = byReason[reason]!
            let shown = all.prefix(5).map { "\"\($0)\"" }.joined(separator: ", ")
            let more = all.count > 5 ? " and \(all.count - 5) more" : ""
            lines.append("  \(reason) (\(all.count)): \(shown)\(more)")
        }
        return lines
    }
}
