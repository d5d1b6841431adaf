/// The few pieces of text layout the tool's output needs — padded columns, fixed-width numbers, grouped
/// digits — written out here rather than through Foundation's `String(format:)`, `padding(toLength:)` and
/// `formatted()`, which would link swift-corelibs-foundation and ICU into the tool (docs/DESIGN-NOTES.md, "The
/// CLI's start"). Every result is the same in every locale.
extension String {
    /// The text cut or padded with spaces on the right to exactly `width` characters (`padding(toLength:
    /// withPad: " ", startingAt: 0)`).
    func padded(to width: Int) -> String {
        count >= width ? String(prefix(width)) : self + String(repeating: " ", count: width - count)
    }

    /// The text padded with `pad` on the left to at least `width` characters (`%3d`, `%02d`, `%04X`).
    func leftPadded(to width: Int, with pad: Character = " ") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}

extension BinaryInteger {
    /// The number in `radix` (uppercase digits), padded with zeros to at least `width` digits.
    func digits(_ width: Int, radix: Int = 10) -> String {
        String(self, radix: radix, uppercase: true).leftPadded(to: width, with: "0")
    }

    /// 1234567 as "1,234,567".
    var grouped: String {
        let digits = Array(String(magnitude))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return (self < 0 ? "-" : "") + text
    }
}
