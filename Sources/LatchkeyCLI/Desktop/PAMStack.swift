import FoundationEssentials

/// A PAM service's stack as libpam runs it: its file in /etc/pam.d with every `@include` (Debian) and every
/// `include` or `substack` (Fedora, Arch) expanded in place, comments and blank lines dropped, in order.
struct PAMStack {
    /// One module line.
    struct Line: Equatable {
        /// auth, account, session or password (without the leading "-" that makes a missing module silent).
        let type: String
        let control: String
        /// The module's base name: `pam_unix.so`.
        let module: String
        let arguments: [String]
        /// Where it is written: "/etc/pam.d/common-auth:25".
        let location: String
    }

    let service: String
    let lines: [Line]

    /// The stack of `service` in `directory` (its /etc/pam.d); nil when the service has no file.
    init?(service: String, directory: String) {
        guard FileManager.default.fileExists(atPath: directory + "/" + service) else { return nil }
        self.service = service
        var visited: Set<String> = []
        lines = Self.read(service, type: nil, directory: directory, visited: &visited)
    }

    /// The lines of one type, in order.
    func lines(_ type: String) -> [Line] { lines.filter { $0.type == type } }

    private static func read(_ name: String, type wanted: String?, directory: String, visited: inout Set<String>)
        -> [Line]
    {
        let path = name.hasPrefix("/") ? name : directory + "/" + name
        guard !visited.contains(path), let data = FileManager.default.contents(atPath: path) else { return [] }
        visited.insert(path)
        defer { visited.remove(path) }
        var result: [Line] = []
        for (number, raw) in String(decoding: data, as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false
        )
        .enumerated() {
            let text =
                raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
                ?? ""
            let words = Self.words(text)
            guard let first = words.first else { continue }
            if first == "@include", words.count > 1 {
                result += read(words[1], type: wanted, directory: directory, visited: &visited)
                continue
            }
            guard words.count >= 3 else { continue }
            let type = first.hasPrefix("-") ? String(first.dropFirst()) : first
            if let wanted, type != wanted { continue }
            if words[1] == "include" || words[1] == "substack" {
                result += read(words[2], type: type, directory: directory, visited: &visited)
                continue
            }
            let module = words[2].split(separator: "/").last.map(String.init) ?? words[2]
            result.append(
                Line(
                    type: type, control: words[1], module: module, arguments: Array(words.dropFirst(3)),
                    location: "\(path):\(number + 1)"))
        }
        return result
    }

    /// A line's words; a bracketed control (`[success=1 default=ignore]`) is one word.
    static func words(_ text: String) -> [String] {
        var words: [String] = []
        var current = ""
        var bracket = false
        for character in text {
            if character == "[" && current.isEmpty { bracket = true }
            if character == "]" { bracket = false }
            if (character == " " || character == "\t") && !bracket {
                if !current.isEmpty { words.append(current) }
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }
}
