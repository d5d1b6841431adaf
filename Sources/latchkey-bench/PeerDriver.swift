import Foundation

/// Runs one of bench/'s Python drivers with `python` (Debian's /usr/bin/python3 by default: the drivers that use
/// D-Bus need its python3-dbus) and returns what it printed; a failure ends the benchmark.
func driverOutput(python: String, script: String, _ arguments: [String]) throws -> Data {
    guard FileManager.default.isExecutableFile(atPath: python), FileManager.default.fileExists(atPath: script) else {
        fail("needs \(python) and \(script): run it from the repository after script/install-peers")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [script] + arguments
    process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
    let output = Pipe()
    process.standardOutput = output
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { fail("\(script) failed (exit status \(process.terminationStatus))") }
    return data
}

/// What the peer drivers that compare providers print: per provider, per workload, the samples in
/// nanoseconds; and figures about the run (fill times, key derivation) under `notes`.
struct ProviderDriverOutput: Decodable {
    let results: [String: [String: [Double]]]
    let notes: [String: Double]
}
