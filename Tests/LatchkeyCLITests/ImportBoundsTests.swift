import Foundation
import LatchkeyTestSupport
import Testing

/// The second review's crafted imports (issue 30, point 5): files whose key derivations ask for 2³¹−1
/// iterations (minutes of CPU for a 1 KB file), a file to import of any size read whole, and a backup import
/// that zero-filled 2 GiB before reading 106 bytes. Each is refused before the work, or costs what the input
/// needs; nothing is added.
@Suite(.dedicatedThreads) struct ImportBoundsTests {
    let sandbox = CLISandbox()
    static let tools = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools").path

    /// The crafted files (`make-costly-files.py`), in the sandbox.
    func costlyFiles() throws -> String {
        let directory = sandbox.directory.file("costly")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let made = try HelperProcess.run(
            "/usr/bin/python3", [Self.tools + "/make-costly-files.py", directory, "fixture"])
        #expect(made.status == 0, "\(made.stderr)")
        return directory
    }

    @Test(arguments: [
        (
            "mac.p12",
            "the PKCS #12 file's MAC asks for 2147483647 iterations of its key derivation; at most 1000000 are accepted"
        ),
        (
            "encrypted.p12",
            "an encrypted part of the PKCS #12 file asks for 2147483647 iterations of its key derivation; at most 1000000 are accepted"
        ),
        (
            "shrouded.p12",
            "the PKCS #12 file's private key asks for 2147483647 iterations of its key derivation; at most 1000000 are accepted"
        ),
        (
            "pbkdf2-key.pem",
            "the encrypted private key asks for 2147483647 iterations of its key derivation; at most 1000000 are accepted"
        ),
        (
            "scrypt-key.pem",
            "the encrypted private key asks for an scrypt cost (N·r·p) of 536870912; at most 16777216 is accepted"
        ),
    ])
    func aKeyDerivationAskingForTooMuchWorkIsRefusedBeforeItRuns(_ name: String, _ reason: String) throws {
        try sandbox.createKeychain()
        let path = try costlyFiles() + "/" + name
        let refused = try sandbox.run("import", path, "--key-passphrase-fd", "0", input: "fixture\n")
        #expect(refused.status == 206, "\(refused.stderr)")  // errSecParam's low byte
        #expect(
            refused.stderr
                == "latchkey: import: One or more parameters passed to a function were not valid. (\(path): \(reason))\n"
        )
        #expect(try sandbox.run("find-certificate", "-a").stdout == "")
    }

    @Test func aFileTooLargeToImportIsRefusedBeforeItIsRead() throws {
        try sandbox.createKeychain()
        // Sparse: 17 MiB that take no disk.
        let path = sandbox.directory.file("huge.p12")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 17 << 20)
        try handle.close()
        let refused = try sandbox.run("import", path)
        #expect(refused.status == 206)
        #expect(
            refused.stderr == "latchkey: import: One or more parameters passed to a function were not valid. "
                + "(\(path) has 17825792 bytes; a file to import has at most 16 MiB)\n")
        let directory = try sandbox.run("import", sandbox.directory.path)
        #expect(
            directory.stderr == "latchkey: import: One or more parameters passed to a function were not valid. "
                + "(\(sandbox.directory.path) is not a regular file)\n", "\(directory.stderr)")
    }

    /// A small backup costs little memory to import: the reader no longer fills its 2 GiB limit with zeros
    /// first. (Peak resident memory of the `latchkey` process, from the kernel's accounting.)
    @Test func importingASmallBackupCostsWhatTheBackupNeeds() throws {
        try sandbox.createKeychain()
        #expect(
            try sandbox.run("add-generic-password", "-a", "alice", "-s", "mail", "-w", "first-password").status == 0)
        let backup = sandbox.directory.file("small.backup")
        let environment = sandbox.unattended.merging(["LATCHKEY_BACKUP_PASSPHRASE": "backup passphrase"]) { _, new in
            new
        }
        let exported = try sandbox.run(["export", "-o", backup], environment: environment)
        #expect(exported.status == 0, "\(exported.stderr)")
        let script =
            "import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
            + "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
        let run = try HelperProcess.run(
            "/usr/bin/python3", ["-c", script, sandbox.binary, "import", "-i", backup], environment: environment)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.first == "added 0, updated 0, skipped 1", "\(run.stdout)")
        let words = (lines.last ?? "").split(separator: " ").compactMap { Int($0) }
        #expect(words.count == 2 && words[0] == 0, "\(run.stdout) \(run.stderr)")
        let kilobytes = words.last ?? .max
        #expect(kilobytes < 256 << 10, "the import peaked at \(kilobytes >> 10) MiB resident")
    }
}
