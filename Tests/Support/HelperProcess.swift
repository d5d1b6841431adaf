import Foundation

/// Runs the `latchkey-test-helper` executable that SwiftPM builds beside the test bundle.
public enum HelperProcess {
    public static var executable: String { product("latchkey-test-helper") }

    /// An executable SwiftPM built beside the test bundle.
    public static func product(_ name: String) -> String {
        let testBinary = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: testBinary).deletingLastPathComponent().appendingPathComponent(name).path
    }

    public struct Output: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// Runs the helper to completion.
    public static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> Output {
        try run(executable, arguments, environment: environment)
    }

    /// Runs an executable to completion, feeding `input` to its standard input.
    public static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil,
                           input: Data? = nil) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        // Feed the input from another thread so a large input cannot deadlock against a full output pipe.
        let writer = Thread {
            if let input { stdin.fileHandleForWriting.write(input) }
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }
}
