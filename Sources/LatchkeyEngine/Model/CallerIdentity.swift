/// Who runs an operation: an application identifier and the access groups it may use — the Linux
/// counterpart of the entitlements securityd reads from a signed app.
///
/// Adds without an explicit access group go to the first group; reads, updates and deletes see only the
/// caller's groups, unless the caller holds the wildcard group `"*"`.
///
/// ```swift
/// let caller = CallerIdentity(applicationIdentifier: "com.example.mail",
///                             accessGroups: ["com.example.mail", "com.example.shared"])
/// ```
public struct CallerIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The wildcard access group: a caller holding it sees every group.
    public static let wildcardGroup = "*"

    /// The application identifier (for example a reverse-DNS name).
    public let applicationIdentifier: String
    /// The access groups, in order; the first is the default for adds.
    public let accessGroups: [String]

    /// Creates an identity. An empty `accessGroups` is allowed; such a caller gets
    /// `errSecMissingEntitlement` from every operation.
    public init(applicationIdentifier: String, accessGroups: [String]) {
        self.applicationIdentifier = applicationIdentifier
        self.accessGroups = accessGroups
    }

    /// An identity whose only group is its application identifier.
    public init(applicationIdentifier: String) {
        self.init(applicationIdentifier: applicationIdentifier, accessGroups: [applicationIdentifier])
    }

    /// Whether the caller holds the wildcard group.
    public var hasWildcard: Bool { accessGroups.contains(Self.wildcardGroup) }

    /// Whether the caller may use `group`.
    public func canUse(group: String) -> Bool { hasWildcard || accessGroups.contains(group) }

    /// The group an add without `kSecAttrAccessGroup` goes to: the first group that is not the wildcard.
    public var defaultGroup: String? { accessGroups.first { $0 != Self.wildcardGroup } }

    public var description: String { "\(applicationIdentifier) \(accessGroups)" }

    /// Checks a name used as an application identifier or an access group: not empty, at most 1,024 bytes,
    /// no control characters, and not the wildcard `"*"` — which a program gets only when someone grants it
    /// by name (`latchkey register-application --wildcard`), never from a file name or a default.
    /// `errSecParam` otherwise, naming `what` the name is.
    public static func validate(name: String, as what: String) throws(KeychainError) {
        guard !name.isEmpty else { throw KeychainError.param("\(what) must not be empty") }
        guard name != wildcardGroup else {
            throw KeychainError.param("\(what) cannot be \"*\": the wildcard group is granted only explicitly")
        }
        guard name.utf8.count <= 1_024 else { throw KeychainError.param("\(what) is longer than 1024 bytes") }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw KeychainError.param("\(what) contains a control character")
        }
    }
}
