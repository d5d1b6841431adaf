package import FoundationEssentials
import Synchronization

/// What the agent keeps about an SSH key besides the key: how each use is allowed. Stored with the key, as
/// the data of a generic password beside its key item (service `SSHKeyStore.settingsService`, account the
/// key's application label in hex), sealed like every secret; read with the key at every use.
package struct SSHKeySettings: Codable, Hashable, Sendable {
    /// Which programs may use the key.
    package enum Programs: Codable, Hashable, Sendable {
        /// Any program of the user that reaches the agent's SSH socket (OpenSSH's `ssh-agent`).
        case any
        /// Only programs registered with the agent (`latchkey register-application`): those whose application
        /// identifier is listed, or every registered one when the list is empty.
        case registered([String])
    }

    /// `ssh-add -c`: each use asks the user through pinentry (an approval then covers the uses that follow it
    /// from the same process tree to the same destination for `approvalSeconds`).
    package var confirm: Bool
    /// How long one approval lasts; 0 asks for every signature.
    package var approvalSeconds: Int
    /// What one approval covers besides the key and the process tree.
    package enum ApprovalScope: String, Codable, Hashable, Sendable {
        /// The same destination: the same user and host key (and forwarding path) of a login, the same SSHSIG
        /// namespace.
        case destination
        /// Any use by the same process tree (an Ansible run to many hosts asks once).
        case processTree = "tree"
    }
    /// What one approval covers; nil is `.destination` (settings stored before there was a choice).
    package var approvalScope: ApprovalScope?
    /// `ssh-add -t`: when the key goes from the keychain; nil for never.
    package var expires: Date?
    /// `ssh-add -h`: where the key may be used; empty for anywhere.
    package var destinations: [SSHDestinationConstraint]
    /// Which programs may use it.
    package var programs: Programs

    /// How long an approval lasts unless the key says otherwise.
    package static let defaultApprovalSeconds = 60

    package init(
        confirm: Bool = false, approvalSeconds: Int = SSHKeySettings.defaultApprovalSeconds, expires: Date? = nil,
        destinations: [SSHDestinationConstraint] = [], programs: Programs = .any
    ) {
        self.confirm = confirm
        self.approvalSeconds = approvalSeconds
        self.expires = expires
        self.destinations = destinations
        self.programs = programs
    }

    /// Whether the key's lifetime is over at `now`.
    package func hasExpired(at now: Date) -> Bool { expires.map { now >= $0 } ?? false }

    /// The stored form.
    package func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .secondsSince1970
        // Plain values only.
        guard let data = try? encoder.encode(self) else { preconditionFailure("SSHKeySettings always encodes") }
        return data
    }

    /// Reads the stored form; nil when it is not one (a damaged item: its key is then not used at all — see
    /// `SSHKeyStore` — for the settings that restrict it cannot be known).
    ///
    /// Read at every signature, and the same bytes always say the same: the last few forms read are kept
    /// decoded (`DecodedSettings`), so a signature does not run a JSON decoder each time (issue 56).
    package static func decode(_ data: Data) -> SSHKeySettings? {
        if let known = DecodedSettings.shared.withLock({ $0[data] }) { return known }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        // Damaged: the caller refuses the key (see above).
        let decoded = try? decoder.decode(SSHKeySettings.self, from: data)
        DecodedSettings.shared.withLock { cache in
            if cache.count >= DecodedSettings.limit { cache.removeAll() }
            cache[data] = .some(decoded)
        }
        return decoded
    }
}

/// The stored forms of keys' settings read lately, decoded (`SSHKeySettings.decode`): settings are no secret
/// (which programs, which destinations, whether to confirm), and a form is its bytes.
private enum DecodedSettings {
    static let limit = 64
    static let shared = Mutex<[Data: SSHKeySettings?]>([:])
}
