import Foundation
import Latchkey
import LatchkeyTestSupport
import Synchronization
import Testing

/// Access control (SecAccessControl, SEMANTICS.md §6): an item's protection and its constraints; a secret
/// behind `.userPresence` (and its kin) is released only after the user confirms the keychain passphrase.
@Suite(.dedicatedThreads) struct AccessControlTests {
    /// A verifier that answers as told and records what it was asked.
    final class ScriptedPresence: UserPresenceVerifier {
        enum Answer {
            case passphrase(String)
            case cancel, nobody
        }
        let answer: Answer
        let requests = Mutex<[PresenceRequest]>([])

        init(_ answer: Answer) { self.answer = answer }

        var count: Int { requests.withLock { $0.count } }

        func confirm(_ request: PresenceRequest, verify: (Passphrase) throws(KeychainError) -> Void)
            throws(KeychainError)
        {
            requests.withLock { $0.append(request) }
            switch answer {
            case .passphrase(let text): try verify(Passphrase(text))
            case .cancel: throw KeychainError(.userCanceled, "scripted cancel")
            case .nobody: throw KeychainError(.interactionNotAllowed, "scripted: nobody")
            }
        }
    }

    static let presence = AccessControl(protection: .whenUnlocked, flags: .userPresence)
    let directory = TemporaryDirectory()

    /// A keychain with a protected item (mail/alice), another protected one (mail/carol) and an open one
    /// (mail/bob).
    func keychain() throws -> KeychainDatabase {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(
            Fixture.password(
                service: "mail", account: "alice", secret: "a-secret",
                extra: [.accessControl: Self.presence.attributeValue]), caller: Fixture.app)
        try keychain.add(
            Fixture.password(
                service: "mail", account: "carol", secret: "c-secret",
                extra: [.accessControl: Self.presence.attributeValue]), caller: Fixture.app)
        try keychain.add(Fixture.password(service: "mail", account: "bob", secret: "b-secret"), caller: Fixture.app)
        return keychain
    }

