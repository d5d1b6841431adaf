/// A key-value file edited line by line, everything else kept as it is: an INI file (`[section]`, `key=value`:
/// portals.conf, kwalletrc, keepassxc.ini) or, with no section, an environment file (`KEY=value`: latchkeyd.env).
struct KeyValueFile {
    private(set) var lines: [String]

    init(text: String) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        self.lines = lines
    }

    var text: String { lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n" }

    /// Whether the file holds no key (only blank lines, comments and section headers).
    var isEmpty: Bool { !lines.contains { parse($0) != nil } }

    /// The value of `key` in `section` (nil: before the first section header); nil when it is not set.
    func value(_ section: String?, _ key: String) -> String? {
        guard let index = index(section, key) else { return nil }
        return parse(lines[index])?.value
    }

    /// Sets `key` in `section`, adding the section when it is missing.
    mutating func set(_ section: String?, _ key: String, _ value: String) {
        if let index = index(section, key) {
            lines[index] = key + "=" + value
            return
        }
        guard let range = range(of: section) else {
            if !lines.isEmpty && lines.last != "" { lines.append("") }
            if let section { lines.append("[" + section + "]") }
            lines.append(key + "=" + value)
            return
        }
        // After the section's last key, before the blank lines and comments that end it.
        var insertAt = range.upperBound
        while insertAt > range.lowerBound, parse(lines[insertAt - 1]) == nil,
            header(lines[insertAt - 1]) == nil
        {
            insertAt -= 1
        }
        lines.insert(key + "=" + value, at: insertAt)
    }

    /// Removes `key` from `section`; a section left without keys goes too, with the blank line before it.
    mutating func remove(_ section: String?, _ key: String) {
        guard let index = index(section, key) else { return }
        lines.remove(at: index)
        guard let section, let range = range(of: section),
            !lines[range].contains(where: { parse($0) != nil })
        else { return }
        let start = range.lowerBound - 1  // The header.
        lines.removeSubrange(start..<range.upperBound)
        if start > 0, start == lines.count || lines[start] == "", lines[start - 1] == "" { lines.remove(at: start - 1) }
        while lines.last == "" { lines.removeLast() }
    }

    /// The lines after `section`'s header up to the next header (for nil, those before the first header).
    private func range(of section: String?) -> Range<Int>? {
        var start: Int?
        if section == nil { start = 0 }
        for (index, line) in lines.enumerated() {
            guard let name = header(line) else { continue }
            if let start { return start..<index }
            if name == section { start = index + 1 }
        }
        return start.map { $0..<lines.count }
    }

    private func index(_ section: String?, _ key: String) -> Int? {
        guard let range = range(of: section) else { return nil }
        return range.first { parse(lines[$0])?.key == key }
    }

    private func header(_ line: String) -> String? {
        let trimmed = line.trimmingSpaces
        guard trimmed.hasPrefix("["), trimmed.hasSuffix("]") else { return nil }
        return String(trimmed.dropFirst().dropLast())
    }

    private func parse(_ line: String) -> (key: String, value: String)? {
        let trimmed = line.trimmingSpaces
        guard !trimmed.hasPrefix("#"), !trimmed.hasPrefix(";"), let equals = trimmed.firstIndex(of: "=") else {
            return nil
        }
        return (
            String(trimmed[..<equals]).trimmingSpaces, String(trimmed[trimmed.index(after: equals)...]).trimmingSpaces
        )
    }
}

extension String {
    /// The text without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
