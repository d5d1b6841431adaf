package import FoundationEssentials
internal import LatchkeyStorage

/// Reads through access lists: what a program may read besides its access groups — the items whose lists
/// name it — and the lists themselves as `latchkey access list` shows them.
extension KeychainDatabase {
    /// The caller listed reads run as: it sees every group, and only the one item each read names.
    static let listedReader = CallerIdentity(
        applicationIdentifier: "latchkey.access-list", accessGroups: [CallerIdentity.wildcardGroup])

    /// Finds, among the items whose access lists name `program`, those `query` matches (up to its limit), as
    /// `copyMatching` finds a caller's items in its groups: one read per listed item of the query's class,
    /// named by its persistent reference, so an item the list does not name is never opened. An item whose
    /// access control asks the user asks through `presence`, as any read does.
    ///
    /// - Throws: `errSecItemNotFound` when no listed item matches; otherwise what `copyMatching` throws.
    package func copyMatching(
        _ query: ItemQuery, listedFor program: TrustedProgram, presence: (any UserPresenceVerifier)?
    ) throws(KeychainError) -> [ItemResult] {
        var limit: Int?
        switch query.limit {
        case .one: limit = 1
        case .all: limit = nil
        case .count(let count): limit = count
        }
        var results: [ItemResult] = []
        for reference in try itemsListing(program) {
            guard PersistentReference.parse(reference)?.itemClass == query.itemClass else { continue }
            if let named = query.persistentReference, named != reference { continue }
            var one = query
            one.persistentReference = reference
            one.limit = .one
            do {
                results += try copyMatching(one, caller: Self.listedReader, presence: presence)
            } catch KeychainError.itemNotFound {
                continue  // The listed item does not match the query.
            }
            if let limit, results.count >= limit { break }
        }
        guard !results.isEmpty else { throw KeychainError(.itemNotFound) }
        return results
    }

    /// Every live item's access list that names at least one program — or, with `reference`, that item's
    /// alone (empty entries when it names none) — in row order. An item's summary is read from its
    /// attributes when its class key is available. `errSecItemNotFound` when `reference` names no live item;
    /// `errSecInteractionNotAllowed` before the first unlock.
    package func accessLists(of reference: Data? = nil) throws(KeychainError) -> [ItemAccessList] {
        var lists: [(reference: Data, entries: [AccessListEntry])] = []
        if let reference {
            lists = [(reference, try accessList(of: reference))]
        } else {
            let all = try allAccessLists()
            let rows: [(rowID: Int64, reference: Data, id: Data)] = try mappingStorageErrors {
                try pool.read { db in
                    var rows: [(Int64, Data, Data)] = []
                    try db.forEachRow(
                        "SELECT DISTINCT i.row_id, i.id, i.class FROM item_access a JOIN items i ON i.id = a.item AND i.tomb = 0"
                    ) { row in
                        guard let id = row.blob(1), let itemClass = row.text(2).flatMap(ItemClass.init(rawValue:))
                        else { return }
                        let rowID = row.integer(0)
                        rows.append((rowID, PersistentReference.make(itemClass: itemClass, rowID: rowID, id: id), id))
                    }
                    return rows
                }
            }
            lists = rows.sorted { $0.rowID < $1.rowID }.map {
                ($0.reference, (all[$0.id] ?? []).sorted(by: AccessListEntry.listedBefore))
            }
        }
        return lists.compactMap { list in
            guard let itemClass = PersistentReference.parse(list.reference)?.itemClass else { return nil }
            return ItemAccessList(
                reference: list.reference, itemClass: itemClass, summary: summary(of: list.reference, itemClass),
                entries: list.entries)
        }
    }

    /// The summary of the item `reference` names, from its attributes; nil when they cannot be read now
    /// (its class key is unavailable, or it is damaged — the list is shown all the same).
    private func summary(of reference: Data, _ itemClass: ItemClass) -> String? {
        let query = ItemQuery(itemClass, synchronizable: .any, persistentReference: reference, returning: .attributes)
        do {
            let found = try copyMatching(query, caller: Self.listedReader, presence: nil)
            return found.first.flatMap { ItemAccessList.summary(of: $0.attributes) }
        } catch {
            return nil  // Locked or damaged: the list is shown without the item's names.
        }
    }
}
