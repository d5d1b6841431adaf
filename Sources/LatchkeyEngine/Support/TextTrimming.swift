/// Text trimmed at both ends, as Foundation's `trimmingCharacters(in:)` does with `.whitespaces` and
/// `.whitespacesAndNewlines` (Unicode's White_Space property), for the few places that read a setting or a
/// list from a file or the environment. In the engine so that it and everything above it can do without
/// swift-corelibs-foundation (docs/DESIGN-NOTES.md, "The CLI's start").
extension StringProtocol {
    /// Without the white space (spaces, tabs; with `newlines`, also line breaks) at either end.
    package func trimmingWhitespace(newlines: Bool = true) -> String {
        func isTrimmed(_ character: Character) -> Bool {
            character.unicodeScalars.allSatisfy { scalar in
                scalar.properties.isWhitespace && (newlines || !Self.isLineBreak(scalar))
            }
        }
        guard let first = firstIndex(where: { !isTrimmed($0) }) else { return "" }
        let last = lastIndex(where: { !isTrimmed($0) })!
        return String(self[first...last])
    }

    // Foundation's `.whitespaces` is White_Space without the line and paragraph separators and the
    // control characters U+000A–U+000D and U+0085.
    private static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
        (0x0A...0x0D).contains(scalar.value) || scalar.value == 0x85 || scalar.value == 0x2028
            || scalar.value == 0x2029
    }
}
