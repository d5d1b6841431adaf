import FoundationEssentials
import LatchkeyCrypto

/// The XML of a KDBX 4 database written from entries: one group per label path component under a root group,
/// each entry's strings (the password, protected fields, and any value XML cannot hold as text — control
/// characters — protected: base64 of its bytes XORed with the inner stream), its times, and a reference to
/// the attachment that holds a secret that is not text.
struct KDBXXMLWriter {
    var output: [UInt8] = []
    let stream: InnerStream
    /// The attachments written to the inner header, in order.
    var attachments: [Data] = []

    /// A group: its name, subgroups by name in the order met, and entries.
    final class Group {
        let name: String
        var groups: [Group] = []
        var entries: [PasswordEntry] = []
        init(name: String) { self.name = name }

        func group(_ name: String) -> Group {
            if let found = groups.first(where: { $0.name == name }) { return found }
            let made = Group(name: name)
            groups.append(made)
            return made
        }
    }

    init(stream: InnerStream) { self.stream = stream }

    mutating func wipe() { output.withUnsafeMutableBytes { wipeBytes($0) } }

    mutating func write(_ text: String) { output.append(contentsOf: text.utf8) }

    /// Writes the whole document.
    mutating func document(name: String, entries: [PasswordEntry], now: Date) {
        let root = Group(name: name)
        for entry in entries {
            var group = root
            for name in entry.groups { group = group.group(name) }
            group.entries.append(entry)
        }
        write("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<KeePassFile>\n<Meta>\n")
        write("<Generator>Latchkey</Generator>\n")
        element("DatabaseName", name)
        write("<DatabaseNameChanged>\(Self.time(now))</DatabaseNameChanged>\n")
        write("<MemoryProtection><ProtectTitle>False</ProtectTitle><ProtectUserName>False</ProtectUserName>")
        write("<ProtectPassword>True</ProtectPassword><ProtectURL>False</ProtectURL><ProtectNotes>False</ProtectNotes>")
        write("</MemoryProtection>\n<RecycleBinEnabled>True</RecycleBinEnabled>\n</Meta>\n<Root>\n")
        group(root, now: now)
        write("<DeletedObjects/>\n</Root>\n</KeePassFile>\n")
    }

    mutating func group(_ group: Group, now: Date) {
        write("<Group>\n<UUID>\(Self.uuid())</UUID>\n")
        element("Name", group.name)
        write("<Times>\(Self.times(created: now, modified: now))</Times>\n")
        for entry in group.entries { self.entry(entry, now: now) }
        for child in group.groups { self.group(child, now: now) }
        write("</Group>\n")
    }

    mutating func entry(_ entry: PasswordEntry, now: Date) {
        write("<Entry>\n<UUID>\(Self.uuid())</UUID>\n")
        write(
            "<Times>\(Self.times(created: entry.created ?? now, modified: entry.modified ?? entry.created ?? now))</Times>\n"
        )
        string("Title", entry.title)
        string("UserName", entry.username)
        if let text = String(validating: entry.password, as: UTF8.self) {
            string("Password", text, protected: true)
        } else {
            string("Password", "", protected: true)
        }
        string("URL", entry.url)
        string("Notes", entry.notes)
        for field in entry.fields { string(field.name, field.value, protected: field.isProtected) }
        if String(validating: entry.password, as: UTF8.self) == nil {
            write(
                "<Binary><Key>\(EntryMapping.binarySecretAttachment)</Key><Value Ref=\"\(attachments.count)\"/></Binary>\n"
            )
            attachments.append(entry.password)
        }
        write("</Entry>\n")
    }

    mutating func element(_ name: String, _ text: String) {
        write("<\(name)>")
        output.append(contentsOf: Self.escaped(text))
        write("</\(name)>\n")
    }

    /// A `<String>`: protected when asked, or when XML cannot hold its value as text.
    mutating func string(_ key: String, _ value: String, protected: Bool = false) {
        write("<String><Key>")
        output.append(
            contentsOf: Self.escaped(
                Self.representable(key) ? key : String(key.unicodeScalars.filter(Self.isXMLCharacter))))
        write("</Key>")
        if protected || !Self.representable(value) {
            var bytes = Array(value.utf8)
            stream.apply(&bytes)
            write("<Value Protected=\"True\">\(Data(bytes).base64EncodedString())</Value></String>\n")
            bytes.withUnsafeMutableBytes { wipeBytes($0) }
        } else {
            write("<Value>")
            output.append(contentsOf: Self.escaped(value))
            write("</Value></String>\n")
        }
    }

    static func isXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    /// Whether XML text holds `text` as it is (a carriage return is written as a reference).
    static func representable(_ text: String) -> Bool { text.unicodeScalars.allSatisfy(isXMLCharacter) }

    static func escaped(_ text: String) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "<"): output.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): output.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "&"): output.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "\""): output.append(contentsOf: "&quot;".utf8)
            case 0x0D: output.append(contentsOf: "&#13;".utf8)
            default: output.append(byte)
            }
        }
        return output
    }

    static func uuid() -> String { SecureRandom.bytes(16).base64EncodedString() }

    /// KDBX 4's time: base64 of the little-endian seconds since 0001-01-01.
    static func time(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down)) + KDBXDatabase.epochOffset
        return Data((0..<8).map { UInt8(truncatingIfNeeded: seconds >> ($0 * 8)) }).base64EncodedString()
    }

    static func times(created: Date, modified: Date) -> String {
        "<CreationTime>\(time(created))</CreationTime><LastModificationTime>\(time(modified))</LastModificationTime>"
            + "<LastAccessTime>\(time(modified))</LastAccessTime><ExpiryTime>\(time(modified))</ExpiryTime>"
            + "<Expires>False</Expires><UsageCount>0</UsageCount><LocationChanged>\(time(modified))</LocationChanged>"
    }
}