    @Test func anItemTakesItsAccessibilityFromItsAccessControl() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let control = AccessControl(
            protection: .afterFirstUnlockThisDeviceOnly, flags: [.biometryAny, .or, .devicePasscode])
        try keychain.add(
            Fixture.password(service: "s", account: "a", extra: [.accessControl: control.attributeValue]),
            caller: Fixture.app)
        let found = try #require(
            try keychain.copyMatching(Fixture.query(service: "s", returning: .attributes), caller: Fixture.app).first)
        #expect(found[.accessible] == .string("cku"))
        #expect(found[.accessControl].flatMap(AccessControl.init(attributeValue:)) == control)
        // The same protection without constraints may be given beside it.
        let plain = AccessControl(protection: .afterFirstUnlock, flags: [])
        try keychain.add(
            Fixture.password(
                service: "s", account: "b",
                extra: [
                    .accessControl: plain.attributeValue, .accessible: .string("ck"),
                ]), caller: Fixture.app)
        // A search by access control finds exactly the items that carry it.
        let byControl = ItemQuery(
            .genericPassword, matching: [.accessControl: control.attributeValue], limit: .all, returning: .attributes)
        #expect(try keychain.copyMatching(byControl, caller: Fixture.app).map { $0[.account] } == [.string("a")])
    }

    @Test func applesRulesForProtection() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        func add(_ extra: [AttributeKey: AttributeValue]) -> KeychainError? {
            do throws(KeychainError) {
                try keychain.add(Fixture.password(service: "s", account: "x", extra: extra), caller: Fixture.app)
                return nil
            } catch {
                return error
            }
        }
        #expect(
            add([.accessControl: Self.presence.attributeValue, .accessible: .string("ak")])
                == KeychainError(.param, "conflicting kSecAttrAccessible and kSecAttrAccessControl attributes"))
        #expect(
            add([
                .accessControl: AccessControl(protection: .always, flags: []).attributeValue,
                .accessible: .string("ak"),
            ])
                == KeychainError(.param, "conflicting kSecAttrAccessible and kSecAttrAccessControl attributes"))
        #expect(
            add([.accessControl: Self.presence.attributeValue, .synchronizable: .bool(true)])
                == KeychainError(.param, "an item with kSecAttrAccessControl constraints is not synchronizable"))
        #expect(
            add([
                .accessControl: AccessControl(protection: .whenUnlocked, flags: [.or, .and, .userPresence])
                    .attributeValue
            ])
                == KeychainError(
                    .param, "an access control cannot combine kSecAccessControlOr with kSecAccessControlAnd"))
        #expect(
            add([
                .accessControl: AccessControl(protection: .whenUnlocked, flags: AccessControlFlags(rawValue: 1 << 7))
                    .attributeValue
            ])
                == KeychainError(.param, "access control flags 0x80 are not defined"))
        #expect(
            add([.accessControl: .data(Data("not one".utf8))])
                == KeychainError(.param, "attribute 'accc' must be an access control (SecAccessControlCreateWithFlags)")
        )
        // An item with access control but no constraints may sync.
        #expect(
            add([
                .accessControl: AccessControl(protection: .whenUnlocked, flags: []).attributeValue,
                .synchronizable: .bool(true),
            ]) == nil)
        #expect(throws: KeychainError.self) {
            _ = try keychain.copyMatching(Fixture.query(service: "nothing"), caller: Fixture.app)
        }
    }

    @Test func attributesNeverAskButTheSecretDoes() throws {
        let keychain = try keychain()
        let asked = ScriptedPresence(.passphrase(Fixture.passphrase))
        let attributes = ItemQuery(
            .genericPassword, matching: [.service: .string("mail")], limit: .all, returning: .attributes)
        #expect(try keychain.copyMatching(attributes, caller: Fixture.app, presence: asked).count == 3)
        #expect(asked.count == 0)

        // Two protected items in one search: one question.
        let secrets = ItemQuery(
            .genericPassword, matching: [.service: .string("mail")], limit: .all, returning: [.data, .attributes],
            operationPrompt: "Sync the mailboxes")
        let found = try keychain.copyMatching(secrets, caller: Fixture.app, presence: asked)
        #expect(
            Set(found.compactMap { $0.data.map { String(decoding: $0, as: UTF8.self) } }) == [
                "a-secret", "b-secret", "c-secret",
            ])
        #expect(
            asked.requests.withLock { $0 } == [
                PresenceRequest(applicationIdentifier: "com.example.app", operationPrompt: "Sync the mailboxes")
            ])
        // The open item alone: no question.
        _ = try keychain.copyMatching(
            Fixture.query(service: "mail", account: "bob"), caller: Fixture.app, presence: asked)
        #expect(asked.count == 1)
    }

    @Test func eachRefusalHasApplesStatus() throws {
        let keychain = try keychain()
        let alice = Fixture.query(service: "mail", account: "alice")
        #expect(
            throws: KeychainError(
                .interactionNotAllowed, "a matching item needs the user's confirmation, and there is no one to ask here"
            )
        ) {
            _ = try keychain.copyMatching(alice, caller: Fixture.app)
        }
        #expect(throws: KeychainError(.authFailed)) {
            _ = try keychain.copyMatching(alice, caller: Fixture.app, presence: ScriptedPresence(.passphrase("wrong")))
        }
        #expect(throws: KeychainError(.userCanceled, "scripted cancel")) {
            _ = try keychain.copyMatching(alice, caller: Fixture.app, presence: ScriptedPresence(.cancel))
        }
        #expect(throws: KeychainError(.interactionNotAllowed, "scripted: nobody")) {
            _ = try keychain.copyMatching(alice, caller: Fixture.app, presence: ScriptedPresence(.nobody))
        }
        // kSecUseAuthenticationUIFail: refused without asking.
        let never = ScriptedPresence(.passphrase(Fixture.passphrase))
        var failing = alice
        failing.authenticationUI = .fail
        #expect(
            throws: KeychainError(
                .interactionNotAllowed,
                "a matching item needs the user's confirmation, and kSecUseAuthenticationUI is fail")
        ) {
            _ = try keychain.copyMatching(failing, caller: Fixture.app, presence: never)
        }
        // kSecUseAuthenticationUISkip: protected items are left out, without asking.
        var skipping = ItemQuery(.genericPassword, matching: [.service: .string("mail")], limit: .all, returning: .data)
        skipping.authenticationUI = .skip
        #expect(
            try keychain.copyMatching(skipping, caller: Fixture.app, presence: never).map(\.data) == [
                Data("b-secret".utf8)
            ])
        var skippingAlice = alice
        skippingAlice.authenticationUI = .skip
        #expect(throws: KeychainError(.itemNotFound)) {
            _ = try keychain.copyMatching(skippingAlice, caller: Fixture.app, presence: never)
        }
        #expect(never.count == 0)
    }

    @Test func changingAProtectedItemAsksButDeletingDoesNot() throws {
        let keychain = try keychain()
        let alice = Fixture.query(service: "mail", account: "alice", returning: [])
        let asked = ScriptedPresence(.passphrase(Fixture.passphrase))
        #expect(
            throws: KeychainError(
                .interactionNotAllowed, "a matching item needs the user's confirmation, and there is no one to ask here"
            )
        ) {
            try keychain.update(alice, with: ItemChanges(data: Data("new".utf8)), caller: Fixture.app)
        }
        #expect(
            try keychain.update(alice, with: ItemChanges(data: Data("new".utf8)), caller: Fixture.app, presence: asked)
                == 1)
        #expect(asked.count == 1)
        #expect(
            try keychain.copyMatching(
                Fixture.query(service: "mail", account: "alice"), caller: Fixture.app, presence: asked
            ).first?.data
                == Data("new".utf8))
        var failing = alice
        failing.authenticationUI = .fail
        #expect(
            throws: KeychainError(
                .interactionNotAllowed,
                "a matching item needs the user's confirmation, and kSecUseAuthenticationUI is fail")
        ) {
            try keychain.update(
                failing, with: ItemChanges(attributes: [.label: .string("x")]), caller: Fixture.app, presence: asked)
        }
        var skipping = alice
        skipping.authenticationUI = .skip
        #expect(throws: KeychainError(.param, "kSecUseAuthenticationUISkip is allowed only for SecItemCopyMatching")) {
            try keychain.update(
                skipping, with: ItemChanges(attributes: [.label: .string("x")]), caller: Fixture.app, presence: asked)
        }
        // addOrUpdate over a protected item is an update: it asks.
        let before = asked.count
        #expect(
            try keychain.addOrUpdate(
                Fixture.password(
                    service: "mail", account: "carol", secret: "c2",
                    extra: [.accessControl: Self.presence.attributeValue]),
                caller: Fixture.app, presence: asked) == false)
        #expect(asked.count == before + 1)
        // Removing the constraint is a change like any other (it asked above); then the item is open.
        try keychain.update(
            Fixture.query(service: "mail", account: "carol", returning: []),
            with: ItemChanges(attributes: [
                .accessControl: AccessControl(protection: .whenUnlocked, flags: []).attributeValue
            ]),
            caller: Fixture.app, presence: asked)
        #expect(
            try keychain.copyMatching(Fixture.query(service: "mail", account: "carol"), caller: Fixture.app).first?.data
                == Data("c2".utf8))
        // Deleting needs no confirmation (Apple's default ACL lets the owner delete).
        #expect(
            try keychain.delete(Fixture.query(service: "mail", account: "alice", returning: []), caller: Fixture.app)
                == 1)
    }

    @Test func clearingTheFlagInTheFileReleasesNothing() throws {
        let path = directory.file("test.keychain")
        do {
            let keychain = try keychain()
            keychain.lock()
        }
        try RawFile.execute(path, "UPDATE items SET acl = 0")
        let reopened = try KeychainDatabase.open(at: path)
        try reopened.unlock(with: Passphrase(Fixture.passphrase))
        // The column is bound into the item key's associated data: a cleared flag makes the row fail to open.
        #expect(throws: KeychainError(.decode, "1 matching item(s) are damaged")) {
            _ = try reopened.copyMatching(Fixture.query(service: "mail", account: "alice"), caller: Fixture.app)
        }
        #expect(
            try reopened.copyMatching(Fixture.query(service: "mail", account: "bob"), caller: Fixture.app).first?.data
                == Data("b-secret".utf8), "items without access control are untouched")
    }

    @Test func thePromptShowsNoControlCharacters() {
        let request = PresenceRequest(
            applicationIdentifier: "evil\u{1B}[2J", operationPrompt: "ok\nKeychain passphrase: \u{7}")
        #expect(request.message == "evil?[2J wants to use a protected keychain item: ok?Keychain passphrase: ?")
    }

    @Test func theAttributeValueRoundTrips() {
        for protection in Accessibility.allCases {
            for flags: AccessControlFlags in [
                [], .userPresence, [.biometryCurrentSet, .and, .devicePasscode], .applicationPassword, .privateKeyUsage,
            ] {
                let control = AccessControl(protection: protection, flags: flags)
                #expect(AccessControl(attributeValue: control.attributeValue) == control)
            }
        }
        #expect(AccessControl(attributeValue: .string("ak")) == nil)
        #expect(
            AccessControl(attributeValue: .data(Data("lkac1".utf8) + Data([2]) + Data("zz".utf8) + Data(count: 8)))
                == nil)
    }
}
