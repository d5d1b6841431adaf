public import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyPOSIX

/// A program registered with the keychain: the Linux counterpart of an app's signed entitlements. The
/// agent grants a connecting process the registration whose executable path and digest match the binary it
/// runs; a changed binary loses its registration until it is registered again.
public struct ApplicationRegistration: Hashable, Sendable, CustomStringConvertible {
    /// The executable's absolute path.
    public var executablePath: String
    /// BLAKE2b-256 of the executable's contents when it was registered.
    public var executableDigest: Data
    /// The application identifier.
    public var applicationIdentifier: String
    /// Its access groups (the first is the default for adds; "*" grants every group).
    public var accessGroups: [String]

    /// Creates a registration.
    public init(executablePath: String, executableDigest: Data, applicationIdentifier: String, accessGroups: [String]) {
        self.executablePath = executablePath
        self.executableDigest = executableDigest
        self.applicationIdentifier = applicationIdentifier
        self.accessGroups = accessGroups
    }

    /// Registers the executable at `path` as it is now (its digest is computed from the file). Symbolic
    /// links are resolved: the kernel reports the real path of the program a process runs.
    public init(executableAt given: String, applicationIdentifier: String, accessGroups: [String]) throws(KeychainError)
    {
        try Self.validate(applicationIdentifier: applicationIdentifier, accessGroups: accessGroups)
        guard given.hasPrefix("/") else {
            throw KeychainError.param("the executable path must be absolute, not \(given)")
        }
        let path = URL(fileURLWithPath: given).resolvingSymlinksInPath().path
        guard let digest = FileDigest.of(path: path) else {
            throw KeychainError.param("cannot read the executable \(path)")
        }
        self.init(
            executablePath: path, executableDigest: digest, applicationIdentifier: applicationIdentifier,
            accessGroups: accessGroups)
    }

    /// Checks what a registration grants: an application identifier that is a valid name and not the
    /// wildcard, and at least one access group, each a valid name or the wildcard itself (`--wildcard`).
    static func validate(applicationIdentifier: String, accessGroups: [String]) throws(KeychainError) {
        try CallerIdentity.validate(name: applicationIdentifier, as: "the application identifier")
        guard !accessGroups.isEmpty else { throw KeychainError.param("a registration needs at least one access group") }
        for group in accessGroups where group != CallerIdentity.wildcardGroup {
            try CallerIdentity.validate(name: group, as: "the access group")
        }
    }

    /// The identity operations run with.
    public var caller: CallerIdentity {
        CallerIdentity(applicationIdentifier: applicationIdentifier, accessGroups: accessGroups)
    }

    public var description: String {
        "\(applicationIdentifier) \(accessGroups) \(executablePath) (\(Hex.encode(executableDigest.prefix(8))))"
    }
}
