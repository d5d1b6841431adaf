// KeychainTool, from the article on storing a server token instead of NSUserDefaults or AES with a key in
// the code (shared/seeds/003), ported to Swift over LatchkeySecurity. It stores one string per key.
import Foundation
import LatchkeySecurity

public enum KeychainTool {
    static func getKeychainQuery(_ service: String) -> NSMutableDictionary {
        NSMutableDictionary(dictionary: [
            kSecClass: kSecClassGenericPassword,
            kSecAttrService: service,
            kSecAttrAccount: service,
            kSecAttrAccessible: kSecAttrAccessibleAfterFirstUnlock,
        ])
    }

    /// 儲存字符串到鑰匙串 — stores `sValue` under `sKey`.
    public static func saveKeychainValue(_ sValue: String, key sKey: String) {
        let keychainQuery = getKeychainQuery(sKey)
        SecItemDelete(keychainQuery)
        guard let archived = try? NSKeyedArchiver.archivedData(withRootObject: sValue, requiringSecureCoding: false)
        else {
            return
        }
        keychainQuery[kSecValueData] = archived
        SecItemAdd(keychainQuery, nil)
    }

    /// 從鑰匙串獲取字符串 — the string under `sKey`, or nil.
    public static func readKeychainValue(_ sKey: String) -> String? {
        let keychainQuery = getKeychainQuery(sKey)
        keychainQuery[kSecReturnData] = kCFBooleanTrue
        keychainQuery[kSecMatchLimit] = kSecMatchLimitOne
        var keyData: CFTypeRef?
        guard SecItemCopyMatching(keychainQuery, &keyData) == noErr, let data = keyData as? Data else { return nil }
        return NSKeyedUnarchiver.unarchiveObject(with: data) as? String
    }

    /// 從鑰匙串刪除字符串 — deletes the string under `sKey`.
    public static func deleteKeychainValue(_ sKey: String) {
        SecItemDelete(getKeychainQuery(sKey))
    }
}
