public import FoundationEssentials
internal import LatchkeyCrypto
package import LatchkeyPKI

extension KeychainDatabase {
    /// Makes a private key the keychain holds (`HeldKeyRequest`) and stores it for `caller`: generated here,
    /// stored with its derived attributes, `tkid`, `lkst` (where it lives) and a `…ThisDeviceOnly`
    /// accessibility (a class that could leave the device is kept as its `…ThisDeviceOnly` counterpart). A
    /// stored `kSecAttrTokenIDSecureEnclave` P-256 key is made inside the TPM when there is one (the
    /// keychain's own TPM when it is enrolled), the item holding only the TPM's wrapped object; without a
    /// TPM it is held in memory like the others. Returns what `returning` asks for; its data is the public key.
    ///
    /// - Throws: `errSecParam` for a size the type does not have or a token other than the two Latchkey
    ///   knows; `errSecNotAvailable` when an enrolled keychain's TPM does not answer; the errors of `add` (a
    ///   duplicate, a locked class, a group the caller lacks).
    public func createHeldKey(_ request: HeldKeyRequest, caller: CallerIdentity, returning: ReturnOptions = [])
        throws(KeychainError) -> ItemResult?
    {
        try createHeldKey(request, caller: caller, returning: returning, holderEnded: nil)
    }

    /// `createHeldKey`; an ephemeral key made for another process (through the agent) goes when
    /// `holderEnded` says that process has ended.
    package func createHeldKey(
        _ request: HeldKeyRequest, caller: CallerIdentity, returning: ReturnOptions,
        holderEnded: (@Sendable () -> Bool)?
    ) throws(KeychainError) -> ItemResult? {
        var attributes = try Self.heldKeyAttributes(request.attributes)
        if Self.suitsTPM(request, token: attributes[.tokenID]?.stringValue ?? "") {
            // An ephemeral key is made only while unlocked: checked before the TPM is asked for one.
            if !request.isPermanent { try Self.ephemeralNeedsUnlocked(vault) }
            if let made = try makeKeyInTPM() {
                attributes[.keyStorage] = .string(KeyStorage.tpm.rawValue)
                guard request.isPermanent else {
                    return try holdEphemeralKey(
                        .tpm(made.stored), publicKey: made.publicKey, attributes: attributes, caller: caller,
                        returning: returning, holderEnded: holderEnded)
                }
                return try storeHeldForm(
                    made.stored, publicKey: made.publicKey, attributes: attributes, caller: caller,
                    returning: returning)
            }
        }
        let key: AsymmetricKey
        do {
            key = try AsymmetricKey.generate(request.type, bits: request.bits)
        } catch {
            throw KeychainError(error)
        }
        attributes[.keyStorage] = .string(KeyStorage.software.rawValue)
        guard request.isPermanent else {
            return try holdEphemeralKey(
                .software(key), publicKey: key.publicKey, attributes: attributes, caller: caller,
                returning: returning, holderEnded: holderEnded)
        }
        return try storeHeldKey(key, attributes: attributes, caller: caller, returning: returning)
    }

    /// Keeps an ephemeral key (`form`, whose public half is `publicKey`) in memory for `caller`, never
    /// stored: made only while unlocked, as a stored one is. Returns what `returning` asks for, its
    /// persistent reference the key's handle.
    private func holdEphemeralKey(
        _ form: KeyVault.EphemeralForm, publicKey: AsymmetricKey, attributes given: [AttributeKey: AttributeValue],
        caller: CallerIdentity, returning: ReturnOptions, holderEnded: (@Sendable () -> Bool)?
    ) throws(KeychainError) -> ItemResult? {
        var attributes = given
        attributes.merge(KeyAttributes.derived(from: publicKey, held: true)) { given, _ in given }
        try Self.ephemeralNeedsUnlocked(vault)
        let handle = vault.holdEphemeral(form, owner: caller.applicationIdentifier, holderEnded: holderEnded)
        guard !returning.isEmpty else { return nil }
        attributes[.accessGroup] = nil
        return ItemResult(
            itemClass: .key, attributes: attributes, data: publicKey.publicKeyData, persistentReference: handle)
    }

    /// `errSecInteractionNotAllowed` unless `vault` is unlocked: an ephemeral key is made only then.
    private static func ephemeralNeedsUnlocked(_ vault: KeyVault) throws(KeychainError) {
        guard vault.lockState == .unlocked else {
            throw KeychainError.locked("an ephemeral key the keychain holds is made only while it is unlocked")
        }
    }

