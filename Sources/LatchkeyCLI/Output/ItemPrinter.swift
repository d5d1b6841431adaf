import FoundationEssentials
import Latchkey

/// Prints an item in `security`'s layout, so scripts that parse `security find-generic-password` parse
/// `latchkey` the same way:
///
/// ```
/// keychain: "/home/alice/.local/share/latchkey/login.keychain"
/// version: 512
/// class: "genp"
/// attributes:
///     0x00000007 <blob>="mail"
///     "acct"<blob>="alice"
/// ```
///
/// Every attribute `security` prints is printed, in its order (by tag); Latchkey adds its own `agrp`,
/// `pdmn` and `sync` lines in tag order.
enum ItemPrinter {
    enum Format: String {
        case blob, uint32, sint32, timedate
    }

    struct Column {
        let tag: [UInt8]
        let key: AttributeKey
        let format: Format

        init(_ code: String, _ format: Format, key: AttributeKey? = nil) {
            tag = Array(code.utf8)
            self.key = key ?? AttributeKey(rawValue: code)
            self.format = format
        }

        init(number: UInt32, _ format: Format, key: AttributeKey) {
            tag = withUnsafeBytes(of: number.bigEndian) { Array($0) }
            self.key = key
            self.format = format
        }
    }

    private static let labelAndAlias = [
        Column(number: 7, .blob, key: .label), Column(number: 8, .blob, key: .alias),
    ]

    static let genericPasswordColumns =
        labelAndAlias + [
            Column("acct", .blob), Column("agrp", .blob), Column("cdat", .timedate), Column("crtr", .uint32),
            Column("cusi", .sint32), Column("desc", .blob), Column("gena", .blob), Column("icmt", .blob),
            Column("invi", .sint32), Column("mdat", .timedate), Column("nega", .sint32), Column("pdmn", .blob),
            Column("prot", .blob), Column("scrp", .sint32), Column("svce", .blob), Column("sync", .sint32),
            Column("type", .uint32),
        ]

    static let internetPasswordColumns =
        labelAndAlias + [
            Column("acct", .blob), Column("agrp", .blob), Column("atyp", .blob), Column("cdat", .timedate),
            Column("crtr", .uint32), Column("cusi", .sint32), Column("desc", .blob), Column("icmt", .blob),
            Column("invi", .sint32), Column("mdat", .timedate), Column("nega", .sint32), Column("path", .blob),
            Column("pdmn", .blob), Column("port", .uint32), Column("prot", .blob), Column("ptcl", .uint32),
            Column("scrp", .sint32), Column("sdmn", .blob), Column("srvr", .blob), Column("sync", .sint32),
            Column("type", .uint32),
        ]

    /// The columns for a class: `security`'s for passwords (and, after them, a Secret Service item's own
    /// `ss.` attributes, sorted); every stored attribute, sorted, for the others.
    static func columns(for result: ItemResult) -> [Column] {
        switch result.itemClass {
        case .genericPassword:
            return genericPasswordColumns
                + result.attributes.keys.filter(AttributeKey.isSecretServiceAttribute).sorted().map {
                    Column($0.rawValue, .blob)
                }
        case .internetPassword: return internetPasswordColumns
        default:
            return result.attributes.keys.sorted().map { key in
                let format: Format =
                    switch result.attributes[key]! {
                    case .date: .timedate
                    case .number, .bool: .uint32
                    default: .blob
                    }
                return Column(key.rawValue, format)
            }
        }
    }

    static func block(_ result: ItemResult, keychainPath: String) -> String {
        var lines = [
            "keychain: " + PrintBuffer.format(Array(keychainPath.utf8)),
            "version: 512",
            "class: " + PrintBuffer.format(Array(result.itemClass.rawValue.utf8)),
            "attributes:",
        ]
        for column in columns(for: result) {
            let value = result.attributes[column.key].map { format($0, as: column.format) } ?? "<NULL>"
            lines.append("    \(PrintBuffer.format(column.tag))<\(column.format.rawValue)>=\(value)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func format(_ value: AttributeValue, as format: Format) -> String {
        switch (value, format) {
        case (.number(let number), .uint32), (.number(let number), .sint32):
            return PrintBuffer.format(withUnsafeBytes(of: UInt32(truncatingIfNeeded: number).bigEndian) { Array($0) })
        case (.bool(let flag), _):
            return PrintBuffer.format(withUnsafeBytes(of: UInt32(flag ? 1 : 0).bigEndian) { Array($0) })
        case (.date(let date), _):
            return PrintBuffer.format(Array(timedate(date).utf8) + [0])
        case (.string(let text), _):
            return PrintBuffer.format(Array(text.utf8))
        case (.data(let bytes), _):
            return PrintBuffer.format(Array(bytes))
        case (.number(let number), _):
            return PrintBuffer.format(Array(String(number).utf8))
        }
    }

    /// `YYYYMMDDhhmmssZ` in UTC, as the macOS keychain stores dates.
    static func timedate(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return c.year!.digits(4) + c.month!.digits(2) + c.day!.digits(2) + c.hour!.digits(2) + c.minute!.digits(2)
            + c.second!.digits(2) + "Z"
    }
}
