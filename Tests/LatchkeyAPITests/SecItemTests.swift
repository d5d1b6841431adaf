import Foundation
import Latchkey
import LatchkeySecurity
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

extension GlobalSecItemTests {
    /// Apple's API on Linux: code written for `Security` with an import change. These tests use the global
    /// `SecItem…` functions, whose configuration is process-wide, so they run one at a time.
    @Suite(.dedicatedThreads) struct SecItemTests {
        init() { InMemoryKeychain().install() }

        @Test func appleStyleCodeCompilesAndRuns() {
            // Written as on iOS: [String: Any] with kSec… keys, `as CFDictionary`, `CFTypeRef?` out-parameter.
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "com.example.app",
                kSecAttrAccount as String: "alice",
                kSecValueData as String: Data("hunter2".utf8),
            ]
            #expect(SecItemAdd(query as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(query as CFDictionary, nil) == errSecDuplicateItem)

            var item: CFTypeRef?
            let search: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "com.example.app",
                kSecReturnData as String: kCFBooleanTrue!,
                kSecMatchLimit as String: kSecMatchLimitOne,
            ]
            #expect(SecItemCopyMatching(search as CFDictionary, &item) == errSecSuccess)
            #expect(item as? Data == Data("hunter2".utf8))

            let update: [String: Any] = [kSecValueData as String: Data("new".utf8)]
            #expect(
                SecItemUpdate(
                    query.filter { $0.key != kSecValueData as String } as CFDictionary, update as CFDictionary)
                    == errSecSuccess)
            #expect(SecItemCopyMatching(search as CFDictionary, &item) == errSecSuccess)
            #expect(item as? Data == Data("new".utf8))

            #expect(
                SecItemDelete(
                    [kSecClass: kSecClassGenericPassword, kSecAttrService: "com.example.app"] as CFDictionary)
                    == errSecSuccess)
            #expect(SecItemCopyMatching(search as CFDictionary, &item) == errSecItemNotFound)
            #expect(SecItemDelete([kSecClass: kSecClassGenericPassword] as CFDictionary) == errSecItemNotFound)
        }

        @Test func resultsComeBackInAppleShapes() throws {
            let add: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                kSecAttrProtocol as String: kSecAttrProtocolHTTPS, kSecAttrPort as String: 443,
                kSecAttrAccount as String: "alice", kSecValueData as String: Data("pw".utf8),
                kSecReturnAttributes as String: true,
            ]
            var added: CFTypeRef?
            #expect(SecItemAdd(add as CFDictionary, &added) == errSecSuccess)
            let attributes = try #require(added as? [String: Any])
            #expect(attributes[kSecAttrServer as String] as? String == "example.com")
            #expect(attributes[kSecAttrPort as String] as? Int == 443)
            #expect(attributes[kSecAttrSynchronizable as String] as? NSNumber == 0)
            #expect(attributes[kSecAttrCreationDate as String] is Date)

            var all: CFTypeRef?
            let listing: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecReturnAttributes as String: true,
                kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
            ]
            #expect(SecItemCopyMatching(listing as CFDictionary, &all) == errSecSuccess)
            let items = try #require(all as? [[String: Any]])
            #expect(items.count == 1)
            #expect(items[0][kSecValueData as String] as? Data == Data("pw".utf8))
        }

        /// Apple's `SecItemResultProcess` (SecItem.c) drops the result when the caller's pointer is NULL
        /// (`require_action_quiet(result != NULL, out, ok = true)`): asking for a result without a pointer is
        /// no error — the add is done, the search says whether anything matches (as `SecKeyGeneratePair`'s
        /// `add_ref` relies on, storing a half with its parameters' `kSecReturnRef`).
        @Test func aResultRequestWithoutAPointerIsDropped() {
            let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecReturnData as String: true]
            #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecItemNotFound)
            #expect(
                SecItemAdd(
                    [
                        kSecClass: kSecClassGenericPassword, kSecValueData: Data("pw".utf8),
                        kSecReturnAttributes: kCFBooleanTrue!,
                    ] as CFDictionary, nil)
                    == errSecSuccess)
            #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecSuccess)
        }

        @Test func badInputGetsAppleStatusesAndADetail() {
            #expect(SecItemAdd([kSecAttrService: "s"] as CFDictionary, nil) == errSecParam)
            #expect(
                SecCopyLastErrorDetail()
                    == "One or more parameters passed to a function were not valid. (the query has no kSecClass)")
            #expect(SecItemAdd([kSecClass: "nope"] as CFDictionary, nil) == errSecNoSuchClass)
            #expect(
                SecItemAdd([kSecClass: kSecClassGenericPassword, "xxxx": "v"] as CFDictionary, nil) == errSecNoSuchAttr)
            #expect(
                SecItemAdd(
                    [kSecClass: kSecClassGenericPassword, kSecAttrAccessGroup: "com.other"] as CFDictionary, nil)
                    == errSecMissingEntitlement)
            #expect(
                SecItemDelete([kSecClass: kSecClassGenericPassword, kSecMatchLimit: kSecMatchLimitOne] as CFDictionary)
                    == errSecParam)
            #expect(
                SecItemAdd([kSecClass: kSecClassGenericPassword, kSecAttrService: "ok"] as CFDictionary, nil)
                    == errSecSuccess)
            #expect(SecCopyLastErrorDetail() == nil)
        }

        @Test func entitlementsComeFromTheConfiguration() {
            InMemoryKeychain().install(accessGroups: ["com.example.shared"])
            #expect(
                SecItemAdd(
                    [kSecClass: kSecClassGenericPassword, kSecAttrAccessGroup: "com.example.shared"] as CFDictionary,
                    nil)
                    == errSecSuccess)
        }

        @Test func lockedKeychainsAnswerInteractionNotAllowed() {
            let memory = InMemoryKeychain()
            memory.install()
            #expect(
                SecItemAdd([kSecClass: kSecClassGenericPassword, kSecAttrService: "s"] as CFDictionary, nil)
                    == errSecSuccess)
            memory.lock()
            var item: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [kSecClass: kSecClassGenericPassword, kSecReturnAttributes: true] as CFDictionary, &item)
                    == errSecInteractionNotAllowed)
        }

        @Test func errorMessagesAreApples() {
            #expect(
                SecCopyErrorMessageString(errSecItemNotFound, nil) as String?
                    == "The specified item could not be found in the keychain.")
            #expect(
                SecCopyErrorMessageString(errSecInteractionNotAllowed, nil) as String?
                    == "User interaction is not allowed.")
            #expect(SecCopyErrorMessageString(-99_999, nil) as String? == "OSStatus -99999")
        }

        @Test func constantsHaveApplesValues() {
            #expect(kSecClass as String == "class")
            #expect(kSecAttrAccessibleAfterFirstUnlock as String == "ck")
            #expect(kSecAttrProtocolFTP as String == "ftp ")
            #expect(kSecUseDataProtectionKeychain as String == "nleg")
            #expect(kSecAttrSynchronizableAny as String == "syna")
            #expect(errSecMissingEntitlement == -34018)
        }
    }
}
