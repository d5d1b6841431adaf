import Foundation
import LatchkeyTestSupport
import Testing

/// Facts about the repository a reader depends on and that no compiler checks: every product builds in
/// release too, the README names every package the scripts install, and the scripts explain themselves.
@Suite struct RepositoryFactsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `@testable import` needs the imported module built with `-enable-testing`, which only debug builds
    /// are: a target that is not a test target and uses it breaks `swift build -c release` (the fuzzer did).
    @Test func onlyTestTargetsImportForTesting() throws {
        let testTargets = try FileManager.default.contentsOfDirectory(atPath: Self.root.path + "/Tests").filter {
            $0.hasSuffix("Tests")
        }
        var offenders: [String] = []
        for top in ["Sources", "Fuzz", "Examples", "Tests", "bench", "tools"] {
            guard let files = FileManager.default.enumerator(atPath: Self.root.path + "/" + top) else { continue }
            for case let file as String in files {
                // The ports harness's Swift files (tools/ports: shims, a suite's test entry point, and the
                // checked-out libraries in its git-ignored src/ and pkg/) are built only into the port
                // packages' tests, never by this package.
                if top == "tools", file == "ports" {
                    files.skipDescendants()
                    continue
                }
                guard file.hasSuffix(".swift") else { continue }
                if top == "Tests", let first = file.split(separator: "/").first, testTargets.contains(String(first)) {
                    continue
                }
                let text = try String(contentsOfFile: Self.root.path + "/" + top + "/" + file, encoding: .utf8)
                if text.split(separator: "\n").contains(where: { $0.hasPrefix("@testable import ") }) {
                    offenders.append(top + "/" + file)
                }
            }
        }
        #expect(offenders == [], "these build in release too, where @testable import fails")
    }

    /// OpenSSL's raw calls stay in the files of LatchkeyPKI/OpenSSL/ (one concern each): they, and only they,
    /// import COpenSSL, as the module's notes say.
    @Test func onlyTheFilesOfLatchkeyPKIOpenSSLImportCOpenSSL() throws {
        var importers: [String] = []
        for top in ["Sources", "Fuzz", "Examples", "Tests", "bench", "tools"] {
            guard let files = FileManager.default.enumerator(atPath: Self.root.path + "/" + top) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOfFile: Self.root.path + "/" + top + "/" + file, encoding: .utf8)
                let imports = text.split(separator: "\n").contains { line in
                    let words = line.split(separator: " ")
                    return words.last == "COpenSSL" && words.dropLast().last == "import"
                }
                if imports { importers.append(top + "/" + file) }
            }
        }
        let folder = try FileManager.default
            .contentsOfDirectory(atPath: Self.root.path + "/Sources/LatchkeyPKI/OpenSSL")
            .filter { $0.hasSuffix(".swift") }.map { "Sources/LatchkeyPKI/OpenSSL/" + $0 }
        #expect(folder.count > 1)
        #expect(importers.sorted() == folder.sorted())
    }

    /// Every package script/bootstrap installs (with --test too) is named in the README's list.
    @Test func theReadmeNamesEveryPackageTheScriptsInstall() throws {
        let bootstrap = try String(contentsOf: Self.root.appendingPathComponent("script/bootstrap"), encoding: .utf8)
        let lists = bootstrap.split(separator: "\n").filter { $0.contains("packages=(") || $0.contains("packages+=(") }
        let packages = lists.flatMap { line in
            line.split(separator: "(", maxSplits: 1).last!.split(separator: ")").first!.split(separator: " ").map(
                String.init)
        }
        #expect(packages.count > 20)
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let paragraph = try #require(
            readme.components(separatedBy: "Both install the Debian packages they need").dropFirst().first?
                .components(separatedBy: "when they are missing").first)
        for package in packages { #expect(paragraph.contains("`\(package)`"), "README does not name \(package)") }
    }

    @Test func scriptDemoExplainsItselfAndRunsNothingElse() throws {
        for flag in ["--help", "-h"] {
            let help = try HelperProcess.run(
                Self.root.path + "/script/demo", [flag], environment: ["PATH": "/usr/bin:/bin"])
            #expect(help.status == 0)
            #expect(
                help.stdout.hasPrefix("Usage: script/demo\n\nRuns Latchkey's main job on the embedded default keychain")
            )
            #expect(help.stderr == "", "nothing installed or built")
        }
        let wrong = try HelperProcess.run(
            Self.root.path + "/script/demo", ["--frob"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(wrong.status == 64)
        #expect(wrong.stderr.hasPrefix("script/demo: unexpected argument \"--frob\"\nUsage: script/demo\n"))
    }

    /// SwiftPM passes -color-diagnostics or -no-color-diagnostics to every compile depending on the terminal,
    /// and a changed flag rebuilds every module; NO_COLOR=1 makes it pass neither. Every build the scripts
    /// run sets it (through script/lib/swift-build.sh, or on the line), and the README's does too.
    @Test func everyBuildTheScriptsAndTheReadmeRunSetsNOCOLOR() throws {
        let scripts = try FileManager.default.contentsOfDirectory(atPath: Self.root.path + "/script").filter {
            $0 != "lib"
        }
        for name in scripts {
            let text = try String(contentsOfFile: Self.root.path + "/script/" + name, encoding: .utf8)
            let builds = text.split(separator: "\n").filter { line in
                (line.contains("swift build") || line.contains("swift package")) && !line.contains("NO_COLOR=1 swift ")
                    && !line.trimmingCharacters(in: .whitespaces).hasPrefix("#")
            }
            #expect(builds.isEmpty, "script/\(name) builds without NO_COLOR=1: \(builds)")
        }
        let library = try String(contentsOfFile: Self.root.path + "/script/lib/swift-build.sh", encoding: .utf8)
        #expect(
            library.split(separator: "\n").filter { $0.contains("swift build") && !$0.hasPrefix("#") } == [
                "    NO_COLOR=1 swift build \"$@\""
            ])
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        let readmeBuilds = blocks.flatMap { $0.split(separator: "\n") }.filter { $0.contains("swift build") }
        #expect(!readmeBuilds.isEmpty)
        for line in readmeBuilds { #expect(line.contains("NO_COLOR=1 swift build"), "\(line)") }
    }

    /// static_build drops the toolchain's mktemp warning and nothing else, and fails when the build fails
    /// (here with a stand-in `swift`, a shell function that prints what a static link prints: no file is
    /// written and run, which another test's child could keep busy).
    @Test(arguments: [0, 1])
    func staticBuildsDropOnlyTheToolchainsMktempWarning(_ status: Int) throws {
        let mktemp =
            "/opt/swift/usr/lib/swift_static/linux/libFoundationEssentials.a(Data+Writing.swift.o):_ThreadLocal.swift.o:"
            + "function $s20FoundationEssentials19createTemporaryFile: warning: the use of `mktemp' is dangerous, better use `mkstemp' or `mkdtemp'"
        let script = """
            set -euo pipefail
            swift() {
                echo "swift $* NO_COLOR=$NO_COLOR"
                cat >&2 <<'END'
            \(mktemp)
            Sources/x.swift:1:1: warning: ours, kept
            END
                return \(status)
            }
            source script/lib/swift-build.sh
            static_build --product latchkey-demo
            echo built
            """
        let output = try HelperProcess.run(
            "/bin/bash", ["-c", script], environment: ["PATH": "/usr/bin:/bin"], currentDirectory: Self.root.path)
        #expect(output.status == Int32(status))
        #expect(output.stdout == (status == 0 ? "built\n" : ""))
        #expect(
            output.stderr
                == "swift build -c release --static-swift-stdlib --disable-local-rpath --product latchkey-demo NO_COLOR=1\n"
                + "Sources/x.swift:1:1: warning: ours, kept\n")
    }
}
