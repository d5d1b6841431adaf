import Foundation
import LatchkeySecurity
import Testing

/// Every `errSec…` constant of Apple's `SecBase.h` has Apple's value, and `SecCopyErrorMessageString` gives
/// Apple's message: checked against the vendored table (Vendor/apple-security/errsec.tsv) line by line.
@Suite(.dedicatedThreads) struct SecBaseErrorTests {
    static let table: [(name: String, value: Int32, message: String)] = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text =
            (try? String(contentsOf: root.appendingPathComponent("Vendor/apple-security/errsec.tsv"), encoding: .utf8))
            ?? ""
        return text.split(separator: "\n").map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return (fields[0], Int32(fields[1]) ?? 0, fields.count > 2 ? fields[2] : "")
        }
    }()

    @Test func theTableIsWhole() {
        #expect(Self.table.count == 384)
    }

    @Test func everyMessageIsApples() {
        for (name, value, message) in Self.table where !message.isEmpty {
            #expect(SecCopyErrorMessageString(value, nil) as String? == message, "\(name)")
        }
        #expect(SecCopyErrorMessageString(-99_999, nil) as String? == "OSStatus -99999")
    }

    @Test func knownValues() {
        #expect(errSecSuccess == 0)
        #expect(errSecUnimplemented == -4)
        #expect(errSecParam == -50)
        #expect(errSecAllocate == -108)
        #expect(errSecUserCanceled == -128)
        #expect(errSecInternalComponent == -2070)
        #expect(errSecAuthFailed == -25293)
        #expect(errSecDuplicateItem == -25299)
        #expect(errSecItemNotFound == -25300)
        #expect(errSecInteractionNotAllowed == -25308)
        #expect(errSecDecode == -26275)
        #expect(errSecMissingEntitlement == -34018)
        #expect(errSecDskFull == errSecDiskFull)
        #expect(errSecMissingQualifiedCertStatement == -67904)
        #expect(errSecInternal == -26276, "Apple's private status Latchkey returns, declared beside the public ones")
    }
}
