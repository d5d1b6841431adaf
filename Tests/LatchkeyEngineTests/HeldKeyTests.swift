import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@testable import LatchkeyEngine

/// Keys the keychain holds (`HeldKeyRequest`, Apple's token keys): made and used inside the engine, their
/// private half never handed out — searches give the public key, the stored form cannot be written by an
/// add or an update — and refused with Apple's statuses when the request is wrong.
@Suite(.dedicatedThreads) struct HeldKeyTests {
    let directory = TemporaryDirectory()
    static let tag = AttributeValue.data(Data("com.example.signing".utf8))
    static let ecdsa = KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")
    static let ecies = KeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV")

    func make(
        _ keychain: KeychainDatabase, _ attributes: [AttributeKey: AttributeValue] = [.applicationTag: tag],
        type: KeyType = .ellipticCurve, bits: Int = 256
    ) throws -> ItemResult {
        try #require(
            try keychain.createHeldKey(
                HeldKeyRequest(type: type, bits: bits, attributes: attributes), caller: Fixture.app,
                returning: [.attributes, .data]))
    }

    /// The private key as stored (what only `useHeldKey` reads).
    func storedPrivateKey(_ keychain: KeychainDatabase, _ reference: Data) throws -> AsymmetricKey {
        let found = try #require(
            try keychain.copyMatching(
                ItemQuery(.key, persistentReference: reference, returning: [.data]), caller: Fixture.app, presence: nil,
                progress: nil,
                releasingHeldKeys: true
            ).first)
        return try HeldKeyData.privateKey(try #require(found.data), type: .ellipticCurve)
    }

    @Test func aHeldKeySignsDecryptsAndDerivesButGivesOnlyItsPublicKey() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let made = try make(keychain)
        let publicKey = try AsymmetricKey(
            externalRepresentation: try #require(made.data), type: .ellipticCurve, isPrivate: false)
        #expect(made.attributes[.tokenID] == .string(HeldKeyRequest.latchkeyTokenID))
        #expect(made.attributes[.keyClass] == .number(1))
        #expect(made.attributes[.applicationLabel] == .data(publicKey.applicationLabel))
        #expect(made.attributes[.accessible] == .string("aku"))
        #expect(
            made.attributes["extr"] == .number(0) && made.attributes["sens"] == .number(1)
                && made.attributes["next"] == .number(1))

        // A search gives the public key as the data, whatever is asked.
        let found = try keychain.copyMatching(
            ItemQuery(.key, matching: [.applicationTag: Self.tag], returning: [.data, .attributes]),
            caller: Fixture.app)
        #expect(found.map(\.data) == [publicKey.publicKeyData])

        let message = Data("pay 10 to bob".utf8)
        let signature = try keychain.useHeldKey(
            made.persistentReference, for: .sign(Self.ecdsa, message), caller: Fixture.app)
        try publicKey.verify(Self.ecdsa, message, signature: signature)

        let ciphertext = try publicKey.encrypt(Self.ecies, Data("for the holder".utf8))
        #expect(
            try keychain.useHeldKey(
                made.persistentReference, for: .decrypt(Self.ecies, ciphertext, KeyOperationParameters()),
                caller: Fixture.app) == Data("for the holder".utf8))

        let peer = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let exchange = KeyAlgorithm(rawValue: "algid:keyexchange:ECDH")
        let shared = try keychain.useHeldKey(
            made.persistentReference,
            for: .keyExchange(exchange, peerPublicKey: peer.publicKeyData, KeyOperationParameters()),
            caller: Fixture.app)
        #expect(shared == (try peer.keyExchange(exchange, with: publicKey)))

        // The private half is what the keychain stored, and appears in none of the answers.
        let scalar = try storedPrivateKey(keychain, made.persistentReference).externalRepresentation().copiedData()
            .suffix(32)
        for answer in [try #require(made.data), signature, shared] + found.compactMap(\.data) {
            #expect(answer.range(of: scalar) == nil)
        }
    }

    @Test func rsaHeldKeysSignAndDecryptToo() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let made = try make(keychain, [.label: .string("rsa")], type: .rsa, bits: 2048)
        let publicKey = try AsymmetricKey(externalRepresentation: try #require(made.data), type: .rsa, isPrivate: false)
        let pss = KeyAlgorithm(rawValue: "algid:sign:RSA:message-PSS:SHA256:SHA256:32")
        let signature = try keychain.useHeldKey(
            made.persistentReference, for: .sign(pss, Data("m".utf8)), caller: Fixture.app)
        try publicKey.verify(pss, Data("m".utf8), signature: signature)
        let oaep = KeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA256")
        let ciphertext = try publicKey.encrypt(oaep, Data("secret".utf8))
        #expect(
            try keychain.useHeldKey(
                made.persistentReference, for: .decrypt(oaep, ciphertext, KeyOperationParameters()),
                caller: Fixture.app) == Data("secret".utf8))
    }

    @Test func onlyTheKeychainWritesAHeldKey() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let made = try make(keychain)
        let software = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let external = try software.externalRepresentation().copiedData()
        // An add may not claim a token, nor store a held key's form.
        #expect(
            throws: KeychainError.param(
                "kSecAttrTokenID is set by the keychain on the keys it makes and holds (SecKeyCreateRandomKey with a token)"
            )
        ) {
            try keychain.add(
                NewItem(
                    .key,
                    attributes: KeyAttributes.derived(from: software).merging([.tokenID: .string("com.apple.setoken")])
                    { _, new in new },
                    data: external), caller: Fixture.app)
        }
        #expect(
            throws: KeychainError.param(
                "the data is the stored form of a key the keychain holds, which only the keychain writes")
        ) {
            try keychain.add(
                NewItem(.key, attributes: KeyAttributes.derived(from: software), data: try HeldKeyData.seal(software)),
                caller: Fixture.app)
        }
        // An update may not replace its key, move it off this device, or give another key a token.
        let query = ItemQuery(.key, persistentReference: made.persistentReference)
        #expect(throws: KeychainError.param("a key the keychain holds keeps its key: its data cannot be replaced")) {
            try keychain.update(query, with: ItemChanges(data: external), caller: Fixture.app)
        }
        #expect(
            throws: KeychainError.param(
                "a key the keychain holds never leaves this device: its accessibility stays …ThisDeviceOnly")
        ) {
            try keychain.update(query, with: ItemChanges(attributes: [.accessible: .string("ak")]), caller: Fixture.app)
        }
        #expect(
            throws: KeychainError.param(
                "kSecAttrTokenID is set by the keychain on the keys it makes and holds (SecKeyCreateRandomKey with a token)"
            )
        ) {
            try keychain.update(
                query, with: ItemChanges(attributes: [.tokenID: .string("com.apple.setoken")]), caller: Fixture.app)
        }
        // Other attributes change as on any item; the key still works.
        #expect(
            try keychain.update(query, with: ItemChanges(attributes: [.label: .string("renamed")]), caller: Fixture.app)
                == 1)
        _ = try keychain.useHeldKey(
            made.persistentReference, for: .sign(Self.ecdsa, Data("m".utf8)), caller: Fixture.app)
    }

    /// Apple stores a token's key under the token's own ACL whatever class the caller gives
    /// (SecItem.c's `SecTokenItemAdd` sets `kSecAttrAccessibleAlwaysPrivate`), so a Secure Enclave key made
    /// with `kSecAttrAccessibleAfterFirstUnlock` is made (CertificateSigningRequest's suite does this). A
    /// held key never leaves the device: a class that could is kept as its ThisDeviceOnly counterpart, with
    /// the same availability, in the accessibility and in the access control alike. With an access control,
    /// Apple hands the control to the token (`SecTokenCopyUpdatedObjectID` drops it from the item), so a
    /// `kSecAttrAccessible` given beside it does not conflict.
    @Test func aClassThatCouldLeaveIsKeptOnThisDevice() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        for (given, kept) in [("ak", "aku"), ("ck", "cku"), ("dk", "dku"), ("akpu", "akpu")] {
            let made = try make(keychain, [.applicationTag: .data(Data(given.utf8)), .accessible: .string(given)])
            #expect(made.attributes[.accessible] == .string(kept))
        }
        let control = AccessControl(protection: .afterFirstUnlock, flags: .privateKeyUsage)
        let made = try make(
            keychain,
            [
                .applicationTag: .data(Data("control".utf8)), .accessControl: control.attributeValue,
                .accessible: .string("ck"),
            ])
        #expect(
            made.attributes[.accessControl].flatMap(AccessControl.init(attributeValue:))?.protection
                == .afterFirstUnlockThisDeviceOnly)
    }

    @Test func wrongRequestsGetApplesStatuses() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        #expect(
            throws: KeychainError.param(
                "kSecAttrTokenID 'com.example.token' is no token of Latchkey's (kSecAttrTokenIDSecureEnclave or com.latchkey.agent)"
            )
        ) {
            _ = try make(keychain, [.tokenID: .string("com.example.token")])
        }
        #expect(throws: KeychainError.param("an EC key is 256, 384 or 521 bits, not 255")) {
            _ = try make(keychain, bits: 255)
        }
        let made = try make(
            keychain, [.tokenID: .string(HeldKeyRequest.secureEnclaveTokenID), .applicationTag: Self.tag])
        #expect(made.attributes[.tokenID] == .string("com.apple.setoken"))
        // The same key attributes twice: a duplicate, as for any key.
        let label = try #require(made.attributes[.applicationLabel])
        #expect(
            status { _ = try make(keychain, [.applicationTag: Self.tag, .applicationLabel: label]) } == .duplicateItem)

        // An algorithm the key does not have, or input the algorithm refuses.
        let rsaSign = KeyAlgorithm(rawValue: "algid:sign:RSA:message-PSS:SHA256:SHA256:32")
        #expect(
            throws: KeychainError.param(
                "algid:sign:RSA:message-PSS:SHA256:SHA256:32 is not supported by this EC private key, 256 bits for sign"
            )
        ) {
            _ = try keychain.useHeldKey(made.persistentReference, for: .sign(rsaSign, Data()), caller: Fixture.app)
        }
        #expect(
            throws: KeychainError.param(
                "the peer's public key: EC public key data must be 04‖X‖Y for P-256, P-384 or P-521 (3 bytes given)")
        ) {
            _ = try keychain.useHeldKey(
                made.persistentReference,
                for: .keyExchange(
                    KeyAlgorithm(rawValue: "algid:keyexchange:ECDH"),
                    peerPublicKey: Data([4, 1, 2]), KeyOperationParameters()),
                caller: Fixture.app)
        }
        // A key in this process is used in this process; a reference to another class, or to another
        // caller's key, finds nothing to use.
        let software = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let stored = try #require(
            try keychain.add(
                NewItem(
                    .key, attributes: KeyAttributes.derived(from: software),
                    data: try software.externalRepresentation().copiedData()),
                caller: Fixture.app, returning: .persistentReference))
        #expect(throws: KeychainError.param("the key is not held by the keychain; use it in this process")) {
            _ = try keychain.useHeldKey(stored.persistentReference, for: .sign(Self.ecdsa, Data()), caller: Fixture.app)
        }
        let password = try #require(
            try keychain.add(
                Fixture.password(service: "s", account: "a"), caller: Fixture.app, returning: .persistentReference))
        #expect(throws: KeychainError.param("the reference does not name a key")) {
            _ = try keychain.useHeldKey(
                password.persistentReference, for: .sign(Self.ecdsa, Data()), caller: Fixture.app)
        }
        #expect(throws: KeychainError(.itemNotFound)) {
            _ = try keychain.useHeldKey(made.persistentReference, for: .sign(Self.ecdsa, Data()), caller: Fixture.other)
        }
    }

    @Test func aLockedKeychainRefusesToUseItsKeys() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let made = try make(keychain)
        keychain.lock()
        #expect(
            status {
                _ = try keychain.useHeldKey(
                    made.persistentReference, for: .sign(Self.ecdsa, Data("m".utf8)), caller: Fixture.app)
            }
                == .interactionNotAllowed)
        #expect(
            status {
                _ = try keychain.createHeldKey(HeldKeyRequest(type: .ellipticCurve, bits: 256), caller: Fixture.app)
            }
                == .interactionNotAllowed)
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        _ = try keychain.useHeldKey(
            made.persistentReference, for: .sign(Self.ecdsa, Data("m".utf8)), caller: Fixture.app)
    }

    @Test func theKeyIsInNoFileInTheClear() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let made = try make(keychain)
        let scalar = try storedPrivateKey(keychain, made.persistentReference).externalRepresentation().copiedData()
            .suffix(32)
        let publicKey = try #require(made.data)
        var checked = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.file(name)))
            #expect(bytes.range(of: scalar) == nil, "\(name)")
            #expect(bytes.range(of: publicKey) == nil, "\(name)")  // Sealed with the rest of the item.
            checked += 1
        }
        #expect(checked >= 2)
    }
}
