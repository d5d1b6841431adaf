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
