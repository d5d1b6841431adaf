import FoundationEssentials
import LatchkeyCaller
import LatchkeyCrypto
import LatchkeyEngine

/// Writes the access log (issue 53): for every item request a front end serves, one entry per item read,
/// added, changed, deleted or used — or one refusal — before the answer goes back, so an answered request's
/// entries are on disk. Refusals also go to the agent's log (the journal). An entry names the item by its
/// persistent reference, class and names, never its secret: a find is run with the item's attributes added
/// to what it returns (and they are taken off again when the caller did not ask for them), and changes and
/// deletions list their items' names first, without reading any secret.
///
/// Before the first unlock nothing can be sealed: the agent then serves no item request anyway, and the
/// refusals go to the journal only.
struct AccessRecorder {
    let keychain: KeychainDatabase
    let caller: AccessLogEntry.Caller
    let log: @Sendable (String) -> Void

    /// Runs `request` with `serve`, recording what it did as allowed by `reason` (or the refusal).
    func perform(
        _ request: KeychainRequest, reason: String,
        _ serve: (KeychainRequest) throws(KeychainError) -> KeychainReply
    ) throws(KeychainError) -> KeychainReply {
        try perform(request, listing: serve) { (request) throws(KeychainError) in (try serve(request), reason) }
    }

    /// Runs `request` with `serve`, which says how it was allowed; `listing` runs the find that names a change's
    /// or a deletion's items beforehand (in the caller's groups, as the change itself).
    func perform(
        _ request: KeychainRequest, listing: (KeychainRequest) throws(KeychainError) -> KeychainReply,
        _ serve: (KeychainRequest) throws(KeychainError) -> (KeychainReply, String)
    ) throws(KeychainError) -> KeychainReply {
        guard let plan = Self.plan(for: request) else { return try serve(request).0 }
        let before: [AccessLogEntry.Item]
        switch request {
        case .update(let query, _), .delete(let query):
            before = listed(query, listing)
        default:
            before = []
        }
        let reply: KeychainReply
        let reason: String
        do {
            (reply, reason) = try serve(plan.augmented)
        } catch {
            // Nothing matched is not a refusal the journal needs (the log still has it).
            record(
                [plan.subject], operation: plan.operation, allowed: false, reason: Self.words(of: error),
                journal: error.status != .itemNotFound)
            throw error
        }
        var items: [AccessLogEntry.Item]
        switch reply {
        case .items(let results): items = results.map(Self.item(of:))
        case .item(let result?):
            var added = Self.item(of: result)
            added.names = added.names ?? plan.subject.names
            items = [added]
        case .identities(let matches):
            items = matches.flatMap { [Self.item(of: $0.certificate), Self.item(of: $0.key)] }
        case .count(let count):
            // What the listing named; the request's own words when it could not name them.
            items = count == 0 ? [] : before.isEmpty ? [plan.subject] : before
        default: items = [plan.subject]
        }
        if case .item(nil) = reply { items = [plan.subject] }
        record(items, operation: plan.operation, allowed: true, reason: reason)
        return Self.strip(reply, for: request)
    }

    /// What a request is in the log, the request run in its place (asking for what the log names), and the
    /// item it names before it runs; nil for a request the log does not record.
    private static func plan(for request: KeychainRequest) -> (
        operation: AccessLogEntry.Operation, augmented: KeychainRequest, subject: AccessLogEntry.Item
    )? {
        switch request {
        case .copyMatching(var query):
            let subject = item(of: query.itemClass, query.matching, reference: query.persistentReference)
            query.returning.insert(.attributes)
            return (.read, .copyMatching(query), subject)
        case .add(let new, let returning):
            let subject = item(of: new.itemClass, new.attributes, reference: nil)
            return (.add, .add(new, returning: naming(returning)), subject)
        case .addOrUpdate(let new):
            return (.addOrUpdate, request, item(of: new.itemClass, new.attributes, reference: nil))
        case .update(let query, _):
            return (.update, request, item(of: query.itemClass, query.matching, reference: query.persistentReference))
        case .delete(let query):
            return (.delete, request, item(of: query.itemClass, query.matching, reference: query.persistentReference))
        case .copyIdentities(let certificates, _, _):
            return (.read, request, item(of: .identity, certificates.matching, reference: nil))
        case .useHeldKey(let reference, _):
            return (.use, request, AccessLogEntry.Item(reference: reference, itemClass: .key, names: nil))
        case .createHeldKey(let held, let returning):
            return (
                .add, .createHeldKey(held, returning: naming(returning)),
                item(of: .key, held.attributes, reference: nil)
            )
        case .importHeldKey(let key, let attributes, let returning):
            return (
                .add, .importHeldKey(key, attributes: attributes, returning: naming(returning)),
                item(of: .key, attributes, reference: nil)
            )
        default:
            return nil
        }
    }

