import FoundationEssentials
import Latchkey
import LatchkeyCrypto

/// `latchkey backup list [--verify] [--item ref]`: the keychain's snapshots, and an item's versions.
enum SnapshotListing {
    static func run(_ arguments: ParsedArguments, directory: String, path: String, context: CLIContext) throws -> Int32
    {
        let keychain = try KeychainDatabase.open(at: path)
        let listing = try SnapshotDirectory.listIfPresent(directory, keychainID: try keychain.keychainID)
        for damaged in listing.damaged { context.warning(damaged.reason) }  // The reason names the file.
        guard let ref = arguments.value(.item) else {
            for snapshot in listing.snapshots {
                var line = SnapshotCommands.line(snapshot)
                if arguments.has(.verify) {
                    do throws(KeychainError) {
                        _ = try KeychainSnapshot.verifiedDatabase(at: snapshot.path)
                        line += "  ok"
                    } catch {
                        line += "  damaged"
                        context.warning(error.message)
                    }
                }
                context.stdout.line(line)
            }
            return 0
        }
        let reference = try itemReference(
            ref, keychain: keychain, newest: listing.snapshots.last, arguments: arguments, context: context)
        guard let parsed = PersistentReference.parse(reference) else {
            throw KeychainError.param("\(ref) is not a persistent reference")
        }
        let changes = try itemChanges(id: parsed.id, in: keychain)
        context.stdout.line("\(parsed.itemClass.rawValue) item \(Hex.encode(reference)), from the change feed:")
        if changes.isEmpty { context.stdout.line("  no change of it is in the feed") }
        for change in changes {
            context.stdout.line(
                "  v\(change.version)  \(change.kind)\(change.origin == .restore ? " (restore)" : change.origin == .sync ? " (sync)" : "")  change \(change.sequence)"
            )
        }
        context.stdout.line("snapshots:")
        for snapshot in listing.snapshots {
            let held = changes.last { $0.sequence <= snapshot.sequence }
            let version: String
            switch held?.kind {
            case nil: version = changes.first?.kind == .added ? "not yet added" : "older than the feed"
            case .deleted?, .tombstoned?: version = "deleted"
            case .added?, .updated?: version = "v\(held!.version)"
            }
            context.stdout.line("  \(SnapshotTime.iso(snapshot.taken))  \(version)  \(snapshot.path)")
        }
        return 0
    }

    /// The persistent reference `ref` stands for: itself in hex, else that of the one live item it names
    /// (which needs the keychain unlocked), else — an item deleted since — that of the one item it names in
    /// the newest snapshot.
    static func itemReference(
        _ ref: String, keychain: KeychainDatabase, newest: KeychainSnapshot?, arguments: ParsedArguments,
        context: CLIContext
    ) throws -> Data {
        if let bytes = Hex.decode(ref), bytes.count == PersistentReference.length { return Data(bytes) }
        let given = try context.unlock(
            keychain, arguments: arguments,
            prompt: "password to unlock \(context.keychainName(arguments.value(.keychain))): "
        )
        let items = try SnapshotCommands.items(
            of: keychain, returning: [.attributes, .persistentReference], context: context, presence: nil)
        do throws(KeychainError) {
            return try SnapshotCommands.resolve(ref, among: items, where: "the keychain").persistentReference
        } catch {
            guard error.status == .itemNotFound, let newest else { throw error }
            let copy = try SnapshotCopy(newest.path, environment: context.environment)
            defer { copy.close() }
            _ = try SnapshotRestore.unlock(
                copy, given: given, arguments: arguments, context: context, when: SnapshotTime.iso(newest.taken))
            let held = try SnapshotCommands.items(
                of: copy.keychain, returning: [.attributes, .persistentReference], context: context, presence: nil)
            do throws(KeychainError) {
                return try SnapshotCommands.resolve(
                    ref, among: held, where: "the snapshot of \(SnapshotTime.iso(newest.taken))"
                ).persistentReference
            } catch {
                guard error.status == .itemNotFound else { throw error }
                throw KeychainError(
                    .itemNotFound,
                    "neither the keychain nor its newest snapshot has an item named \(ref) (label, service or server)")
            }
        }
    }

    /// Every change of the item `id` in the feed, oldest first.
    static func itemChanges(id: Data, in keychain: KeychainDatabase) throws -> [KeychainChange] {
        var found: [KeychainChange] = []
        var after: Int64 = 0
        while true {
            let page = try keychain.changes(after: after, limit: 10_000)
            guard let last = page.last else { break }
            found += page.filter { $0.itemID == id }
            after = last.sequence
        }
        return found
    }
}
