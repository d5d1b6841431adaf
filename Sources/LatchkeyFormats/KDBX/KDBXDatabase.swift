import FoundationEssentials
package import LatchkeyCrypto
package import LatchkeyEngine
import LatchkeyPKI

/// A KeePass database (KDBX 4 or 3.1, as KeePassXC and KeePass write them) read into entries: each entry's
/// title, user name, password, URL, notes and custom fields, its groups as a path (the root group left out),
/// and its times; entries in the recycle bin, and attachments (which a keychain item cannot hold), are
/// reported, not dropped in silence. Older versions of entries (their history) are not read.
package struct KDBXDatabase: Sendable {
    package var name: String
    package var version: String
    package var keyDerivation: KDBXKeyDerivation
    package var entries: [PasswordEntry]
    package var skipped: [SkippedEntry]

    /// Opens `file` with its password and/or key file: `errSecAuthFailed` for a wrong one, `errSecDecode` for
    /// a damaged file, `errSecParam` for a key derivation beyond `limits`.
    package static func read(
        _ file: [UInt8], password: Passphrase?, keyFile: [UInt8]?, limits: KDBXLimits = .default,
        what: String = "the database"
    ) throws(KeychainError) -> KDBXDatabase {
        let header = try KDBXHeader.read(file, what: what)
        let composite = try KDBXCompositeKey.make(password: password, keyFile: keyFile)
        var payload = try KDBXPayload.open(file, header: header, composite: composite, limits: limits, what: what)
        defer { payload.xml.withUnsafeMutableBytes { wipeBytes($0) } }
        var database = try document(
            payload.xml, stream: payload.stream, attachments: payload.attachments,
            headerHash: header.major == 3 ? header.bytes.withUnsafeBytes { FormatPrimitives.sha256([$0]) } : nil,
            what: what)
        database.version = "\(header.major).\(header.minor)"
        database.keyDerivation = header.keyDerivation
        return database
    }

    /// The entries of a database's XML (its payload, decrypted): protected values unmasked with `stream`,
    /// attachments from the inner header's (`attachments`, KDBX 4) or the XML's own pool (3.1), and (3.1) the
    /// header's SHA-256 checked against the one the XML holds.
    package static func document(
        _ xml: [UInt8], stream: InnerStream, attachments inner: [[UInt8]], headerHash: SecureBytes?, what: String
    ) throws(KeychainError) -> KDBXDatabase {
        let root = try KeePassXML.parse(xml, what: "\(what)'s XML") { (value: inout [UInt8]) throws(KeychainError) in
            guard var decoded = Data(base64Encoded: String(decoding: value, as: UTF8.self)).map(Array.init) else {
                throw KeychainError.decode("\(what) has a protected value that is not base64")
            }
            value.withUnsafeMutableBytes { wipeBytes($0) }
            stream.apply(&decoded)
            value = decoded
        }
        defer { root.wipe() }
        guard root.name == "KeePassFile", let meta = root.child("Meta"), let top = root.child("Root")?.child("Group")
        else {
            throw KeychainError.decode("\(what)'s XML is not a KeePass file (no KeePassFile, Meta and Root/Group)")
        }
        if let headerHash, let hash = meta.child("HeaderHash")?.text, !hash.isEmpty {
            guard Data(base64Encoded: hash) == headerHash.withUnsafeBytes({ Data($0) }) else {
                throw KeychainError.decode(
                    "\(what)'s header does not match the hash its payload holds (the file is damaged)")
            }
        }
        let attachments = inner.map { Data($0) }
        var byID: [String: Data] = [:]
        for binary in meta.child("Binaries")?.children("Binary") ?? [] {
            var data =
                binary.attributes["Protected"]?.lowercased() == "true"
                ? binary.value : Array(Data(base64Encoded: binary.text) ?? Data())
            if binary.attributes["Compressed"]?.lowercased() == "true" {
                data = try Inflate.gunzip(data, limit: 1 << 30, what: "\(what)'s attachment")
            }
            byID[binary.attributes["ID"] ?? ""] = Data(data)
        }
        let recycleBin =
            meta.child("RecycleBinEnabled")?.text.lowercased() != "false" ? meta.child("RecycleBinUUID")?.text : nil
        var database = KDBXDatabase(
            name: meta.child("DatabaseName")?.text ?? "", version: "", keyDerivation: .aes(rounds: 0, seed: []),
            entries: [], skipped: [])
        func walk(_ group: XMLElement, path: [String], recycled: Bool) {
            for element in group.children {
                switch element.name {
                case "Entry":
                    let (entry, left) = Self.entry(element, groups: path, attachments: attachments, byID: byID)
                    if recycled {
                        database.skipped.append(SkippedEntry(name: entry.labelPath, reason: "in the recycle bin"))
                        continue
                    }
                    database.entries.append(entry)
                    database.skipped.append(contentsOf: left)
                case "Group":
                    let name = element.child("Name")?.text ?? ""
                    let uuid = element.child("UUID")?.text
                    let inBin =
                        recycled || (recycleBin != nil && uuid == recycleBin && uuid != "AAAAAAAAAAAAAAAAAAAAAA==")
                    walk(element, path: path + [name], recycled: inBin)
                default: break
                }
            }
        }
        walk(top, path: [], recycled: false)
        return database
    }

    /// An entry and the attachments it keeps that an item cannot hold.
    static func entry(_ element: XMLElement, groups: [String], attachments: [Data], byID: [String: Data])
        -> (PasswordEntry, [SkippedEntry])
    {
        var entry = PasswordEntry(title: "", groups: groups)
        for string in element.children("String") {
            let key = string.child("Key")?.text ?? ""
            guard let value = string.child("Value") else { continue }
            switch key {
            case "Title": entry.title = value.text
            case "UserName": entry.username = value.text
            case "Password": entry.password = Data(value.value)
            case "URL": entry.url = value.text
            case "Notes": entry.notes = value.text
            default:
                let protected = ["Protected", "ProtectInMemory"].contains {
                    value.attributes[$0]?.lowercased() == "true"
                }
                entry.fields.append(PasswordEntry.Field(name: key, value: value.text, isProtected: protected))
            }
        }
        var left: [SkippedEntry] = []
        for binary in element.children("Binary") {
            let key = binary.child("Key")?.text ?? ""
            guard let value = binary.child("Value") else { continue }
            let data: Data?
            if let reference = value.attributes["Ref"] {
                data = byID[reference] ?? Int(reference).flatMap { $0 < attachments.count ? attachments[$0] : nil }
            } else {
                data = Data(base64Encoded: value.text)
            }
            if key == EntryMapping.binarySecretAttachment, entry.password.isEmpty, let data {
                entry.password = data
            } else {
                left.append(
                    SkippedEntry(
                        name: "\(entry.labelPath) (attachment \(key))",
                        reason: "an attachment, which a keychain item cannot hold"))
            }
        }
        let times = element.child("Times")
        entry.created = times?.child("CreationTime").flatMap { date($0.text) }
        entry.modified = times?.child("LastModificationTime").flatMap { date($0.text) }
        return (entry, left)
    }

    /// Seconds from 0001-01-01 to 1970-01-01.
    static let epochOffset: Int64 = 62_135_596_800

    /// A KDBX time: base64 of little-endian seconds since 0001-01-01 (KDBX 4) or ISO 8601 in UTC (3.1).
    static func date(_ text: String) -> Date? {
        if !text.contains("-"), let bytes = Data(base64Encoded: text), bytes.count == 8 {
            let seconds = bytes.enumerated().reduce(Int64(0)) { $0 | Int64($1.element) << ($1.offset * 8) }
            return Date(timeIntervalSince1970: Double(seconds - epochOffset))
        }
        let fields = text.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        guard fields.count >= 6, (1...9999).contains(fields[0]), (1...12).contains(fields[1]),
            (1...31).contains(fields[2])
        else { return nil }
        // Days from 1970-01-01 to the civil date (the proleptic Gregorian calendar, in UTC).
        let year = fields[1] <= 2 ? fields[0] - 1 : fields[0]
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (fields[1] + (fields[1] > 2 ? -3 : 9)) + 2) / 5 + fields[2] - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: Double(days * 86_400 + fields[3] * 3_600 + fields[4] * 60 + fields[5]))
    }
}