    /// Stores a private key made elsewhere (an SSH key `ssh-add` hands the agent, or one imported from an
    /// OpenSSH key file) as a key the keychain holds, from then on as `createHeldKey`'s keys are: used here,
    /// never handed out. `attributes` as `HeldKeyRequest.attributes`.
    ///
    /// - Throws: the errors of `createHeldKey` but generation's.
    package func addHeldKey(
        _ key: AsymmetricKey, attributes: [AttributeKey: AttributeValue], caller: CallerIdentity,
        returning: ReturnOptions
    ) throws(KeychainError) -> ItemResult? {
        guard key.isPrivate else { throw KeychainError.param("only a private key is held") }
        var checked = try Self.heldKeyAttributes(attributes)
        checked[.keyStorage] = .string(KeyStorage.software.rawValue)
        return try storeHeldKey(key, attributes: checked, caller: caller, returning: returning)
    }

    /// A held key's attributes as given, checked: its token one of Latchkey's (set to the default when
    /// missing), its accessibility `…ThisDeviceOnly` (`…WhenUnlockedThisDeviceOnly` when missing).
    private static func heldKeyAttributes(_ given: [AttributeKey: AttributeValue]) throws(KeychainError)
        -> [AttributeKey: AttributeValue]
    {
        var attributes = given
        let token = attributes[.tokenID]?.stringValue ?? HeldKeyRequest.latchkeyTokenID
        guard HeldKeyRequest.tokenIDs.contains(token) else {
            throw KeychainError.param(
                "kSecAttrTokenID '\(token)' is no token of Latchkey's (kSecAttrTokenIDSecureEnclave or \(HeldKeyRequest.latchkeyTokenID))"
            )
        }
        // A held key never leaves this device, whatever protection it is given: as Apple stores a token's item
        // under its own ACL whatever the caller's class (SecItem.c's SecTokenItemAdd), a class that could
        // leave (ak, ck, dk) is kept as its …ThisDeviceOnly counterpart, with the same availability.
        if let control = attributes[.accessControl].flatMap(AccessControl.init(attributeValue:)) {
            let kept = AccessControl(protection: control.protection.thisDeviceOnly, flags: control.flags)
            attributes[.accessControl] = kept.attributeValue
            // The control governs: Apple hands it to the token and stores the item under the token's class
            // (SecTokenItemAdd), so a pdmn given beside it is not the item's and does not conflict with it.
            attributes[.accessible] = nil
        } else if let given = attributes[.accessible] {
            guard let code = given.stringValue, let parsed = Accessibility(rawValue: code) else {
                throw KeychainError.param("pdmn must be one of the accessibility codes")
            }
            attributes[.accessible] = .string(parsed.thisDeviceOnly.rawValue)
        } else {
            attributes[.accessible] = .string(Accessibility.whenUnlockedThisDeviceOnly.rawValue)
        }
        attributes[.tokenID] = .string(token)
        return attributes
    }

    /// Stores `key` with its derived attributes (those given win) as a held key's item.
    private func storeHeldKey(
        _ key: AsymmetricKey, attributes given: [AttributeKey: AttributeValue], caller: CallerIdentity,
        returning: ReturnOptions
    ) throws(KeychainError) -> ItemResult? {
        var sealed = try HeldKeyData.seal(key)
        defer { sealed.resetBytes(in: 0..<sealed.count) }
        return try storeHeldForm(
            sealed, publicKey: key.publicKey, attributes: given, caller: caller, returning: returning)
    }

    /// Stores a held key's stored form (`HeldKeyData`) with the attributes `publicKey` derives (those given win).
    private func storeHeldForm(
        _ sealed: Data, publicKey key: AsymmetricKey, attributes given: [AttributeKey: AttributeValue],
        caller: CallerIdentity, returning: ReturnOptions
    ) throws(KeychainError) -> ItemResult? {
        var attributes = given
        attributes.merge(KeyAttributes.derived(from: key, held: true)) { given, _ in given }
        var item = NewItem(.key, attributes: attributes, data: sealed)
        item.isHeldKey = true
        // Asked without its data (the stored form): the public key is put in its place below.
        let added = try add(
            item, caller: caller, returning: returning.subtracting([.data, .reference]).union(.persistentReference))
        item.data = nil  // The last other reference: the wipe above then clears the only copy.
        guard !returning.isEmpty, let added else { return nil }
        let wantsData = returning.contains(.data) || returning.contains(.reference)
        return ItemResult(
            itemClass: .key, attributes: added.attributes, data: wantsData ? key.publicKeyData : nil,
            persistentReference: added.persistentReference)
    }

