import Foundation
import LatchkeySecurity
import LatchkeyTesting
import Testing

extension GlobalSecItemTests {
    /// What a query dictionary may carry besides its criteria, as Apple's keychain decides it.
    @Suite(.dedicatedThreads) struct SecItemQueryValueTests {
        let memory = InMemoryKeychain()
        init() { memory.install() }

        static var item: [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "mail",
                kSecAttrAccount as String: "alice", kSecValueData as String: Data("old".utf8),
            ]
        }

        func secret() -> Data? {
            var found: CFTypeRef?
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "mail",
                kSecReturnData as String: true,
            ]
            guard SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess else { return nil }
            return found as? Data
        }

        /// securityd's query parser (`SecDbQuery.c`, `query_add_value` → `query_set_data`) stores a
        /// query's `kSecValueData` whatever the operation, and `_SecItemUpdate` (`SecItemServer.c`) refuses
        /// only an item list and the `kSecReturn…` keys: so the whole add dictionary, secret included, is a
        /// valid update query, and the secret in it selects nothing — the item is found by its attributes.
        @Test func anUpdateQueryMayCarryTheItemsData() throws {
            #expect(SecItemAdd(Self.item as CFDictionary, nil) == errSecSuccess)
            let changes = [kSecValueData as String: Data("new".utf8)] as CFDictionary
            #expect(SecItemUpdate(Self.item as CFDictionary, changes) == errSecSuccess)
            #expect(secret() == Data("new".utf8))
            // The query still holds "old", which the item no longer has: it matches by attributes alone.
            #expect(
                SecItemUpdate(Self.item as CFDictionary, [kSecValueData as String: Data("newer".utf8)] as CFDictionary)
                    == errSecSuccess)
            #expect(secret() == Data("newer".utf8))
            // A search takes it as well, and it filters nothing there either.
            var found: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    Self.item.merging([kSecReturnData as String: true]) { _, new in new } as CFDictionary, &found)
                    == errSecSuccess)
            #expect(found as? Data == Data("newer".utf8))
        }

        /// `query_set_data` refuses a value that is not data ("set_data: value … is not type data",
        /// errSecItemInvalidValue, which `SecBasePriv.h` defines as errSecParam).
        @Test func aQueryValueThatIsNotDataIsParam() throws {
            #expect(SecItemAdd(Self.item as CFDictionary, nil) == errSecSuccess)
            var query = Self.item
            query[kSecValueData as String] = "old"
            #expect(SecItemUpdate(query as CFDictionary, [kSecAttrLabel as String: "x"] as CFDictionary) == errSecParam)
            #expect(SecItemDelete(query as CFDictionary) == errSecParam)
            #expect(secret() == Data("old".utf8))
        }

        /// `_SecItemUpdate` refuses a return type only when its bit is set, and `query_add_return` sets it
        /// for a true value only: `kSecReturnData: true` is errSecReturnDataUnsupported (errSecParam), false
        /// is no request at all.
        @Test func anUpdateRefusesOnlyAReturnItIsAskedFor() throws {
            #expect(SecItemAdd(Self.item as CFDictionary, nil) == errSecSuccess)
            let changes = [kSecAttrLabel as String: "labelled"] as CFDictionary
            for key in [kSecReturnData, kSecReturnAttributes, kSecReturnRef, kSecReturnPersistentRef] {
                let asking = Self.item.merging([key as String: true]) { _, new in new }
                #expect(SecItemUpdate(asking as CFDictionary, changes) == errSecParam)
                let declining = Self.item.merging([key as String: false]) { _, new in new }
                #expect(SecItemUpdate(declining as CFDictionary, changes) == errSecSuccess)
            }
        }

        /// `_SecItemDelete` (`SecItemServer.c`) checks the match limit, match keys, a value reference and a
        /// row id — never the return type — and the macOS shim's `SecItemDelete` prunes the `kSecReturn…`
        /// keys before the query goes on (`SecItemCopyTranslatedAttributes`, pruneReturn): a delete that
        /// asks for a result deletes and returns nothing.
        @Test func aDeleteIgnoresReturnKeys() throws {
            #expect(SecItemAdd(Self.item as CFDictionary, nil) == errSecSuccess)
            let query = Self.item.merging([
                kSecReturnData as String: true, kSecReturnAttributes as String: true,
                kSecReturnPersistentRef as String: true,
            ]) { _, new in new }
            #expect(SecItemDelete(query as CFDictionary) == errSecSuccess)
            #expect(secret() == nil)
            #expect(SecItemDelete(query as CFDictionary) == errSecItemNotFound)
            // A return key's value must still be a boolean (`query_add_return`: "value … is not CFBoolean").
            #expect(
                SecItemDelete(Self.item.merging([kSecReturnData as String: "yes"]) { _, new in new } as CFDictionary)
                    == errSecParam)
        }
    }
}