    /// What an add returns so the log can name the new item: what the caller asked for (every result carries
    /// its persistent reference), or the reference alone when it asked for nothing.
    private static func naming(_ returning: ReturnOptions) -> ReturnOptions {
        returning.isEmpty ? .persistentReference : returning
    }

    /// The reply as the caller asked for it: without the attributes the log asked for on its behalf, and
    /// nothing for an add that asked for nothing.
    private static func strip(_ reply: KeychainReply, for request: KeychainRequest) -> KeychainReply {
        let asked: ReturnOptions
        switch request {
        case .copyMatching(let query): asked = query.returning
        case .add(_, let returning), .createHeldKey(_, let returning), .importHeldKey(_, _, let returning):
            asked = returning
        default: return reply
        }
        if case .copyMatching = request {
        } else {
            return asked.isEmpty ? .item(nil) : reply
        }
        func stripped(_ result: ItemResult) -> ItemResult {
            ItemResult(
                itemClass: result.itemClass, attributes: asked.contains(.attributes) ? result.attributes : [:],
                data: result.data, persistentReference: result.persistentReference)
        }
        switch reply {
        case .items(let results): return .items(results.map(stripped))
        default: return reply
        }
    }

    /// The items a change or deletion will touch, by their names (attributes only: no secret is read, and
    /// no item asks the user); empty when they cannot be listed.
    private func listed(_ query: ItemQuery, _ listing: (KeychainRequest) throws(KeychainError) -> KeychainReply)
        -> [AccessLogEntry.Item]
    {
        var find = query
        find.returning = .attributes
        find.limit = .all
        do {
            guard case .items(let results) = try listing(.copyMatching(find)) else { return [] }
            return results.map(Self.item(of:))
        } catch {
            return []  // Nothing matches (the change will say so), or the listing is refused as the change will be.
        }
    }

    private static func item(of result: ItemResult) -> AccessLogEntry.Item {
        AccessLogEntry.Item(
            reference: result.persistentReference.isEmpty ? nil : result.persistentReference,
            itemClass: result.itemClass, names: ItemAccessList.summary(of: result.attributes))
    }

    private static func item(of itemClass: ItemClass, _ attributes: [AttributeKey: AttributeValue], reference: Data?)
        -> AccessLogEntry.Item
    {
        AccessLogEntry.Item(reference: reference, itemClass: itemClass, names: ItemAccessList.summary(of: attributes))
    }

    /// A refusal's status and words, as the log keeps them (errors carry no secret).
    static func words(of error: KeychainError) -> String {
        "\(error.status.name) (\(error.status.rawValue)): \(error.detail ?? error.message)"
    }

    /// Appends the entries (one per item) and, for a refusal, tells the journal. A log that cannot be written
    /// (before the first unlock, a full disk) is said in the journal; the request is answered all the same.
    private func record(
        _ items: [AccessLogEntry.Item], operation: AccessLogEntry.Operation, allowed: Bool, reason: String,
        journal: Bool = false
    ) {
        let now = Date()
        let entries = items.map {
            AccessLogEntry(time: now, caller: caller, operation: operation, item: $0, allowed: allowed, reason: reason)
        }
        if journal {
            log(
                "refused \(operation) of \(items.first.map(Self.describe) ?? "an item") to \(caller.program) "
                    + "(\(caller.identity), pid \(caller.pid.map(String.init) ?? "?")) through \(caller.frontEnd): \(reason)"
            )
        }
        do {
            try keychain.appendToAccessLog(entries)
        } catch {
            log("the access log cannot be written: \(error.message)")
        }
    }

    private static func describe(_ item: AccessLogEntry.Item) -> String {
        var text = item.itemClass.rawValue + " item"
        if let names = item.names { text += " " + names }
        if let reference = item.reference { text += " " + Hex.encode(reference) }
        return text
    }
}

extension AccessLogEntry.Caller {
    /// The caller as the log names it: the program the gate attested, its process and front end; `standing`
    /// adds how the agent served it (`registered as com.example.mail`).
    init(_ attested: AttestedCaller, standing: String? = nil) {
        let program: String
        var identity: String
        switch attested.attestation {
        case .executable(let path, let digest):
            program = path
            identity = "executable \(Hex.encode(digest.prefix(4)))…"
        case .sandbox(let app):
            program = app
            identity = "flatpak"
        case .confined(let label):
            program = label
            identity = "confined"
        case .unidentified(let reason):
            program = "unidentified"
            identity = "unidentified: \(reason)"
        }
        if let standing { identity += ", " + standing }
        self.init(
            program: program, identity: identity, pid: attested.pid, uid: attested.uid,
            frontEnd: attested.frontEnd.rawValue)
    }
}