    /// Uses the held key `reference` names (a persistent reference) for `caller`: signs, decrypts or derives
    /// with its private half, which never leaves this call. An access control that asks the user asks them
    /// through `presence`, as a read of the item's data would.
    ///
    /// - Throws: `errSecItemNotFound` when the reference names no key of the caller's groups;
    ///   `errSecParam` when it names a key the keychain does not hold (use the key itself) or the algorithm
    ///   does not suit it or the input is wrong; `errSecInteractionNotAllowed` while locked.
    public func useHeldKey(
        _ reference: Data, for use: KeyUse, caller: CallerIdentity, presence: (any UserPresenceVerifier)? = nil
    )
        throws(KeychainError) -> Data
    {
        if EphemeralKeyHandle.isHandle(reference) {
            guard vault.lockState == .unlocked else { throw KeychainError.locked("the keychain is locked") }
            guard let key = vault.ephemeralKey(reference, owner: caller.applicationIdentifier) else {
                throw KeychainError(
                    .itemNotFound,
                    "no ephemeral key of this program by that handle (gone when the keychain locked, the process that made it ended or its key was released)"
                )
            }
            switch key {
            case .software(let key): return try Self.perform(use, with: key)
            case .tpm(let stored): return try useTPMKey(stored, for: use)
            }
        }
        guard PersistentReference.parse(reference)?.itemClass == .key else {
            throw KeychainError.param("the reference does not name a key")
        }
        // The data alone: the stored form says what it is (only `createHeldKey` writes it) and which type.
        let query = ItemQuery(
            .key, synchronizable: .any, persistentReference: reference, limit: .one, returning: [.data])
        var found = try copyMatching(query, caller: caller, presence: presence, progress: nil, releasingHeldKeys: true)
        guard var stored = found.first?.data else { throw KeychainError(.itemNotFound) }
        found = []  // The only other reference to the bytes: the wipe below then clears them, not a copy.
        defer { stored.resetBytes(in: 0..<stored.count) }
        guard HeldKeyData.isHeld(stored) else {
            throw KeychainError.param("the key is not held by the keychain; use it in this process")
        }
        if HeldKeyData.isTPM(stored) { return try useTPMKey(stored, for: use) }
        let type = try HeldKeyData.type(stored)
        let key = try vault.heldKey(reference, stored: stored) { () throws(KeychainError) in
            try HeldKeyData.privateKey(stored, type: type)
        }
        return try Self.perform(use, with: key)
    }

    /// Forgets the ephemeral held key `reference` (its handle) names, if `caller`'s program made it.
    ///
    /// - Throws: `errSecParam` when the reference is not an ephemeral key's handle; `errSecItemNotFound`
    ///   when it names no key of the caller's (never made, or gone with a lock, its process or an earlier release).
    public func releaseHeldKey(_ reference: Data, caller: CallerIdentity) throws(KeychainError) {
        guard EphemeralKeyHandle.isHandle(reference) else {
            throw KeychainError.param("only an ephemeral key is released; a stored key is deleted")
        }
        guard vault.releaseEphemeral(reference, owner: caller.applicationIdentifier) else {
            throw KeychainError(.itemNotFound, "no ephemeral key of this program by that handle")
        }
    }

    /// Signs, decrypts or derives with a held key's private half.
    private static func perform(_ use: KeyUse, with key: AsymmetricKey) throws(KeychainError) -> Data {
        do throws(KeyError) {
            switch use {
            case .sign(let algorithm, let data): return try key.sign(algorithm, data)
            case .decrypt(let algorithm, let data, let parameters):
                return try key.decrypt(algorithm, data, parameters: parameters)
            case .keyExchange(let algorithm, let peerData, let parameters):
                let peer: AsymmetricKey
                do {
                    peer = try AsymmetricKey(externalRepresentation: peerData, type: key.type, isPrivate: false)
                } catch {
                    throw KeyError(.param, "the peer's public key: \(error.reason)")
                }
                return try key.keyExchange(algorithm, with: peer, parameters: parameters)
            }
        } catch {
            throw KeychainError(error)
        }
    }
}
