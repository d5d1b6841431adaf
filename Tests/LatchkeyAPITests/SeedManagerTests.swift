import Foundation
import LatchkeySecurity
import LatchkeyTestSupport
import LatchkeyTesting
import SeedManagers
import Testing

extension GlobalSecItemTests {
    /// The four managers of the seed articles, ported to Swift, behave as the articles describe: save, load
    /// (nil when missing), overwrite, delete, delete when absent. They use the global SecItem functions, so
    /// the suite runs one test at a time.
    @Suite(.dedicatedThreads) struct SeedManagerTests {
        let memory: InMemoryKeychain

        init() {
            memory = InMemoryKeychain()
            memory.install()
        }

        @Test func zjKeyChainManagerStoresEnterpriseLogins() throws {
            #expect(ZJKeyChainManager.readLoginInfoFromKeyChain() == [])
            ZJKeyChainManager.saveLoginInfoToKeyChain(enterpriseID: "jit-001", account: "alice", password: "hunter2")
            #expect(ZJKeyChainManager.readLoginInfoFromKeyChain() == ["jit-001", "alice", "hunter2"])
            ZJKeyChainManager.saveLoginInfoToKeyChain(enterpriseID: "jit-002", account: "bob", password: "s3cret")
            #expect(ZJKeyChainManager.readLoginInfoFromKeyChain() == ["jit-002", "bob", "s3cret"])
            #expect(try memory.itemCount() == 1)
            ZJKeyChainManager.deleteLoginInfoFromKeyChain()
            #expect(ZJKeyChainManager.readLoginInfoFromKeyChain() == [])
            ZJKeyChainManager.deleteLoginInfoFromKeyChain()  // deleting again is harmless
            #expect(ZJKeyChainManager.load(ZJKeyChainManager.keyEnterpriseIDAccountPassword) == nil)
        }

        @Test func keyChainStoresAUserNamePasswordDictionary() throws {
            let pairs: NSDictionary = [KeyChain.keyUsername: "userName", KeyChain.keyPassword: "password"]
            KeyChain.save(KeyChain.keyUsernamePassword, data: pairs)
            let read = try #require(KeyChain.load(KeyChain.keyUsernamePassword) as? NSDictionary)
            #expect(read[KeyChain.keyUsername] as? String == "userName")
            #expect(read[KeyChain.keyPassword] as? String == "password")
            KeyChain.save(KeyChain.keyUsernamePassword, data: [KeyChain.keyUsername: "other"] as NSDictionary)
            #expect(
                (KeyChain.load(KeyChain.keyUsernamePassword) as? NSDictionary)?[KeyChain.keyUsername] as? String
                    == "other")
            KeyChain.delete(KeyChain.keyUsernamePassword)
            #expect(KeyChain.load(KeyChain.keyUsernamePassword) == nil)
            KeyChain.delete(KeyChain.keyUsernamePassword)
        }

        @Test func keychainToolStoresAToken() throws {
            #expect(KeychainTool.readKeychainValue("server.token") == nil)
            KeychainTool.saveKeychainValue("token-from-server", key: "server.token")
            #expect(KeychainTool.readKeychainValue("server.token") == "token-from-server")
            KeychainTool.saveKeychainValue("rotated-token", key: "server.token")
            #expect(KeychainTool.readKeychainValue("server.token") == "rotated-token")
            KeychainTool.deleteKeychainValue("server.token")
            #expect(KeychainTool.readKeychainValue("server.token") == nil)
            KeychainTool.deleteKeychainValue("server.token")
        }

        @Test func csKeyChainStoresTheLoginPassword() throws {
            #expect(CSKeyChain.readPassWord() == nil)
            CSKeyChain.savePassWord("p1")
            #expect(CSKeyChain.readPassWord() == "p1")
            CSKeyChain.savePassWord("p2")
            #expect(CSKeyChain.readPassWord() == "p2")
            CSKeyChain.deletePassWord()
            #expect(CSKeyChain.readPassWord() == nil)
            CSKeyChain.deletePassWord()
        }

        @Test func theManagersStoreAfterFirstUnlockItems() throws {
            KeychainTool.saveKeychainValue("t", key: "k")
            memory.lock()
            // kSecAttrAccessibleAfterFirstUnlock: readable while locked, as the articles rely on.
            #expect(KeychainTool.readKeychainValue("k") == "t")
        }
    }
}
