import Foundation
import Latchkey
import LatchkeyEngine
import LatchkeyTestSupport
import Testing

@testable import LatchkeyEngine

/// Backups carry items' access lists (format 2): sealed with the items, restored onto the item each becomes
/// (added or replaced, not skipped), marked as restored; a format 1 backup (no lists) still opens.
@Suite struct AccessListBackupTests {
    let directory = TemporaryDirectory()
    static let tool = TrustedProgram.executable(path: "/usr/bin/tool", digest: Data(repeating: 7, count: 32))
    static let added = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func aBackupCarriesTheListsAndARestoreAppliesThem() throws {
        let items = [
            KeychainBackup.Item(
                itemClass: .genericPassword, attributes: [.service: .string("mail"), .account: .string("a")],
                data: Data("one".utf8),
                accessList: [
                    AccessListEntry(program: Self.tool, added: Self.added, origin: .answer),
                    AccessListEntry(program: .sandbox(appID: "org.example.App"), added: Self.added, origin: .command),
                ]),
            KeychainBackup.Item(
                itemClass: .genericPassword, attributes: [.service: .string("web"), .account: .string("a")],
                data: Data("two".utf8)),
        ]
        let sealed = try KeychainBackup.seal(items, passphrase: Passphrase("backup"), keyDerivation: .minimum)
        #expect(sealed[8] == 2, "format 2")
        #expect(try KeychainBackup.open(sealed, passphrase: Passphrase("backup")) == items)

        let keychain = try Fixture.newKeychain(in: directory)
        let summary = try keychain.restore(items, onConflict: .skip, caller: Fixture.app)
        #expect(summary == RestoreSummary(added: 2, updated: 0, skipped: 0))
        let lists = try keychain.accessLists()
        #expect(lists.map(\.summary) == ["service=mail account=a"])
        #expect(
            lists.first?.entries == [
                AccessListEntry(program: Self.tool, added: Self.added, origin: .backup),
                AccessListEntry(program: .sandbox(appID: "org.example.App"), added: Self.added, origin: .backup),
            ])

        // Skipped: the list stays as it is; replaced: the backup's entries join it.
        let mail = try #require(lists.first?.reference)
        try keychain.revokeAccess(of: Self.tool, onItem: mail)
        _ = try keychain.restore(items, onConflict: .skip, caller: Fixture.app)
        #expect(try keychain.accessList(of: mail).count == 1)
        let replaced = try keychain.restore(items, onConflict: .replace, caller: Fixture.app)
        #expect(replaced == RestoreSummary(added: 0, updated: 2, skipped: 0))
        #expect(try keychain.accessList(of: mail).count == 2)
    }

    @Test func aFormatOneBackupStillOpens() throws {
        var payload = ByteWriter(capacity: 64)
        payload.append(UInt32(1))
        payload.appendField(ItemClass.genericPassword.rawValue)
        payload.appendField(AttributeBlob.encode([.service: .string("mail")]))
        payload.append(1 as UInt8)
        payload.appendField(Data("one".utf8))
        #expect(
            try KeychainBackup.parsePayload(payload.data, format: 1) == [
                KeychainBackup.Item(
                    itemClass: .genericPassword, attributes: [.service: .string("mail")], data: Data("one".utf8))
            ])
        let refused = #expect(throws: KeychainError.self) { try KeychainBackup.parsePayload(payload.data, format: 2) }
        #expect(refused?.status == .decode, "a format 1 payload lacks the lists a format 2 one has")
    }
}
