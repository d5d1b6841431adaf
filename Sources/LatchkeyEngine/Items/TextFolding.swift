/// Text compared as Foundation's `range(of:options:)` and `compare(_:options:)` compare it with
/// `.caseInsensitive`, `.diacriticInsensitive` and `.widthInsensitive` — what `kSecMatchCaseInsensitive`,
/// `kSecMatchDiacriticInsensitive` and `kSecMatchWidthInsensitive` ask of a certificate search — on Unicode
/// data of its own (`UnicodeFoldingTables`), so that the engine and everything above it link no
/// swift-corelibs-foundation and no ICU (docs/DESIGN-NOTES.md, "The CLI's start").
///
/// Both texts are brought to one form and compared scalar by scalar: canonically decomposed (so "é" and
/// "e" + U+0301 are the same text, as Foundation treats canonically equivalent text), then with each flag
/// its folding — full case folding; nonspacing marks removed; the fullwidth and halfwidth forms mapped to
/// their ordinary ones — and the combining marks put in canonical order.
package enum TextFolding {
    /// Whether `needle` occurs in `text`; an empty needle occurs nowhere (as Foundation's `range(of:)`).
    package static func contains(_ text: String, _ needle: String, options: String.CompareOptions = []) -> Bool {
        let needle = folded(needle, options)
        guard !needle.isEmpty else { return false }
        let text = folded(text, options)
        guard needle.count <= text.count else { return false }
        return (0...(text.count - needle.count)).contains { start in
            text[start..<(start + needle.count)].elementsEqual(needle) && endsCharacter(text, at: start + needle.count)
        }
    }

    /// Whether `text` starts with `prefix` (`.anchored`); an empty prefix matches nothing.
    package static func hasPrefix(_ text: String, _ prefix: String, options: String.CompareOptions = []) -> Bool {
        let prefix = folded(prefix, options)
        let text = folded(text, options)
        return !prefix.isEmpty && text.starts(with: prefix) && endsCharacter(text, at: prefix.count)
    }

    /// Whether `text` ends with `suffix` (`[.anchored, .backwards]`); an empty suffix matches nothing.
    package static func hasSuffix(_ text: String, _ suffix: String, options: String.CompareOptions = []) -> Bool {
        let suffix = folded(suffix, options)
        return !suffix.isEmpty && folded(text, options).reversed().starts(with: suffix.reversed())
    }

    /// Whether the two texts are the same under `options` (`compare(_:options:) == .orderedSame`).
    package static func equal(_ text: String, _ other: String, options: String.CompareOptions = []) -> Bool {
        folded(text, options) == folded(other, options)
    }

    /// Whether a match that ends before `index` ends a whole character: Foundation finds "e" in "ex" but
    /// not in "e" + U+0301 (unless that mark is folded away).
    private static func endsCharacter(_ text: [Unicode.Scalar], at index: Int) -> Bool {
        guard index < text.count else { return true }
        switch text[index].properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return false
        default: return true
        }
    }

    /// The scalars `text` is compared as under `options`.
    package static func folded(_ text: String, _ options: String.CompareOptions) -> [Unicode.Scalar] {
        var result: [Unicode.Scalar] = []
        result.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            for decomposed in decomposition(of: scalar) {
                let cased = options.contains(.caseInsensitive) ? caseFolding(of: decomposed) : [decomposed]
                for scalar in cased {
                    let mapped = options.contains(.widthInsensitive) ? Tables.width[scalar.value] ?? [scalar] : [scalar]
                    for scalar in mapped {
                        if options.contains(.diacriticInsensitive)
                            && scalar.properties.generalCategory == .nonspacingMark
                        {
                            continue
                        }
                        result.append(scalar)
                    }
                }
            }
        }
        reorderCombiningMarks(&result)
        return result
    }

    /// A scalar's full canonical decomposition (Hangul syllables by Unicode's algorithm).
    private static func decomposition(of scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        let value = scalar.value
        if (0xAC00...0xD7A3).contains(value) {
            let index = value - 0xAC00
            let lead = Unicode.Scalar(0x1100 + index / 588)!
            let vowel = Unicode.Scalar(0x1161 + (index % 588) / 28)!
            let trail = index % 28
            return trail == 0 ? [lead, vowel] : [lead, vowel, Unicode.Scalar(0x11A7 + trail)!]
        }
        return Tables.canonical[value] ?? [scalar]
    }

    /// A decomposed scalar's case folding, decomposed again (a folding may yield a precomposed letter).
    private static func caseFolding(of scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        guard let folded = Tables.caseFolding[scalar.value] else { return [scalar] }
        return folded.flatMap(decomposition(of:))
    }

    /// Unicode's canonical ordering: each run of combining marks sorted, stably, by combining class.
    private static func reorderCombiningMarks(_ scalars: inout [Unicode.Scalar]) {
        var start = 0
        while start < scalars.count {
            guard scalars[start].properties.canonicalCombiningClass != .notReordered else {
                start += 1
                continue
            }
            var end = start
            while end < scalars.count && scalars[end].properties.canonicalCombiningClass != .notReordered { end += 1 }
            let run = scalars[start..<end].enumerated().sorted {
                let (left, right) = (
                    $0.element.properties.canonicalCombiningClass.rawValue,
                    $1.element.properties.canonicalCombiningClass.rawValue
                )
                return left != right ? left < right : $0.offset < $1.offset
            }
            scalars.replaceSubrange(start..<end, with: run.map(\.element))
            start = end
        }
    }

    /// The generated tables as lookups, built on first use.
    private enum Tables {
        static let canonical = lookup(UnicodeFoldingTables.canonicalDecompositions)
        static let caseFolding = lookup(UnicodeFoldingTables.caseFoldings)
        static let width = lookup(UnicodeFoldingTables.widthFoldings)

        private static func lookup(_ flat: [UInt32]) -> [UInt32: [Unicode.Scalar]] {
            var table: [UInt32: [Unicode.Scalar]] = [:]
            var index = 0
            while index < flat.count {
                let count = Int(flat[index + 1])
                table[flat[index]] = flat[(index + 2)..<(index + 2 + count)].map { Unicode.Scalar($0)! }
                index += 2 + count
            }
            return table
        }
    }
}
