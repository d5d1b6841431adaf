import Foundation
import LatchkeyTestSupport
import Testing

/// The README's `Package.swift` for a package that uses Latchkey, loaded by SwiftPM as a user's package
/// (`swift package show-dependencies` resolves the dependency and checks every product it names): as
/// printed, beside a clone in `../latchkey`, and beside a clone in a folder of another name.
@Suite(.dedicatedThreads) struct ReadmePackageManifestTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func manifest() throws -> String {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map {
            $0.components(separatedBy: "```")[0]
        }
        return try #require(blocks.first { $0.contains("import PackageDescription") })
    }

    /// A user's package with `manifest` in `directory/MailSync`, and what SwiftPM says of it.
    func load(_ manifest: String, in directory: TemporaryDirectory) throws -> HelperProcess.Output {
        let package = directory.file("MailSync")
        for folder in ["Sources/MailSync", "Tests/MailSyncTests"] {
            try FileManager.default.createDirectory(atPath: package + "/" + folder, withIntermediateDirectories: true)
        }
        try "import Latchkey\n".write(
            toFile: package + "/Sources/MailSync/main.swift", atomically: true, encoding: .utf8)
        try "import LatchkeyTesting\n".write(
            toFile: package + "/Tests/MailSyncTests/MailSyncTests.swift", atomically: true, encoding: .utf8)
        try manifest.write(toFile: package + "/Package.swift", atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = directory.path
        return try HelperProcess.run(
            "/usr/bin/env", ["swift", "package", "show-dependencies"], environment: environment,
            timeout: 300, currentDirectory: package)
    }

    @Test(arguments: ["latchkey", "latchkey-main"])
    func theManifestLoadsBesideACloneInAFolderOfAnyName(_ folder: String) throws {
        let directory = TemporaryDirectory()
        // The clone: this repository, through a symbolic link of that name (SwiftPM takes the link's name).
        try FileManager.default.createSymbolicLink(atPath: directory.file(folder), withDestinationPath: Self.root.path)
        let manifest = try Self.manifest().replacingOccurrences(
            of: #"path: "../latchkey""#, with: #"path: "../\#(folder)""#)
        let output = try load(manifest, in: directory)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(!output.stderr.contains("error"), "\(output.stderr)")
        #expect(output.stdout.contains("<\(directory.file(folder))@"), "\(output.stdout)")
    }

    @Test func withoutNameAFolderOfAnotherNameIsAnotherPackage() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createSymbolicLink(
            atPath: directory.file("latchkey-main"), withDestinationPath: Self.root.path)
        let manifest = try Self.manifest().replacingOccurrences(
            of: #".package(name: "latchkey", path: "../latchkey")"#,
            with: #".package(path: "../latchkey-main")"#)
        let output = try load(manifest, in: directory)
        #expect(output.status == 1)
        #expect(
            output.stderr.contains("unknown package 'latchkey' in dependencies of target 'MailSync'"),
            "\(output.stderr)")
    }
}
