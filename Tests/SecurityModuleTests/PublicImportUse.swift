public import Security

// `public import Security`: the CF and Security names in public API, as with Apple's Security.

/// A status in public API.
public struct PublicStatus {
    /// The status.
    public let status: OSStatus
    /// Wraps a status.
    public init(_ status: OSStatus) { self.status = status }
    /// A constant in public API.
    public static var classKey: CFString { kSecClassKey }
}
