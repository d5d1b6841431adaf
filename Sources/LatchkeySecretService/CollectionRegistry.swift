import FoundationEssentials
import LatchkeyEngine

/// The collections made by `CreateCollection`, beside the keychain's own `login` and the in-memory
/// `session`: one generic password each (service `org.freedesktop.secrets.collections`, account the
/// collection's id, label its label, `ss.alias` its alias if it has one), readable after the first unlock
/// (`kSecAttrAccessibleAfterFirstUnlock`) so a locked keychain still lists them. Their items are the
/// keychain items of service `org.freedesktop.secrets/<id>`.
struct CollectionRegistry {
    /// The keychain as a caller sees it (`SecretServiceProvider.Configuration.service`).
    let services: @Sendable (CallerIdentity) -> any KeychainService
    static let service = "org.freedesktop.secrets.collections"
    static let reserved: Set<String> = ["login", "session"]
    private let caller = SecretStore.shared
    /// Deleting a collection deletes its items in every program's group.
    private let everyGroup = CallerIdentity(
        applicationIdentifier: SecretStore.group, accessGroups: [CallerIdentity.wildcardGroup])

    struct Entry {
        let id: String
        let label: String
        let alias: String?
    }

    /// The collections, by id; none while the keychain has not been unlocked since the agent started.
    func list() -> [Entry] {
        let found: [ItemResult]
        do {
            found = try services(caller).copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.service: .string(Self.service)], limit: .all,
                    returning: .attributes))
        } catch {
            return []  // None made (itemNotFound), or not readable before the first unlock: only login and session.
        }
        return found.compactMap { item in
            guard let id = item[.account]?.stringValue, SecretPaths.isValidID(Substring(id)) else { return nil }
            let alias = item[AttributeKey.secretService("alias")]?.stringValue
            return Entry(id: id, label: item[.label]?.stringValue ?? id, alias: alias?.isEmpty == false ? alias : nil)
        }.sorted { $0.id < $1.id }
    }

    /// Makes a collection labelled `label` (its id from the label: letters, digits and `_`, made unique),
    /// with `alias` if given; its id.
    func create(label: String, alias: String?) throws(KeychainError) -> String {
        var base = String(
            label.lowercased().unicodeScalars.map {
                isIDCharacter($0) ? Character($0) : "_"
            })
        if base.isEmpty { base = "collection" }
        let taken = Set(list().map(\.id)).union(Self.reserved)
        var id = base
        var suffix = 2
        while taken.contains(id) {
            id = "\(base)_\(suffix)"
            suffix += 1
        }
        var attributes: [AttributeKey: AttributeValue] = [
            .service: .string(Self.service), .account: .string(id), .label: .string(label), .accessible: .string("ck"),
        ]
        if let alias, !alias.isEmpty { attributes[AttributeKey.secretService("alias")] = .string(alias) }
        _ = try services(caller).add(NewItem(.genericPassword, attributes: attributes, data: Data()), returning: [])
        return id
    }

    private func entryQuery(_ id: String) -> ItemQuery {
        ItemQuery(.genericPassword, matching: [.service: .string(Self.service), .account: .string(id)])
    }

    /// The service of the item that keeps the `login` collection's label once it is renamed: the keychain is
    /// that collection and has no registry entry (one generic password, account `login`, label its label,
    /// readable after the first unlock like the entries).
    static let labelService = "org.freedesktop.secrets.labels"

    /// The label `login` was given with `Set`, or nil (never renamed, or not readable before the first unlock).
    func loginLabel() -> String? {
        let found: [ItemResult]
        do {
            found = try services(caller).copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.service: .string(Self.labelService), .account: .string("login")],
                    returning: .attributes))
        } catch {
            return nil  // Never renamed (itemNotFound), or not readable before the first unlock: its built-in label.
        }
        return found.first?[.label]?.stringValue
    }

    /// Relabels the `login` collection (kept across restarts, backups and imports of the keychain).
    func renameLogin(label: String) throws(KeychainError) {
        _ = try services(caller).addOrUpdate(
            NewItem(
                .genericPassword,
                attributes: [
                    .service: .string(Self.labelService), .account: .string("login"), .label: .string(label),
                    .accessible: .string("ck"),
                ], data: Data()))
    }

    /// Relabels a collection.
    func rename(_ id: String, label: String) throws(KeychainError) {
        _ = try services(caller).update(entryQuery(id), with: ItemChanges(attributes: [.label: .string(label)]))
    }

    /// Gives a collection an alias (taking it from another collection that had it).
    func setAlias(_ alias: String, to id: String) throws(KeychainError) {
        for entry in list() where entry.alias == alias && entry.id != id {
            _ = try services(caller).update(
                entryQuery(entry.id), with: ItemChanges(attributes: [AttributeKey.secretService("alias"): .string("")]))
        }
        _ = try services(caller).update(
            entryQuery(id), with: ItemChanges(attributes: [AttributeKey.secretService("alias"): .string(alias)]))
    }

    /// Takes an alias from whichever collection has it.
    func removeAlias(_ alias: String) throws(KeychainError) {
        for entry in list() where entry.alias == alias {
            _ = try services(caller).update(
                entryQuery(entry.id), with: ItemChanges(attributes: [AttributeKey.secretService("alias"): .string("")]))
        }
    }

    /// Under the isolated policy: deletes a collection made with `CreateCollection` and `caller`'s items in
    /// it — only when no other program's remain; else nothing is deleted and the refusal says why (one program
    /// never deletes another's items: docs/LATCHKEY-SECURITY.md, "The Secret Service").
    func delete(_ id: String, as caller: CallerIdentity) throws(KeychainError) {
        let items = ItemQuery(
            .genericPassword, matching: [.service: .string(SecretStore.service(of: id))], synchronizable: .any,
            limit: .all, returning: [])
        let everyone = try count(items, caller: everyGroup)
        let own = try count(items, caller: caller)
        guard everyone == own else {
            throw KeychainError(
                .missingEntitlement,
                "the collection holds \(everyone - own) item(s) of other programs; it is deleted only once they are gone"
            )
        }
        try delete(id)
    }

    private func count(_ query: ItemQuery, caller: CallerIdentity) throws(KeychainError) -> Int {
        do {
            return try services(caller).copyMatching(query).count
        } catch KeychainError.itemNotFound {
            return 0
        }
    }

    // MARK: Each program's own aliases (isolated policy)

    /// The service of the items that keep each program's aliases under the isolated policy: one generic
    /// password per alias in the program's own group (account the alias, `ss.collection` the collection's
    /// id), so one program's `SetAlias` never redirects where another's items go.
    static let aliasService = "org.freedesktop.secrets.aliases"

    private func aliasQuery(_ name: String) -> ItemQuery {
        ItemQuery(
            .genericPassword, matching: [.service: .string(Self.aliasService), .account: .string(name)],
            returning: .attributes)
    }

    /// The id of the collection `caller`'s alias `name` names, if it has one (and the collection still exists).
    func alias(_ name: String, of caller: CallerIdentity) -> String? {
        let found: [ItemResult]
        do {
            found = try services(caller).copyMatching(aliasQuery(name))
        } catch {
            // None set (itemNotFound), or not readable before the first unlock: the alias names nothing of its own.
            return nil
        }
        guard let id = found.first?[AttributeKey.secretService("collection")]?.stringValue,
            list().contains(where: { $0.id == id })
        else { return nil }
        return id
    }

    /// Points `caller`'s alias `name` at collection `id`, or removes it (nil).
    func setAlias(_ name: String, to id: String?, for caller: CallerIdentity) throws(KeychainError) {
        do {
            _ = try services(caller).delete(
                ItemQuery(.genericPassword, matching: [.service: .string(Self.aliasService), .account: .string(name)]))
        } catch KeychainError.itemNotFound {
            // It had none.
        }
        guard let id else { return }
        _ = try services(caller).add(
            NewItem(
                .genericPassword,
                attributes: [
                    .service: .string(Self.aliasService), .account: .string(name), .accessible: .string("ck"),
                    AttributeKey.secretService("collection"): .string(id),
                ], data: Data()), returning: [])
    }

    /// Deletes a collection and its items (in every program's group).
    func delete(_ id: String) throws(KeychainError) {
        do {
            _ = try services(everyGroup).delete(
                ItemQuery(
                    .genericPassword, matching: [.service: .string(SecretStore.service(of: id))], synchronizable: .any,
                    limit: .all))
        } catch KeychainError.itemNotFound {
            // An empty collection: only its entry goes.
        }
        _ = try services(caller).delete(entryQuery(id))
    }
}

/// Whether a character may stand in a collection id as it is.
private func isIDCharacter(_ scalar: Unicode.Scalar) -> Bool {
    isASCIIAlphanumeric(scalar) || scalar == "_"
}
