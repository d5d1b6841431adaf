import FoundationEssentials
package import LatchkeyEngine

/// The CSV files browsers and Bitwarden export passwords to, told apart by their header row:
///
/// - Firefox (about:logins, "Export Logins…"): `url,username,password,httpRealm,formActionOrigin,guid,
///   timeCreated,timeLastUsed,timePasswordChanged`, every field quoted, times in milliseconds since 1970;
/// - Chromium and Chrome (Password Manager, "Export passwords"): `name,url,username,password` and, since
///   Chrome 116, `note`;
/// - Bitwarden (Tools, "Export vault", .csv): `folder,favorite,type,name,notes,fields,reprompt,login_uri,
///   login_username,login_password,login_totp`, custom fields as `name: value` lines.
package enum BrowserExport: String, CaseIterable, Sendable {
    case firefox = "Firefox"
    case chromium = "Chromium"
    case bitwarden = "Bitwarden"

    /// The columns each export always has.
    static let requiredColumns: [BrowserExport: [String]] = [
        .firefox: ["url", "username", "password", "httpRealm", "formActionOrigin", "guid", "timeCreated"],
        .chromium: ["name", "url", "username", "password"],
        .bitwarden: ["folder", "type", "name", "notes", "fields", "login_uri", "login_username", "login_password"],
    ]

    /// The export whose columns `header` has; Bitwarden's and Firefox's before Chromium's, which are fewer.
    static func detect(_ header: [String]) -> BrowserExport? {
        let columns = Set(header)
        return [.bitwarden, .firefox, .chromium].first { requiredColumns[$0]!.allSatisfy(columns.contains) }
    }

    /// The entries of an export, which it is, and the rows left out and why.
    package static func read(_ bytes: [UInt8], what: String) throws(KeychainError) -> (
        format: BrowserExport, entries: [PasswordEntry], skipped: [SkippedEntry]
    ) {
        let rows = try CSVTable.parse(bytes, what: what)
        guard let header = rows.first, let format = detect(header) else {
            throw KeychainError.decode(
                "\(what) is not a password export of Firefox, Chromium or Bitwarden (its first row names other columns)"
            )
        }
        var column: [String: Int] = [:]
        for (index, name) in header.enumerated() where column[name] == nil { column[name] = index }
        var entries: [PasswordEntry] = []
        var skipped: [SkippedEntry] = []
        for (offset, row) in rows.dropFirst().enumerated() {
            func value(_ name: String) -> String {
                guard let index = column[name], index < row.count else { return "" }
                return row[index]
            }
            let number = offset + 2
            guard row.count == header.count else {
                skipped.append(
                    SkippedEntry(
                        name: "row \(number)", reason: "a row of another width than the header"))
                continue
            }
            switch format {
            case .firefox: entries.append(firefox(value))
            case .chromium: entries.append(chromium(value))
            case .bitwarden:
                let type = value("type")
                guard type == "login" || type == "note" else {
                    skipped.append(SkippedEntry(name: value("name"), reason: "a kind other than login or note"))
                    continue
                }
                entries.append(bitwarden(value))
            }
        }
        return (format, entries, skipped)
    }

    static func firefox(_ value: (String) -> String) -> PasswordEntry {
        func time(_ name: String) -> Date? {
            Int64(value(name)).map { Date(timeIntervalSince1970: Double($0) / 1000) }
        }
        var entry = PasswordEntry(
            title: "", username: value("username"), password: Data(value("password").utf8), url: value("url"),
            realm: value("httpRealm"), created: time("timeCreated"),
            modified: time("timePasswordChanged") ?? time("timeCreated"))
        let action = value("formActionOrigin")
        if !action.isEmpty && action != entry.url {
            entry.fields.append(PasswordEntry.Field(name: "formActionOrigin", value: action))
        }
        return entry
    }

    static func chromium(_ value: (String) -> String) -> PasswordEntry {
        PasswordEntry(
            title: value("name"), username: value("username"), password: Data(value("password").utf8),
            url: value("url"), notes: value("note"))
    }

    static func bitwarden(_ value: (String) -> String) -> PasswordEntry {
        let uris = value("login_uri").split(separator: ",").map(String.init)
        var entry = PasswordEntry(
            title: value("name"),
            groups: value("folder").split(separator: "/").map(String.init), username: value("login_username"),
            password: Data(value("login_password").utf8), url: uris.first ?? "", notes: value("notes"))
        for (index, uri) in uris.enumerated().dropFirst() {
            entry.fields.append(PasswordEntry.Field(name: "URL \(index + 1)", value: uri))
        }
        for line in value("fields").split(separator: "\n", omittingEmptySubsequences: true) {
            let text = line.hasSuffix("\r") ? line.dropLast() : line
            if let colon = text.firstRange(of: ": ") {
                entry.fields.append(
                    PasswordEntry.Field(
                        name: String(text[..<colon.lowerBound]), value: String(text[colon.upperBound...])))
            } else {
                entry.fields.append(PasswordEntry.Field(name: String(text), value: ""))
            }
        }
        if !value("login_totp").isEmpty {
            entry.fields.append(PasswordEntry.Field(name: "otp", value: value("login_totp"), isProtected: true))
        }
        return entry
    }
}
