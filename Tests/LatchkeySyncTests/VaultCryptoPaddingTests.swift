import Foundation
import LatchkeyCrypto
import LatchkeyEngine
import Testing

@testable import LatchkeySync

/// A row's content is padded with 0x80 then zeros to a multiple of `VaultCrypto.padding`: a record of any
/// length opens to exactly itself, and content whose padding is not there is errSecDecode, however it ends.
@Suite struct VaultCryptoPaddingTests {
    let vault = Data(repeating: 0x11, count: 16)
    let author = Data(repeating: 0x22, count: 16)
    let itemID = Data(repeating: 0x33, count: 16)
    let key = SecureBytes(randomCount: AEAD.keyLength, lifetime: .transient)

    var keyring: VaultKeyring {
        var keyring = VaultKeyring()
        keyring.insert(key, id: 1)
        return keyring
    }

    /// A row sealing `content` exactly as given (no padding added).
    func row(sealing content: Data) -> SyncEnvelope {
        let ad = VaultCrypto.associatedData(
            vault: vault, itemID: itemID, version: 1, deleted: false, keyID: 1, author: author)
        return SyncEnvelope(
            sequence: 1, itemID: itemID, version: 1, deleted: false, keyID: 1,
            ciphertext: AEAD.seal(content, key: key, associatedData: ad), author: author)
    }

    /// The layout every device seals under: "LKS1", vault, item, version (big-endian), deleted, key id
    /// (big-endian), author.
    @Test func theAssociatedDataIsTheRowsIdentityInOrder() {
        let ad = VaultCrypto.associatedData(
            vault: Data([1, 2]), itemID: Data([3]), version: 0x0102_0304_0506_0708, deleted: true, keyID: 0x0A0B_0C0D,
            author: Data([9, 9]))
        #expect(
            ad == Array("LKS1".utf8) + [1, 2, 3, 1, 2, 3, 4, 5, 6, 7, 8, 1, 0x0A, 0x0B, 0x0C, 0x0D, 9, 9])
    }

    @Test(arguments: [0, 1, 50, 62, 63, 64, 200])
    func aRecordOfAnyLengthOpensToItself(secretLength: Int) throws {
        let record = SyncRecord(
            itemID: itemID, version: 1, deleted: false, itemClass: .genericPassword,
            attributes: [.service: .string("s"), .account: .string("a")],
            data: Data(repeating: 0, count: secretLength))
        let sealed = VaultCrypto.seal(record, vault: vault, keyID: 1, key: key, author: author)
        #expect((sealed.ciphertext.count - AEAD.overhead) % VaultCrypto.padding == 0)
        let opened = try VaultCrypto.open(sealed, vault: vault, keyring: keyring)
        #expect(opened.attributes == record.attributes)
        #expect(opened.data == record.data)
    }

    @Test(arguments: [
        Data(), Data(repeating: 0, count: 64), Data([1, 2, 3]), Data([0x80, 1]), Data([1, 0x81, 0, 0]),
    ])
    func contentWithoutItsPaddingIsRefused(content: Data) {
        #expect(throws: KeychainError(.decode, "its content is not padded")) {
            try VaultCrypto.open(row(sealing: content), vault: vault, keyring: keyring)
        }
    }

    @Test func paddedContentThatIsNoRecordIsRefusedAsMalformed() {
        #expect(throws: KeychainError(.decode, "a synced item's content is malformed")) {
            try VaultCrypto.open(row(sealing: Data([1, 2, 0x80, 0, 0])), vault: vault, keyring: keyring)
        }
    }
}
