package import FoundationEssentials
import LatchkeyCrypto
package import LatchkeyEngine
package import LatchkeyPKI
import LatchkeyPOSIX

/// How the agent allows an SSH key's use (`SSHAgentSession.Hooks`): nothing, or the status of why not.
package typealias SSHKeyAuthorization = @Sendable (SSHKeyUse) throws(KeychainError) -> Void
/// Asks the user whether a program may use a key it is not yet allowed (`SSHAgentSession.Hooks.ask`).
package typealias SSHKeyQuestion = @Sendable (SSHKeyStore.Identity) throws(KeychainError) -> Void

/// The SSH keys of a keychain, as the SSH agent and `latchkey ssh-key` see them — the mapping, in one place:
///
/// | SSH | Latchkey |
/// |---|---|
/// | an identity | a private key item the keychain holds (`tkid`), access group `com.latchkey.ssh` |
/// | its public key | the item's data (a held key hands out only its public half) |
/// | its comment | `labl` |
/// | `ssh-add -c`, `-t`, `-h`; which programs | `SSHKeySettings`, the data of a generic password of service `com.latchkey.ssh.settings`, account the key's `klbl` in hex |
///
/// Every operation names the group `com.latchkey.ssh`; the agent runs them as the caller `SSHKeyStore.caller`,
/// whose only group it is, so no other item of the keychain is reachable through the SSH agent. The command
/// line runs them as itself (through the agent, or on the keychain it opened).
package struct SSHKeyStore: Sendable {
    /// The access group of SSH keys.
    package static let accessGroup = "com.latchkey.ssh"
    /// The service of the keys' settings items.
    package static let settingsService = "com.latchkey.ssh.settings"
    /// Who the SSH agent acts as.
    package static let caller = CallerIdentity(
        applicationIdentifier: "com.latchkey.ssh-agent", accessGroups: [accessGroup])

    /// One key, with what the agent needs to list it and decide on its use.
    package struct Identity: Sendable {
        package let publicKey: SSHPublicKey
        package let comment: String
        /// The key item's persistent reference.
        package let reference: Data
        /// Its settings; nil when they cannot be read (the key is then never used).
        package let settings: SSHKeySettings?
        /// Its token: `com.apple.setoken` for a key made in the keychain (`latchkey ssh-key create`), else
        /// `com.latchkey.agent` (a key added or imported).
        package let tokenID: String
        /// When it was stored.
        package let created: Date?
        /// Where it lives (`lkst`): made inside the TPM (an ECDSA key made where a TPM answers), or in software.
        package var storage: KeyStorage = .software

        /// The same key with other settings.
        package func with(_ settings: SSHKeySettings) -> Identity {
            var copy = Identity(
                publicKey: publicKey, comment: comment, reference: reference, settings: settings, tokenID: tokenID,
                created: created)
            copy.storage = storage
            return copy
        }
    }

    /// Where the operations run: every one a `KeychainRequest`, the agent's own and the command line's alike.
    let service: any KeychainService
    /// Where keys and their settings are looked up: `service`, or — in the agent — the same keychain without
    /// the access log. Finding a key (its public half, its settings) is the agent's bookkeeping, as a search is
    /// the Secret Service's; a signature and a change are accesses, and are logged.
    let lookup: any KeychainService

    /// The store through a service: the agent's, with its bookkeeping, or the agent's socket, for the command
    /// line; `lookup` (default: `service`) for finding keys.
    package init(service: any KeychainService, lookup: (any KeychainService)? = nil) {
        self.service = service
        self.lookup = lookup ?? service
    }

    private var groupFilter: [AttributeKey: AttributeValue] { [.accessGroup: .string(Self.accessGroup)] }

    /// Every SSH key, oldest first; none while the keychain is locked (their attributes are sealed).
    package func identities() throws(KeychainError) -> [Identity] {
        let keys: [ItemResult]
        do {
            keys = try lookup.copyMatching(
                ItemQuery(
                    .key, matching: groupFilter.merging([.keyClass: .number(1)]) { $1 }, synchronizable: .any,
                    limit: .all,
                    returning: [.attributes, .data, .persistentReference], authenticationUI: .fail))
        } catch KeychainError.itemNotFound {
            return []
        }
        let settings = try allSettings()
        var identities: [Identity] = []
        for item in keys {
            // Not an SSH key (another kind in the group).
            guard let identity = identity(item, settings: settings) else { continue }
            identities.append(identity)
        }
        return identities.sorted { ($0.created ?? .distantPast) < ($1.created ?? .distantPast) }
    }

    /// The key whose blob is `blob`, if the keychain holds it. Found by its application label (SHA-1 of the
    /// key, the item's index) with its attributes only: a signature reads the key's data once, to use it.
    package func identity(blob: Data) throws(KeychainError) -> Identity? {
        guard let key = try? SSHPublicKey(blob: blob) else { return nil }  // A kind of key no item can be.
        let query = ItemQuery(
            .key,
            matching: groupFilter.merging([
                .keyClass: .number(1), .applicationLabel: .data(key.applicationLabel),
                .type: Self.typeValue(key.keyType),
            ]) { $1 },
            synchronizable: .any, limit: .one, returning: [.attributes, .persistentReference], authenticationUI: .fail)
        let found: ItemResult
        do {
            guard let first = try lookup.copyMatching(query).first else { return nil }
            found = first
        } catch KeychainError.itemNotFound {
            return nil
        }
        var known: [String: SSHKeySettings?] = [:]
        if let stored = try settings(forLabel: key.applicationLabel) {
            known[Self.account(key.applicationLabel)] = stored
        }
        return identity(found, publicKey: key, settings: known)
    }

    /// The `kSecAttrKeyType` value of a type's items (Apple's numbers; Ed25519's text).
    static func typeValue(_ type: KeyType) -> AttributeValue {
        Int64(type.rawValue).map(AttributeValue.number) ?? .string(type.rawValue)
    }

    /// An item as an identity: nil when it is no SSH key (not held, or of a size SSH has no name for).
    private func identity(_ item: ItemResult, settings: [String: SSHKeySettings?]) -> Identity? {
        guard let data = item.data, let type = Self.keyType(item.attributes[.type]),
            // Not a key of SSH's kinds.
            let key = try? AsymmetricKey(externalRepresentation: data, type: type, isPrivate: false),
            type != .ellipticCurve || SSHPublicKey.curves[key.sizeInBits] != nil
        else { return nil }
        return identity(item, publicKey: SSHPublicKey(key), settings: settings)
    }

    /// An item whose public key is `publicKey` as an identity.
    private func identity(_ item: ItemResult, publicKey: SSHPublicKey, settings: [String: SSHKeySettings?]) -> Identity
    {
        let account = Self.account(publicKey.applicationLabel)
        // No settings stored: the defaults; stored but damaged: none, and the key is not used.
        let stored: SSHKeySettings? = settings.keys.contains(account) ? settings[account] ?? nil : SSHKeySettings()
        var identity = Identity(
            publicKey: publicKey, comment: item.attributes[.label]?.stringValue ?? "",
            reference: item.persistentReference,
            settings: stored, tokenID: item.attributes[.tokenID]?.stringValue ?? "",
            created: item.attributes[.creationDate]?.dateValue)
        identity.storage = item.attributes[.keyStorage]?.stringValue.flatMap(KeyStorage.init(rawValue:)) ?? .software
        return identity
    }

    static func keyType(_ value: AttributeValue?) -> KeyType? {
        switch value {
        case .number(let number)?: KeyType(rawValue: String(number))
        case .string(let text)?: KeyType(rawValue: text)
        default: nil
        }
    }

    /// The settings item's account for a key's application label.
    static func account(_ label: Data) -> String { Hex.encode(label) }

    /// Every key's settings by account; a damaged one as nil.
    private func allSettings() throws(KeychainError) -> [String: SSHKeySettings?] {
        let query = ItemQuery(
            .genericPassword, matching: groupFilter.merging([.service: .string(Self.settingsService)]) { $1 },
            synchronizable: .any, limit: .all, returning: [.attributes, .data], authenticationUI: .fail)
        let found: [ItemResult]
        do {
            found = try lookup.copyMatching(query)
        } catch KeychainError.itemNotFound {
            return [:]
        }
        var settings: [String: SSHKeySettings?] = [:]
        for item in found {
            guard let account = item.attributes[.account]?.stringValue else { continue }
            settings[account] = item.data.flatMap(SSHKeySettings.decode)
        }
        return settings
    }

    /// One key's settings: nil when it has none stored (the defaults apply), `.some(nil)` when they are damaged.
    private func settings(forLabel label: Data) throws(KeychainError) -> SSHKeySettings?? {
        let query = ItemQuery(
            .genericPassword,
            matching: groupFilter.merging([
                .service: .string(Self.settingsService),
                .account: .string(Self.account(label)),
            ]) { $1 },
            synchronizable: .any, limit: .one, returning: [.data], authenticationUI: .fail)
        do {
            guard let data = try lookup.copyMatching(query).first?.data else { return .some(nil) }
            return .some(SSHKeySettings.decode(data))
        } catch KeychainError.itemNotFound {
            return nil
        }
    }

    /// Signs `data` with the key for a request's `flags`: the signature blob.
    package func sign(_ identity: Identity, data: Data, flags: UInt32) throws(KeychainError) -> Data {
        let plan = SSHSignature.plan(for: identity.publicKey.kind, flags: flags)
        let signature = try service.useHeldKey(
            identity.reference, for: .sign(plan.algorithm, SSHSignature.input(data, plan: plan)))
        return SSHSignature.blob(name: plan.name, kind: identity.publicKey.kind, signature: signature)
    }

    /// Stores a key `ssh-add` gave (or one imported): held by the keychain from now on, labelled with its
    /// comment, with `settings`. A key already there keeps its item and takes the new comment and settings,
    /// as `ssh-agent` updates a key added again.
    package func add(
        _ key: SSHPrivateKey, comment: String, settings: SSHKeySettings,
        tokenID: String = HeldKeyRequest.latchkeyTokenID
    )
        throws(KeychainError)
    {
        let label = key.publicKey.applicationLabel
        if let existing = try identity(blob: key.publicKey.blob) {
            try rename(existing, to: comment)
        } else {
            _ = try service.perform(
                .importHeldKey(
                    key.key,
                    attributes: [
                        .label: .string(comment), .accessGroup: .string(Self.accessGroup), .tokenID: .string(tokenID),
                    ], returning: []))
        }
        try store(settings, forLabel: label)
    }

    /// Makes a new key in the keychain (`latchkey ssh-key create`): generated where the keychain runs and never
    /// handed out — `kSecAttrTokenIDSecureEnclave`'s keys.
    package func create(_ type: KeyType, bits: Int, comment: String, settings: SSHKeySettings) throws(KeychainError)
        -> SSHPublicKey
    {
        let request = HeldKeyRequest(
            type: type, bits: bits,
            attributes: [
                .label: .string(comment), .accessGroup: .string(Self.accessGroup),
                .tokenID: .string(HeldKeyRequest.secureEnclaveTokenID),
            ])
        guard let made = try service.createHeldKey(request, returning: [.data]), let data = made.data else {
            throw KeychainError(.internal, "the new key's public half was not returned")
        }
        let key: AsymmetricKey
        do {
            key = try AsymmetricKey(externalRepresentation: data, type: type, isPrivate: false)
        } catch {
            throw KeychainError(error)
        }
        let publicKey = SSHPublicKey(key)
        try store(settings, forLabel: publicKey.applicationLabel)
        return publicKey
    }

    /// Replaces a key's settings.
    package func store(_ settings: SSHKeySettings, forLabel label: Data) throws(KeychainError) {
        let item = NewItem(
            .genericPassword,
            attributes: [
                .service: .string(Self.settingsService), .account: .string(Self.account(label)),
                .accessGroup: .string(Self.accessGroup),
                .accessible: .string(Accessibility.whenUnlockedThisDeviceOnly.rawValue),
                .label: .string("SSH key settings"),
            ], data: settings.encoded())
        _ = try service.addOrUpdate(item)
    }

    /// Gives a key a new comment (its label).
    package func rename(_ identity: Identity, to comment: String) throws(KeychainError) {
        _ = try service.update(
            ItemQuery(.key, synchronizable: .any, persistentReference: identity.reference),
            with: ItemChanges(attributes: [.label: .string(comment)]))
    }

    /// Removes a key and its settings from the keychain.
    package func remove(_ identity: Identity) throws(KeychainError) {
        _ = try service.delete(
            ItemQuery(.key, synchronizable: .any, persistentReference: identity.reference, limit: .all))
        let settings = ItemQuery(
            .genericPassword,
            matching: groupFilter.merging([
                .service: .string(Self.settingsService),
                .account: .string(Self.account(identity.publicKey.applicationLabel)),
            ]) { $1 }, synchronizable: .any, limit: .all)
        do {
            _ = try service.delete(settings)
        } catch KeychainError.itemNotFound {
            // A key without stored settings (the defaults applied): nothing more to remove.
        }
    }

    /// Removes every key whose lifetime is over (`ssh-add -t`); returns their comments. Nothing while locked.
    package func removeExpired(now: Date = Date()) throws(KeychainError) -> [String] {
        guard try service.status().lockState == .unlocked else { return [] }
        var removed: [String] = []
        for identity in try identities() where identity.settings?.hasExpired(at: now) == true {
            try remove(identity)
            removed.append(identity.comment)
        }
        return removed
    }
}
