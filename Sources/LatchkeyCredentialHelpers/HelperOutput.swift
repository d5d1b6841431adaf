import Foundation
import Latchkey
import LatchkeyPOSIX

/// Where a helper writes: standard output (the protocol's answers) and standard error (messages for the
/// user). A reader that went away (`EPIPE`; SIGPIPE is ignored) is not an error of the helper's.
struct HelperOutput: Sendable {
    /// Writes bytes to standard output.
    let out: @Sendable ([UInt8]) -> Void
    /// Writes a line to standard error.
    let error: @Sendable (String) -> Void

    /// The process's standard output and error.
    static let standard = HelperOutput(
        out: { bytes in writeIgnoringClosedReader(.standardOutput, bytes) },
        error: { line in writeIgnoringClosedReader(.standardError, Array((line + "\n").utf8)) })

    private static func writeIgnoringClosedReader(_ fd: FileDescriptor, _ bytes: [UInt8]) {
        do {
            try fd.writeAll(bytes)
        } catch {
            // The reader closed its end (git gave up on the helper): there is no one left to tell.
        }
    }

    /// Writes text to standard output.
    func out(_ text: String) { out(Array(text.utf8)) }
}
