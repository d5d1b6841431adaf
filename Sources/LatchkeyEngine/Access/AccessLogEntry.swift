package import FoundationEssentials

/// One entry of the access log (format v6, `access_log`): who asked for which item, when, through which
/// front end, and whether it was allowed and why. It names an item by its persistent reference, class and
/// names (label, service or server, account) and never holds a secret: nothing in it is read from an item's
/// data.
package struct AccessLogEntry: Sendable, Hashable {
    /// What was asked.
    package enum Operation: UInt8, Sendable, CaseIterable, CustomStringConvertible {
        /// A find that returned the item (or would have: a refusal).
        case read = 1
        /// An item added.
        case add = 2
        /// An item changed.
        case update = 3
        /// An item deleted.
        case delete = 4
        /// An item added, or changed when its primary key was taken.
        case addOrUpdate = 5
        /// A key the keychain holds used (signing, decrypting, deriving).
        case use = 6

        package var description: String {
            switch self {
            case .read: "read"
            case .add: "add"
            case .update: "update"
            case .delete: "delete"
            case .addOrUpdate: "add-or-update"
            case .use: "use"
            }
        }

        /// Whether the operation changes or deletes items (its entry is synced as the change is).
        package var changesItems: Bool {
            switch self {
            case .read, .use: false
            case .add, .update, .delete, .addOrUpdate: true
            }
        }
    }

    /// Who asked: the identity the agent attested, as the user knows it, and its process.
    package struct Caller: Sendable, Hashable {
        /// What the program is known by: an executable's path, a Flatpak app ID, a label, an application
        /// identifier (`latchkey log --program` matches it).
        package var program: String
        /// How it was identified (`executable 1a2b3c4d…`, `flatpak`, `registered as com.example.mail`,
        /// `unidentified: …`).
        package var identity: String
        /// Its process id, when the front end knows it.
        package var pid: Int32?
        /// Its user, when the front end knows it.
        package var uid: UInt32?
        /// The front end it came through (`the agent's socket`, `the Secret Service`, `the SSH agent`).
        package var frontEnd: String

        /// A caller.
        package init(program: String, identity: String, pid: Int32?, uid: UInt32?, frontEnd: String) {
            self.program = program
            self.identity = identity
            self.pid = pid
            self.uid = uid
            self.frontEnd = frontEnd
        }
    }

    /// The item asked for: its persistent reference (nil when the request named no single item: a refused
    /// find, an add-or-update), its class, and its names (nil when unknown).
    package struct Item: Sendable, Hashable {
        package var reference: Data?
        package var itemClass: ItemClass
        package var names: String?

        /// An item.
        package init(reference: Data?, itemClass: ItemClass, names: String?) {
            self.reference = reference
            self.itemClass = itemClass
            self.names = names
        }
    }

    /// The entry's number: from 1, in order, never reused (set when it is stored; 0 before).
    package var sequence: Int64
    /// When (milliseconds).
    package var time: Date
    /// Who.
    package var caller: Caller
    /// What was asked.
    package var operation: Operation
    /// Which item.
    package var item: Item
    /// Allowed or refused.
    package var allowed: Bool
    /// Why: how it was allowed (`its access groups`, `the item's access list`), or the refusal's status and
    /// words (never a secret: errors carry none).
    package var reason: String

    /// An entry (numbered when stored).
    package init(
        time: Date = Date(), caller: Caller, operation: Operation, item: Item, allowed: Bool, reason: String
    ) {
        self.sequence = 0
        self.time = Date(timeIntervalSince1970: (time.timeIntervalSince1970 * 1_000).rounded(.down) / 1_000)
        self.caller = caller
        self.operation = operation
        self.item = item
        self.allowed = allowed
        self.reason = reason
    }

    /// The sealed entry's plaintext.
    func encoded() -> Data {
        var writer = ByteWriter(capacity: 256)
        writer.appendRaw("lk1/log".utf8)
        writer.append(Int64(time.timeIntervalSince1970 * 1_000))
        writer.appendField(caller.program)
        writer.appendField(caller.identity)
        writer.append(Int64(caller.pid ?? -1))
        writer.append(Int64(caller.uid.map(Int64.init) ?? -1))
        writer.appendField(caller.frontEnd)
        writer.append(operation.rawValue)
        writer.appendField(item.reference ?? Data())
        writer.appendField(item.itemClass.rawValue)
        writer.appendField(item.names ?? "")
        writer.append(allowed ? 1 as UInt8 : 0)
        writer.appendField(reason)
        return writer.data
    }

    /// Decodes `encoded()`; nil when malformed.
    static func decode(_ data: Data, sequence: Int64) -> AccessLogEntry? {
        data.withUnsafeBytes { buffer -> AccessLogEntry? in
            var reader = ByteReader(buffer)
            do {
                guard try reader.readRaw(7) == Data("lk1/log".utf8) else { return nil }
                let milliseconds = try reader.readInt64()
                let program = try reader.readText()
                let identity = try reader.readText()
                let pid = try reader.readInt64()
                let uid = try reader.readInt64()
                let frontEnd = try reader.readText()
                guard let operation = Operation(rawValue: try reader.readByte()) else { return nil }
                let reference = try reader.readField()
                guard let itemClass = ItemClass(rawValue: try reader.readText()) else { return nil }
                let names = try reader.readText()
                let allowed = try reader.readByte()
                let reason = try reader.readText()
                guard reader.isAtEnd, allowed <= 1, pid >= -1, pid <= Int64(Int32.max), uid >= -1,
                    uid <= Int64(UInt32.max)
                else { return nil }
                var entry = AccessLogEntry(
                    time: Date(timeIntervalSince1970: Double(milliseconds) / 1_000),
                    caller: Caller(
                        program: program, identity: identity, pid: pid < 0 ? nil : Int32(pid),
                        uid: uid < 0 ? nil : UInt32(uid), frontEnd: frontEnd),
                    operation: operation,
                    item: Item(
                        reference: reference.isEmpty ? nil : reference, itemClass: itemClass,
                        names: names.isEmpty ? nil : names),
                    allowed: allowed == 1, reason: reason)
                entry.sequence = sequence
                return entry
            } catch {
                return nil  // Reported by the caller as errSecDecode.
            }
        }
    }
}
