// What Latchkey's dictionary layer reads of Foundation's objects: `NSNumber` (CFNumber, CFBoolean) and
// `NSNull` (kCFNull). Latchkey itself does not import Foundation, so that a program built on it — the
// `latchkey` tool — need not link swift-corelibs-foundation (docs/DESIGN-NOTES.md, "The CLI's start"); the
// `Latchkey` and `LatchkeySecurity` products link this module, so a dictionary holding these objects reads as
// it always has.
import Foundation
package import Latchkey

extension NSNumber: DictionaryNumber {
    /// The number by the kind of value it was made from (its `objCType`).
    package var dictionaryNumber: DictionaryNumberValue {
        switch String(cString: objCType) {
        case "c", "B": .boolean(boolValue)
        case "f", "d": .floating(doubleValue)
        case "Q", "L", "I": .unsigned(uint64Value)
        default: .integer(int64Value)
        }
    }
}

extension NSNull: DictionaryNull {}
