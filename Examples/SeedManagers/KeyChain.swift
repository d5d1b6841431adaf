// KeyChain, from "iOS开发小点之--使用Keychain保存用户名密码" (shared/seeds/002), ported to Swift over
// LatchkeySecurity. It keeps a dictionary of user name and password under one service key.
import Foundation
import LatchkeySecurity

public enum KeyChain {
    /// The keys the article uses.
    public static let keyUsernamePassword = "com.company.app.usernamepassword"
    /// User name.
    public static let keyUsername = "com.company.app.username"
    /// Password.
    public static let keyPassword = "com.company.app.password"

    static func getKeychainQuery(_ service: String) -> NSMutableDictionary {
        NSMutableDictionary(dictionary: [
            kSecClass: kSecClassGenericPassword,
            kSecAttrService: service,
            kSecAttrAccount: service,
            kSecAttrAccessible: kSecAttrAccessibleAfterFirstUnlock,
        ])
    }

    /// Saves `data` (archived with NSKeyedArchiver) under `service`, replacing what was there.
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

    /// The object stored under `service`, or nil.
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
}
