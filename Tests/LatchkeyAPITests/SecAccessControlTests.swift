import Foundation
import Latchkey
import LatchkeySecurity
import LatchkeyTestSupport
import LatchkeyTesting
import Synchronization
import Testing

extension GlobalSecItemTests {
    /// SecAccessControl through Apple's functions: created with Apple's flags, stored with an item, handed
    /// back with its attributes, and enforced — the secret needs the user's confirmation.
    @Suite(.dedicatedThreads) struct SecAccessControlTests {
        /// Confirms with the passphrase it was given, counting the questions.
        final class Confirming: UserPresenceVerifier {
            let passphrase: String
            let asked = Atomic<Int>(0)
            init(_ passphrase: String) { self.passphrase = passphrase }
            func confirm(_ request: PresenceRequest, verify: (Passphrase) throws(KeychainError) -> Void)
                throws(KeychainError)
            {
                asked.add(1, ordering: .relaxed)
                try verify(Passphrase(passphrase))
            }
        }

        let memory = InMemoryKeychain()
        init() { memory.install() }

        func control(_ flags: SecAccessControlCreateFlags = .userPresence) throws -> SecAccessControl {
            try #require(
                SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, flags, nil))
        }

        func add(_ control: SecAccessControl, account: String = "alice") -> OSStatus {
            SecItemAdd(
                [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "mail",
                    kSecAttrAccount as String: account, kSecValueData as String: Data("s3cret".utf8),
                    kSecAttrAccessControl as String: control,
                ] as CFDictionary, nil)
        }

        func read(_ extra: [String: Any] = [:]) -> (OSStatus, String?) {
            var result: CFTypeRef?
            let status = SecItemCopyMatching(
                [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "mail",
                    kSecReturnData as String: true,
                ].merging(extra) { _, new in new } as CFDictionary, &result)
            return (status, (result as? Data).map { String(decoding: $0, as: UTF8.self) })
        }

        @Test func theFlagsHaveApplesValues() {
            let table: [(SecAccessControlCreateFlags, CFOptionFlags)] = [
                (.userPresence, 1), (.biometryAny, 2), (.touchIDAny, 2), (.biometryCurrentSet, 8),
                (.touchIDCurrentSet, 8),
                (.devicePasscode, 16), (.watch, 32), (.companion, 32), (.or, 1 << 14), (.and, 1 << 15),
                (.privateKeyUsage, 1 << 30), (.applicationPassword, 1 << 31),
            ]
            for (flag, value) in table { #expect(flag.rawValue == value) }
        }

        @Test func controlsAreValuesAndBadOnesAreRefused() throws {
            let first = try control([.biometryCurrentSet, .or, .devicePasscode])
            let second = try control([.biometryCurrentSet, .or, .devicePasscode])
            #expect(first == second && first.hash == second.hash)
            #expect(first != (try control(.userPresence)))
            // As Valet keeps one: in a [String: AnyHashable].
            let query: [String: AnyHashable] = [kSecAttrAccessControl as String: first]
            #expect(query[kSecAttrAccessControl as String] == AnyHashable(second))
            #expect(SecAccessControlGetFlags(first) == [.biometryCurrentSet, .or, .devicePasscode])

            var error: Unmanaged<CFError>?
            #expect(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [.or, .and], &error) == nil)
            #expect(error?.takeRetainedValue().code == Int(errSecParam))
            #expect(
                SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAlwaysThisDeviceOnly, [], nil)?.accessControl
                    == AccessControl(protection: .alwaysThisDeviceOnly, flags: []))
        }

        @Test func theControlComesBackWithTheAttributes() throws {
            let presence = try control()
            #expect(add(presence) == errSecSuccess)
            var result: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "mail",
                        kSecReturnAttributes as String: true,
                    ] as CFDictionary, &result) == errSecSuccess)
            let attributes = try #require(result as? [String: Any])
            #expect(attributes[kSecAttrAccessControl as String] as? SecAccessControl == presence)
            #expect(attributes[kSecAttrAccessible as String] as? String == "ak")
            // Searching by the control finds the item.
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrAccessControl as String: presence,
                    ] as CFDictionary, nil) == errSecSuccess)
            // Beside a different kSecAttrAccessible it is refused, as Apple refuses it.
            #expect(
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "x",
                        kSecAttrAccessControl as String: presence,
                        kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock,
                    ] as CFDictionary, nil) == errSecParam)
            #expect(
                SecCopyLastErrorDetail()
                    == "One or more parameters passed to a function were not valid. (conflicting kSecAttrAccessible and kSecAttrAccessControl attributes)"
            )
        }

        @Test func theSecretWaitsForTheUser() throws {
            #expect(add(try control()) == errSecSuccess)
            // The in-memory keychain has nobody to ask.
            #expect(read() == (errSecInteractionNotAllowed, nil))
            #expect(
                read([kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail]) == (
                    errSecInteractionNotAllowed, nil
                ))
            #expect(read([kSecUseNoAuthenticationUI as String: true]) == (errSecInteractionNotAllowed, nil))
            #expect(read([kSecUseAuthenticationUI as String: kSecUseAuthenticationUISkip]) == (errSecItemNotFound, nil))
            #expect(read([kSecUseAuthenticationUI as String: "sometimes"]) == (errSecParam, nil))

            // A keychain whose user confirms: the secret, after one question.
            let directory = TemporaryDirectory()
            let database = try KeychainDatabase.create(
                at: directory.file("k.keychain"), passphrase: Passphrase("pw"), keyDerivation: .minimum)
            let confirming = Confirming("pw")
            SecItemConfiguration.connection = .service(
                LocalKeychainService(
                    database: database, caller: CallerIdentity(applicationIdentifier: "app"), presence: confirming))
            defer { memory.install() }
            #expect(add(try control([.biometryAny])) == errSecSuccess)
            #expect(read([kSecUseOperationPrompt as String: "Sign in"]) == (errSecSuccess, "s3cret"))
            #expect(confirming.asked.load(ordering: .relaxed) == 1)
            // Deleting never asks.
            #expect(SecItemDelete([kSecClass as String: kSecClassGenericPassword] as CFDictionary) == errSecSuccess)
            #expect(confirming.asked.load(ordering: .relaxed) == 1)
        }

        @Test func deleteTakesAnUnlimitedMatchLimitOnly() {
            for account in ["a", "b", "c"] {
                #expect(
                    SecItemAdd(
                        [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: account]
                            as CFDictionary, nil)
                        == errSecSuccess)
            }
            // KeychainAccess's removeAll(): kSecMatchLimitAll, as macOS-style code sends it.
            #expect(
                SecItemDelete(
                    [kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitOne]
                        as CFDictionary)
                    == errSecParam)
            #expect(
                SecItemDelete(
                    [kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: 2] as CFDictionary)
                    == errSecParam)
            #expect(
                SecItemDelete(
                    [kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll]
                        as CFDictionary)
                    == errSecSuccess)
            #expect(
                SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword] as CFDictionary, nil)
                    == errSecItemNotFound)
            #expect(
                SecItemDelete(
                    [kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll]
                        as CFDictionary)
                    == errSecItemNotFound)
        }

        @Test func aSynchronizableThisDeviceOnlyItemIsStored() {
            // KeychainAccess's suite adds one with try!: Apple stores it; it never leaves the device.
            #expect(
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "k",
                        kSecAttrSynchronizable as String: true,
                        kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
                        kSecValueData as String: Data("v".utf8),
                    ] as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassGenericPassword,
                        kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
                    ] as CFDictionary, nil) == errSecSuccess)
        }
    }
}
