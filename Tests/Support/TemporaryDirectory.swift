import Foundation
import Latchkey
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A private temporary directory (mode 0700), removed when the value is released.
public final class TemporaryDirectory: @unchecked Sendable {
    // @unchecked: immutable after init.
    public let path: String

    public init() {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).standardizedFileURL.path
        var template = Array((base + "/latchkey-test-XXXXXX").utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil, "mkdtemp failed")
        path = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
    }

    public func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The status of a thrown `KeychainError`, or nil when `body` does not throw.
public func status(_ body: () throws -> Void) -> KeychainStatus? {
    do {
        try body()
        return nil
    } catch let error as KeychainError {
        return error.status
    } catch let failure as KeychainFailure {
        return failure.status
    } catch {
        Issue.record("unexpected error type: \(error)")
        return nil
    }
}

/// Every file below `directory` (recursively) that holds one of `needles` in UTF-8, as "needle in file" —
/// for the tests that prove no secret, label or attribute value reaches the disk in plaintext.
public func plaintextsFound(_ needles: [String], under directory: String) throws -> [String] {
    var found: [String] = []
    let enumerator = FileManager.default.enumerator(atPath: directory)
    while let name = enumerator?.nextObject() as? String {
        let path = directory + "/" + name
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            continue
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        for needle in needles where bytes.range(of: Data(needle.utf8)) != nil { found.append("\(needle) in \(name)") }
    }
    return found
}
