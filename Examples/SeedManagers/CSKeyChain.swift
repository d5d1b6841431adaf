// CSKeyChain, from "如何储存用户的一些敏感信息，比如登录Token" (shared/seeds/004), ported to Swift over
// LatchkeySecurity, with the article's password helpers.
import Foundation
import LatchkeySecurity

public enum CSKeyChain {
    /// 用来标识这个钥匙串 — the service key.
    public static let keyInKeychain = "com.cs.app.allinfo"
    /// 用来标识密码 — the password's key inside the stored dictionary.
    public static let keyPassword = "com.cs.app.password"

    /// The query describing the item.
    public static func getKeychainQuery(_ service: String) -> NSMutableDictionary {
        NSMutableDictionary(dictionary: [
            kSecClass: kSecClassGenericPassword,
            kSecAttrService: service,
            kSecAttrAccount: service,
            kSecAttrAccessible: kSecAttrAccessibleAfterFirstUnlock,
        ])
    }

    /// Saves `data` under `service` (delete, then add, as in the article).
    public static func save(_ service: String, data: Any) {
        let keychainQuery = getKeychainQuery(service)
        SecItemDelete(keychainQuery)
        guard let archived = try? NSKeyedArchiver.archivedData(withRootObject: data, requiringSecureCoding: false)
        else {
            return
        }
        keychainQuery[kSecValueData] = archived
        SecItemAdd(keychainQuery, nil)
    }

    /// The object under `service`, or nil.
    public static func load(_ service: String) -> Any? {
        let keychainQuery = getKeychainQuery(service)
        keychainQuery[kSecReturnData] = kCFBooleanTrue
        keychainQuery[kSecMatchLimit] = kSecMatchLimitOne
        var keyData: CFTypeRef?
        guard SecItemCopyMatching(keychainQuery, &keyData) == noErr, let data = keyData as? Data else { return nil }
        return NSKeyedUnarchiver.unarchiveObject(with: data)
    }

    /// Deletes the item under `service`.
    public static func delete(_ service: String) {
        SecItemDelete(getKeychainQuery(service))
    }

    /// Stores the login password.
    public static func savePassWord(_ password: String) {
        let passwordDict = NSMutableDictionary()
        passwordDict[keyPassword] = password
        save(keyInKeychain, data: passwordDict)
    }

    /// The stored login password, or nil.
    public static func readPassWord() -> String? {
        (load(keyInKeychain) as? NSDictionary)?[keyPassword] as? String
    }

    /// Deletes the login password.
    public static func deletePassWord() {
        delete(keyInKeychain)
    }
}
