import Foundation
import LatchkeyPOSIX
import LatchkeyTestSupport
import Testing

/// What the programs load at start: libpq (and the Kerberos, LDAP and TLS libraries it brings) is loaded by
/// sync when it first connects, libsystemd by the first D-Bus connection, tpm2-tss's five libraries by the
/// first use of the TPM, and libcrypto, SQLite and libsodium by their first call, never linked — linked,
/// libpq and libsystemd cost every `latchkey` command about 6 ms and 3 ms, and the other three about 1.9 ms.
@Suite(.dedicatedThreads) struct LinkedLibraryTests {
    /// The shared libraries an executable names (`DT_NEEDED`), as `readelf -d` prints them.
    func needed(_ product: String) throws -> [String] {
        let output = try HelperProcess.run("/usr/bin/readelf", ["-d", HelperProcess.product(product)])
        #expect(output.status == 0, "\(output.stderr)")
        return output.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
            guard let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }

    @Test(arguments: ["latchkey", "latchkeyd"])
    func noProgramLinksALibraryItLoadsOnFirstUse(_ product: String) throws {
        let libraries = try needed(product)
        #expect(libraries.contains("libc.so.6"), "\(libraries)")  // The list was read.
        let loaded = ["libpq", "libsystemd", "libtss2", "libcrypto", "libssl", "libsqlite3", "libsodium"]
        #expect(!libraries.contains { library in loaded.contains { library.hasPrefix($0) } }, "\(libraries)")
    }

    /// The tool's and the agent's modules import FoundationEssentials only: swift-corelibs-foundation (with
    /// CoreFoundation and ICU) is not linked into `latchkey` nor `latchkeyd` — in this debug build, no
    /// libFoundation.so; in the static release build, none of its symbols (docs/DESIGN-NOTES.md, "The CLI's
    /// start" and "A cold D-Bus activation").
    @Test(arguments: ["latchkey", "latchkeyd"])
    func noProgramLinksFoundationBeyondItsEssentials(_ product: String) throws {
        let libraries = try needed(product)
        #expect(libraries.contains("libFoundationEssentials.so"), "\(libraries)")  // The list was read.
        let heavy = ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so"]
        #expect(!libraries.contains { heavy.contains($0) }, "\(libraries)")
    }

    /// With SQLite hidden (bubblewrap binds an empty file over it), a command that never opens a keychain still
    /// runs; one that does stops at its first SQLite call with the loader's line and an abort — what the
    /// dynamic loader did at start when SQLite was linked, only later.
    @Test func aHardDependencyThatCannotBeLoadedStopsOnlyTheCommandThatCallsIt() throws {
        let sandbox = CLISandbox()
        let sqlite = URL(fileURLWithPath: "/lib/x86_64-linux-gnu/libsqlite3.so.0").resolvingSymlinksInPath().path
        let hidden = ["--unshare-user", "--die-with-parent", "--bind", "/", "/", "--ro-bind", "/dev/null", sqlite]
        let version = try HelperProcess.run(
            "/usr/bin/bwrap", hidden + [sandbox.binary, "--version"], environment: sandbox.unattended)
        #expect(version.status == 0, "\(version.stderr)")
        #expect(version.stdout.hasPrefix("latchkey "))
        #expect(version.stderr == "")
        let create = try HelperProcess.run(
            "/usr/bin/bwrap", hidden + [sandbox.binary, "create-keychain", "--kdf-memory", "19", "--kdf-passes", "2"],
            environment: sandbox.unattended)
        #expect(create.status == 128 + SIGABRT)
        let lines = create.stderr.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "fatal error: libsqlite3.so.0 (Debian's libsqlite3-0) cannot be loaded: libsqlite3.so.0: "
                + "cannot open shared object file: No such file or directory",
            "\(create.stderr)")
    }

    /// With an optional library hidden, the command that needs it says so in its own words — an error, or
    /// `tpm status`'s report that the TPM is absent — naming the library, its Debian package and the loader's
    /// message (`latchkey_<module>_unavailable()`), and aborts nothing.
    @Test(arguments: [
        (
            "libtss2-esys.so.0", ["tpm", "status"],
            "tpm: swtpm:host=127.0.0.1,port=1 (absent: tpm2-tss is not installed: libtss2-esys.so.0 (Debian's "
                + "libtss2-esys-3.0.2-0): libtss2-esys.so.0: cannot open shared object file: No such file or directory)\n"
        ),
        (
            "libsystemd.so.0", ["import", "--from-secret-service"],
            "libsystemd.so.0 (Debian's libsystemd0): "
        ),
    ])
    func anOptionalLibraryThatCannotBeLoadedIsTheCommandsError(_ library: String, _ words: [String], _ message: String)
        throws
    {
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        let path = URL(fileURLWithPath: "/lib/x86_64-linux-gnu/" + library).resolvingSymlinksInPath().path
        let hidden = ["--unshare-user", "--die-with-parent", "--bind", "/", "/", "--ro-bind", "/dev/null", path]
        var environment = sandbox.unattended
        environment["LATCHKEY_TPM_TCTI"] = "swtpm:host=127.0.0.1,port=1"
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        let run = try HelperProcess.run("/usr/bin/bwrap", hidden + [sandbox.binary] + words, environment: environment)
        #expect(run.status != 128 + SIGABRT, "\(run.stderr)")
        #expect((run.stdout + run.stderr).contains(message), "\(run.stdout)\(run.stderr)")
    }
}
