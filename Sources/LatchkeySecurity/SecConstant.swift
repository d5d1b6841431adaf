public import Foundation

/// What every `kSec…` constant is: an `NSString` that hashes and compares as the Swift `String` it holds.
///
/// On Apple platforms the constants are `CFString`s bridged to Swift: `AnyHashable(kSecAttrAccount)` equals
/// `AnyHashable("acct")`, so a `[String: Any]` result can be read with `result[kSecAttrAccount as String]`
/// and, as code does, an `[AnyHashable: Any]` with `result[kSecAttrAccount]`; `NSDictionary`s built from
/// either compare equal. A plain `NSString` on Linux hashes as an object, not as its text, so such lookups
/// silently found nothing (SwiftKeychainWrapper's `allKeys()` was always empty). This class gives a constant
/// the `AnyHashable` of its text (`_HasCustomAnyHashableRepresentation`, the standard library's hook for
/// exactly this bridging).
public final class SecConstant: NSString, _HasCustomAnyHashableRepresentation {
    // Not Sendable, as NSString is not; the constants are computed per use, never shared.
    private let text: String
    private let units: [UInt16]

    /// A constant with this text.
    public init(_ text: String) {
        self.text = text
        let units = Array(text.utf16)
        self.units = units
        super.init(characters: units, length: units.count)
    }

    /// Not archived.
    public required init?(coder: NSCoder) { nil }

    /// A constant from a literal.
    public required convenience init(stringLiteral value: StaticString) { self.init("\(value)") }
    /// A constant from a literal.
    public required convenience init(unicodeScalarLiteral value: StaticString) { self.init("\(value)") }
    /// A constant from a literal.
    public required convenience init(extendedGraphemeClusterLiteral value: StaticString) { self.init("\(value)") }
    /// A constant with this text.
    public required convenience init(string: String) { self.init(string) }

    /// The number of UTF-16 code units.
    public override var length: Int { units.count }

    /// The UTF-16 code unit at `index`.
    public override func character(at index: Int) -> unichar { units[index] }

    /// The Swift `String`, so the constant is found among `String` keys.
    public func _toCustomAnyHashable() -> AnyHashable? { AnyHashable(text) }
}
