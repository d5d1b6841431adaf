// ZJKeyChainManager, from the article "OC学习57：keyChain钥匙串存储" (shared/seeds/000), ported line by line
// from Objective-C to Swift over LatchkeySecurity: the same SecItem calls, the same dictionary, the same
// NSKeyedArchiver encoding. It stores an enterprise login (enterprise ID, account, password) under one
// service key. Like the original, `save` deletes and then adds; Latchkey's `Keychain.set` is the safe
// alternative (an atomic upsert).
import Foundation
import LatchkeySecurity

public enum ZJKeyChainManager {
    /// The service key of the login information.
    public static let keyEnterpriseIDAccountPassword = "cn.com.jit.DigitalGuard.enterpriseaccountpassword"
    /// Enterprise ID.
    public static let keyEnterpriseID = "cn.com.jit.DigitalGuard.enterpriseid"
    /// Account.
    public static let keyAccount = "cn.com.jit.DigitalGuard.account"
    /// Password.
    public static let keyPassword = "cn.com.jit.DigitalGuard.password"

    /// 创建一个字典，描述要存储的敏感数据 — the query describing the item.
    public static func getKeychainQuery(_ service: String) -> NSMutableDictionary {
        NSMutableDictionary(dictionary: [
            kSecClass: kSecClassGenericPassword,
            kSecAttrService: service,
            kSecAttrAccount: service,
            kSecAttrAccessible: kSecAttrAccessibleAfterFirstUnlock,
        ])
    }

    /// 写入 — save.
    public static func save(_ service: String, data: Any) {
        let keychainQuery = getKeychainQuery(service)
        // Delete old item before add new item
        SecItemDelete(keychainQuery)
        // Add new object to search dictionary (Attention: the data format)
        guard let archived = try? NSKeyedArchiver.archivedData(withRootObject: data, requiringSecureCoding: false)
        else {
            return
        }
        keychainQuery[kSecValueData] = archived
        SecItemAdd(keychainQuery, nil)
    }

    /// 读取 — load; nil when there is no item.
    public static func load(_ service: String) -> Any? {
        let keychainQuery = getKeychainQuery(service)
        keychainQuery[kSecReturnData] = kCFBooleanTrue
        keychainQuery[kSecMatchLimit] = kSecMatchLimitOne
        var keyData: CFTypeRef?
        guard SecItemCopyMatching(keychainQuery, &keyData) == noErr, let data = keyData as? Data else { return nil }
        return NSKeyedUnarchiver.unarchiveObject(with: data)
    }

    /// 删除 — delete.
    public static func delete(_ service: String) {
        SecItemDelete(getKeychainQuery(service))
    }

    /// 保存登录信息到钥匙串 — save the login information.
    public static func saveLoginInfoToKeyChain(enterpriseID: String, account: String, password: String) {
        let kvPair = NSMutableDictionary()
        kvPair[keyEnterpriseID] = enterpriseID
        kvPair[keyAccount] = account
        kvPair[keyPassword] = password
        save(keyEnterpriseIDAccountPassword, data: kvPair)
    }

    /// 读取钥匙串登录信息 — [enterprise ID, account, password], or an empty array when nothing is stored.
    public static func readLoginInfoFromKeyChain() -> [String] {
        guard let readKvPair = load(keyEnterpriseIDAccountPassword) as? NSDictionary else { return [] }
        return [keyEnterpriseID, keyAccount, keyPassword].compactMap { readKvPair[$0] as? String }
    }

    /// 删除钥匙串缓存登录信息 — delete the login information.
    public static func deleteLoginInfoFromKeyChain() {
        delete(keyEnterpriseIDAccountPassword)
    }
}
