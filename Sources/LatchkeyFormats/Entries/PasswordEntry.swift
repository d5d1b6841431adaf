package import FoundationEssentials

/// A password manager's entry as the formats read and write it, before it is a keychain item: KeePass's
/// entries, `pass` files and the rows of browsers' CSV exports all become these (`EntryMapping` turns them
/// into items), and KDBX exports are written from them.
package struct PasswordEntry: Sendable, Hashable {
    /// The entry's title (KeePass), file name (`pass`) or name (Chromium, Bitwarden).
    package var title: String
    /// The groups it sits in, outermost first, without the database's root (KeePass groups, `pass`
    /// directories, Bitwarden folders).
    package var groups: [String]
    package var username: String
    /// The password, as the file holds it (text in every format read; KDBX exports write binary secrets as an
    /// attachment).
    package var password: Data
    package var url: String
    package var notes: String
    /// The entry's other named values (KeePass's custom fields, Bitwarden's fields), in the file's order.
    package var fields: [Field]
    /// The HTTP authentication realm of a login for a site's password dialog (Firefox's `httpRealm`).
    package var realm: String
    package var created: Date?
    package var modified: Date?

    /// One named value.
    package struct Field: Sendable, Hashable {
        package var name: String
        package var value: String
        /// Whether the format keeps it hidden (KeePass's "protect in memory").
        package var isProtected: Bool

        package init(name: String, value: String, isProtected: Bool = false) {
            self.name = name
            self.value = value
            self.isProtected = isProtected
        }
    }

    package init(
        title: String, groups: [String] = [], username: String = "", password: Data = Data(), url: String = "",
        notes: String = "", fields: [Field] = [], realm: String = "", created: Date? = nil, modified: Date? = nil
    ) {
        self.title = title
        self.groups = groups
        self.username = username
        self.password = password
        self.url = url
        self.notes = notes
        self.fields = fields
        self.realm = realm
        self.created = created
        self.modified = modified
    }

    /// The label an entry's item gets: its groups and title as a path ("Internet/Mail/Work").
    package var labelPath: String { (groups + [title]).joined(separator: "/") }
}

/// What a reader could not take from a file, per entry and why: counted in the import's report, never dropped
/// in silence.
package struct SkippedEntry: Sendable, Hashable {
    /// The entry's label path, or its place in the file ("row 12").
    package var name: String
    /// Why ("in the recycle bin").
    package var reason: String

    package init(name: String, reason: String) {
        self.name = name
        self.reason = reason
    }
}
