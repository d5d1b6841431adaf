public import FoundationEssentials
internal import LatchkeyCrypto

/// A program an item's access list names — macOS's "trusted application" — by one of the identities the
/// agent's gate attests (`LatchkeyCaller.Attestation`): the executable of an unconfined process (its exact path
/// and the BLAKE2b-256 digest of its contents), a Flatpak sandbox's app ID, or a confining LSM label. The
/// identities are this machine's: a path and a digest name a file here, and an app ID or a label only what
/// this machine's sandbox or policy attaches.
public enum TrustedProgram: Hashable, Sendable, CustomStringConvertible {
    /// An unconfined program, by its executable: this path with exactly these contents. A rebuilt or upgraded
    /// binary is another program (it is asked about again).
    case executable(path: String, digest: Data)
    /// A Flatpak app, by its app ID.
    case sandbox(appID: String)
    /// A program an LSM confines, by its label (`apparmor:<profile>`, `selinux:<type>`).
    case confined(label: String)

    /// `/usr/bin/tool (executable 1a2b3c4d…)`, `the Flatpak app org.example.App`, `the confined program
    /// apparmor:tool`.
    public var description: String {
        switch self {
        case .executable(let path, let digest): "\(path) (executable \(Hex.encode(digest.prefix(4)))…)"
        case .sandbox(let app): "the Flatpak app \(app)"
        case .confined(let label): "the confined program \(label)"
        }
    }

    /// The kind, as `latchkey access list` prints it: `executable`, `flatpak`, `confined`.
    public var kind: String {
        switch self {
        case .executable: "executable"
        case .sandbox: "flatpak"
        case .confined: "confined"
        }
    }

    /// The name the user knows it by: the path, the app ID or the label.
    public var name: String {
        switch self {
        case .executable(let path, _): path
        case .sandbox(let app): app
        case .confined(let label): label
        }
    }

    /// Checks what a list may name: a name that is not empty, at most 4,096 bytes, without control characters
    /// or NUL; an absolute path and a 32-byte digest for an executable. `errSecParam` otherwise.
    public func validate() throws(KeychainError) {
        guard !name.isEmpty, name.utf8.count <= 4_096 else {
            throw KeychainError.param("a program's name must be 1 to 4096 bytes")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw KeychainError.param("a program's name contains a control character")
        }
        if case .executable(let path, let digest) = self {
            guard path.hasPrefix("/") else { throw KeychainError.param("an executable's path must be absolute") }
            guard digest.count == 32 else { throw KeychainError.param("an executable's digest must be 32 bytes") }
        }
    }

    /// The bytes the program's keyed digest is taken of (`item_access.program`): kind and name, and an
    /// executable's digest.
    func canonical(into writer: inout ByteWriter) {
        writer.appendRaw("lk1/program".utf8)
        switch self {
        case .executable(let path, let digest):
            writer.append(1 as UInt8)
            writer.appendField(path)
            writer.appendField(digest)
        case .sandbox(let app):
            writer.append(2 as UInt8)
            writer.appendField(app)
        case .confined(let label):
            writer.append(3 as UInt8)
            writer.appendField(label)
        }
    }

    /// Reads what `canonical(into:)` wrote after its prefix; nil when malformed.
    static func read(_ reader: inout ByteReader) throws(ByteReader.Truncated) -> TrustedProgram? {
        switch try reader.readByte() {
        case 1: return .executable(path: try reader.readText(), digest: try reader.readField())
        case 2: return .sandbox(appID: try reader.readText())
        case 3: return .confined(label: try reader.readText())
        default: return nil
        }
    }
}

/// One entry of an item's access list: the program, when it was added and how.
public struct AccessListEntry: Hashable, Sendable {
    /// How an entry came to be.
    public enum Origin: UInt8, Sendable, CaseIterable, CustomStringConvertible {
        /// The user answered Always Allow when the program asked for the item.
        case answer = 1
        /// `latchkey access add`.
        case command = 2
        /// Restored from a backup (`latchkey import`).
        case backup = 3

        /// `always allow`, `latchkey access add`, `backup`.
        public var description: String {
            switch self {
            case .answer: "always allow"
            case .command: "latchkey access add"
            case .backup: "backup"
            }
        }
    }

    /// The program.
    public let program: TrustedProgram
    /// When it was added (whole seconds).
    public let added: Date
    /// How.
    public let origin: Origin

    /// An entry.
    public init(program: TrustedProgram, added: Date, origin: Origin) {
        self.program = program
        self.added = Date(timeIntervalSince1970: added.timeIntervalSince1970.rounded(.down))
        self.origin = origin
    }

    /// The order lists are shown in: oldest first; entries of the same second by kind, then name (rows come
    /// back in the order of their keyed digests, which says nothing).
    static func listedBefore(_ a: AccessListEntry, _ b: AccessListEntry) -> Bool {
        (a.added, a.program.kind, a.program.name) < (b.added, b.program.kind, b.program.name)
    }

    /// The sealed entry's plaintext: the program's canonical bytes, the time, the origin.
    func encoded() -> Data {
        var writer = ByteWriter(capacity: 96)
        program.canonical(into: &writer)
        writer.append(Int64(added.timeIntervalSince1970))
        writer.append(origin.rawValue)
        return writer.data
    }

    /// Decodes `encoded()`; nil when malformed.
    static func decode(_ data: Data) -> AccessListEntry? {
        data.withUnsafeBytes { buffer -> AccessListEntry? in
            var reader = ByteReader(buffer)
            do {
                let prefix = try reader.readRaw(11)
                guard prefix == Data("lk1/program".utf8), let program = try TrustedProgram.read(&reader) else {
                    return nil
                }
                let added = Date(timeIntervalSince1970: Double(try reader.readInt64()))
                guard let origin = Origin(rawValue: try reader.readByte()), reader.isAtEnd else { return nil }
                return AccessListEntry(program: program, added: added, origin: origin)
            } catch {
                return nil  // Reported by the caller as errSecDecode.
            }
        }
    }
}

extension TrustedProgram {
    /// The program a command names (`latchkey access add|remove`): `flatpak:<app ID>` a Flatpak app,
    /// `apparmor:<profile>` or `selinux:<type>` a confined program, an absolute path an executable as it is
    /// now (symbolic links resolved, its digest computed from the file; `digesting` false leaves the digest
    /// empty, which `revokeAccess` reads as every digest of that path). Checked as a list's entries are;
    /// `errSecParam` for anything else.
    public init(naming given: String, digesting: Bool = true) throws(KeychainError) {
        if given.hasPrefix("flatpak:") {
            self = .sandbox(appID: String(given.dropFirst("flatpak:".count)))
        } else if given.hasPrefix("apparmor:") || given.hasPrefix("selinux:") {
            self = .confined(label: given)
        } else if given.hasPrefix("/") {
            let path = URL(fileURLWithPath: given).resolvingSymlinksInPath().path
            guard digesting else {
                self = .executable(path: path, digest: Data())
                return
            }
            guard let digest = FileDigest.of(path: path) else {
                throw KeychainError.param("cannot read the executable \(path)")
            }
            self = .executable(path: path, digest: digest)
        } else {
            throw KeychainError.param(
                "name a program as an absolute path, flatpak:<app ID>, apparmor:<profile> or selinux:<type>, not \(given)"
            )
        }
        if digesting { try validate() }
    }
}
