internal import FoundationEssentials

/// How a device reaches its sync server.
package enum SyncConnectionMode: String, Sendable, CaseIterable {
    /// A connection of its own to PostgreSQL, kept open: the agent `LISTEN`s on it (the default).
    case direct
    /// Through a pooler in transaction mode (PgBouncer's `pool_mode = transaction`): no server connection
    /// held between requests, every request a short transaction with no session state (no `LISTEN`, no
    /// `SET`, no named prepared statement), and the agent polls for changes at an adaptive cadence.
    case pooled
}

/// Where a device reads the rows it pulls from.
package enum SyncPullSource: String, Sendable {
    /// The server it writes to (the default).
    case primary
    /// A streaming-replication standby when one is up (libpq's `target_session_attrs=prefer-standby` over
    /// the hosts the connection string lists), the primary otherwise; writes go to the primary
    /// (`target_session_attrs=read-write`). A standby behind what the device has pulled is lagging, not
    /// a rollback: that round reads from the primary instead.
    case standby
}

/// A sync server's connection string as the user gives it: libpq's (key/value or URI) with keywords of
/// Latchkey's own, `latchkey_mode=direct|pooled` and `latchkey_pulls=primary|standby`, which are taken out
/// before libpq sees the rest (libpq refuses keywords it does not know). `host=/run/pgbouncer port=6432
/// dbname=latchkey latchkey_mode=pooled`, or `postgresql://db.example.com:6432/latchkey?latchkey_mode=pooled`.
package struct SyncConnectionString: Sendable, Equatable {
    /// The mode's keyword, in both forms.
    package static let keyword = "latchkey_mode"
    /// The pull source's keyword.
    package static let pullsKeyword = "latchkey_pulls"

    /// What libpq receives.
    package var libpq: String
    /// The mode the keyword names (direct when absent).
    package var mode: SyncConnectionMode
    /// Where pulls read from (the primary when absent).
    package var pulls: SyncPullSource = .primary
    private var isURI = false

    /// A string already split.
    package init(libpq: String, mode: SyncConnectionMode, pulls: SyncPullSource = .primary) {
        self.libpq = libpq
        self.mode = mode
        self.pulls = pulls
        isURI = libpq.hasPrefix("postgresql://") || libpq.hasPrefix("postgres://")
    }

    /// Splits `text`; a keyword of ours with a value it does not take is a malformed connection string.
    package init(_ text: String) throws(PostgresError) {
        isURI = text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
        let (rest, values) = isURI ? Self.splitURI(text) : Self.splitKeywords(text)
        libpq = rest
        func malformed(_ keyword: String, _ choices: String, _ value: String) -> PostgresError {
            PostgresError(
                state: nil, message: "\(keyword) must be \(choices), not \(value)", connectionLost: false,
                malformedConnectionString: true)
        }
        if let value = values[Self.keyword] {
            guard let mode = SyncConnectionMode(rawValue: value) else {
                throw malformed(Self.keyword, "direct or pooled", value)
            }
            self.mode = mode
        } else {
            mode = .direct
        }
        if let value = values[Self.pullsKeyword] {
            guard let pulls = SyncPullSource(rawValue: value) else {
                throw malformed(Self.pullsKeyword, "primary or standby", value)
            }
            self.pulls = pulls
        }
    }

    /// What the connection that writes connects with: the primary when pulls read from a standby.
    package var writer: String { pulls == .standby ? adding("target_session_attrs", "read-write") : libpq }
    /// What the connection pulls read from connects with; nil when they read from the writer's.
    package var reader: String? { pulls == .standby ? adding("target_session_attrs", "prefer-standby") : nil }

    private func adding(_ key: String, _ value: String) -> String {
        guard isURI else { return libpq + " \(key)=\(value)" }
        return libpq + (libpq.contains("?") ? "&" : "?") + "\(key)=\(value)"
    }

    private static let keywords: Set<String> = [keyword, pullsKeyword]

    /// A URI: the keywords are query parameters (`?latchkey_mode=pooled&sslmode=…`).
    private static func splitURI(_ text: String) -> (String, [String: String]) {
        guard let question = text.firstIndex(of: "?") else { return (text, [:]) }
        var values: [String: String] = [:]
        var kept: [Substring] = []
        for parameter in text[text.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false) {
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if let name = parts.first.map(String.init), keywords.contains(name) {
                values[name] = parts.count > 1 ? (String(parts[1]).percentDecoded ?? String(parts[1])) : ""
            } else {
                kept.append(parameter)
            }
        }
        let base = String(text[..<question])
        return (kept.isEmpty ? base : base + "?" + kept.joined(separator: "&"), values)
    }

    /// Key/value pairs (`key = value`, the value bare or in single quotes with backslash escapes, as libpq
    /// reads them): the pair naming the keyword is cut out, everything else is left as written.
    private static func splitKeywords(_ text: String) -> (String, [String: String]) {
        let characters = Array(text)
        var index = 0
        var values: [String: String] = [:]
        var kept = ""
        func skipSpaces() { while index < characters.count, characters[index].isWhitespace { index += 1 } }
        while index < characters.count {
            let start = index
            skipSpaces()
            let nameStart = index
            while index < characters.count, characters[index] != "=", !characters[index].isWhitespace { index += 1 }
            let name = String(characters[nameStart..<index])
            skipSpaces()
            guard index < characters.count, characters[index] == "=" else {
                // Not a pair libpq reads either: leave the rest as it is, libpq reports it.
                kept += String(characters[start...])
                break
            }
            index += 1
            skipSpaces()
            var parsed = ""
            if index < characters.count, characters[index] == "'" {
                index += 1
                while index < characters.count, characters[index] != "'" {
                    if characters[index] == "\\", index + 1 < characters.count { index += 1 }
                    parsed.append(characters[index])
                    index += 1
                }
                index = min(index + 1, characters.count)
            } else {
                while index < characters.count, !characters[index].isWhitespace {
                    if characters[index] == "\\", index + 1 < characters.count { index += 1 }
                    parsed.append(characters[index])
                    index += 1
                }
            }
            if keywords.contains(name) {
                values[name] = parsed
            } else {
                kept += String(characters[start..<index])
            }
        }
        return (kept.trimmingWhitespace(newlines: false), values)
    }
}
