import FoundationEssentials
package import LatchkeyEngine

/// An item an import would add, with how to tell whether the keychain has it already.
package struct ImportCandidate: Sendable {
    /// How an item already in the keychain is recognised as this one.
    package enum Identity: Sendable, Hashable {
        /// By its class's primary key (a password manager's entry): the same key and the same attributes and
        /// secret is the same item; the same key with anything else is another item, and this one is skipped.
        case primaryKey
        /// By label, free-form attributes and secret (a Secret Service item, whose account is random), as
        /// `import --from-secret-service` recognises it.
        case secretService
    }

    package var item: KeychainBackup.Item
    /// How the report names it (its label path).
    package var name: String
    package var identity: Identity

    package init(item: KeychainBackup.Item, name: String, identity: Identity) {
        self.item = item
        self.name = name
        self.identity = identity
    }
}

/// Adds an import's items to a keychain in one transaction (all or none), after sorting out those it holds
/// already and those whose primary key another item has; `dryRun` only sorts.
package enum ItemImport {
    static let primaryKeys: [ItemClass: [AttributeKey]] = [
        .genericPassword: [.account, .service],
        .internetPassword: [.account, .securityDomain, .server, .protocol, .authenticationType, .port, .path],
    ]
    /// Attributes that say where and how an item is kept, not what it is: not compared.
    static let bookkeeping: Set<AttributeKey> = [
        .creationDate, .modificationDate, .accessible, .synchronizable, .accessControl, .accessGroup, .tokenID,
        .keyStorage,
    ]

    package static func run(
        _ candidates: [ImportCandidate], into database: KeychainDatabase, caller: CallerIdentity, dryRun: Bool,
        progress: ProgressHandler? = nil
    ) throws(KeychainError) -> ImportReport {
        var report = ImportReport()
        var planned: [KeychainBackup.Item] = []
        var seen: Set<[AttributeKey: AttributeValue]> = []
        for candidate in candidates {
            let item = candidate.item
            let key = identityKey(candidate)
            if seen.contains(key) {
                report.skipped.append(
                    SkippedEntry(name: candidate.name, reason: duplicateReason(candidate, inFile: true)))
                continue
            }
            seen.insert(key)
            switch try existing(candidate, in: database, caller: caller) {
            case .none:
                planned.append(item)
            case .same:
                report.present += 1
            case .other:
                report.skipped.append(
                    SkippedEntry(name: candidate.name, reason: duplicateReason(candidate, inFile: false)))
            }
        }
        for item in planned { report.imported[item.itemClass, default: 0] += 1 }
        if !dryRun && !planned.isEmpty {
            let summary = try database.restore(planned, onConflict: .skip, caller: caller, progress: progress)
            // Items another program added meanwhile, or protected ones the comparison above could not read:
            // the restore kept what was there, and the report says how many.
            report.keptAtWrite = summary.skipped
        }
        return report
    }

    enum Existing { case none, same, other }

    /// What `candidate` is to the keychain's items.
    static func existing(_ candidate: ImportCandidate, in database: KeychainDatabase, caller: CallerIdentity)
        throws(KeychainError) -> Existing
    {
        let item = candidate.item
        var matching: [AttributeKey: AttributeValue] = [:]
        switch candidate.identity {
        case .primaryKey:
            for key in primaryKeys[item.itemClass] ?? [] { matching[key] = item.attributes[key] }
            matching[.accessGroup] = item.attributes[.accessGroup]
        case .secretService:
            matching[.service] = item.attributes[.service]
            for (key, value) in item.attributes where AttributeKey.isSecretServiceAttribute(key) {
                matching[key] = value
            }
        }
        let found: [ItemResult]
        do throws(KeychainError) {
            found = try database.copyMatching(
                ItemQuery(
                    item.itemClass, matching: matching.compactMapValues { $0 }, synchronizable: .any, limit: .all,
                    returning: [.attributes, .data], authenticationUI: .skip),
                caller: caller)
        } catch {
            guard error.status == .itemNotFound else { throw error }
            return .none
        }
        switch candidate.identity {
        case .primaryKey:
            let keys = primaryKeys[item.itemClass] ?? []
            let sameKey = found.filter { result in keys.allSatisfy { same(result[$0], item.attributes[$0]) } }
            if sameKey.isEmpty { return .none }
            return sameKey.contains { sameContents($0, item) } ? .same : .other
        case .secretService:
            // An empty value is no value: the keychain gives none back for it.
            let ours = item.attributes.filter {
                AttributeKey.isSecretServiceAttribute($0.key) && $0.value != .string("")
            }
            return found.contains { result in
                let theirs = result.attributes.filter {
                    AttributeKey.isSecretServiceAttribute($0.key) && $0.value != .string("")
                }
                return theirs == ours && result[.label] == item.attributes[.label] && result.data == item.data
            } ? .same : .none
        }
    }

    /// Equal, counting a missing value as the class's default ('' or 0), as the primary key does.
    static func same(_ a: AttributeValue?, _ b: AttributeValue?) -> Bool {
        func normalized(_ value: AttributeValue?) -> AttributeValue? {
            switch value {
            case nil, .string(""), .number(0), .data(Data()): nil
            default: value
            }
        }
        return normalized(a) == normalized(b)
    }

    /// Whether an item found has every attribute and the secret the candidate has, and no other content.
    static func sameContents(_ result: ItemResult, _ item: KeychainBackup.Item) -> Bool {
        let keys = Set(result.attributes.keys).union(item.attributes.keys).subtracting(bookkeeping)
        return keys.allSatisfy { same(result[$0], item.attributes[$0]) }
            && (result.data ?? Data()) == (item.data ?? Data())
    }

    /// What tells two candidates of one file apart.
    static func identityKey(_ candidate: ImportCandidate) -> [AttributeKey: AttributeValue] {
        let item = candidate.item
        var key: [AttributeKey: AttributeValue] = ["class": .string(item.itemClass.rawValue)]
        switch candidate.identity {
        case .primaryKey:
            for name in primaryKeys[item.itemClass] ?? [] where !same(item.attributes[name], nil) {
                key[name] = item.attributes[name]
            }
            key[.accessGroup] = item.attributes[.accessGroup]
        case .secretService:
            key = item.attributes.filter { !bookkeeping.contains($0.key) && $0.key != .account }
            key["v_Data"] = .data(item.data ?? Data())
        }
        return key
    }

    static func duplicateReason(_ candidate: ImportCandidate, inFile: Bool) -> String {
        let who = inFile ? "another entry of the file" : "another item of the keychain"
        switch (candidate.identity, candidate.item.itemClass) {
        case (.secretService, _): return "the same as \(who)"
        case (_, .internetPassword): return "\(who) has the same account at the same address"
        default: return "\(who) has the same name and account"
        }
    }
}
