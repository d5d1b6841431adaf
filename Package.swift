// swift-tools-version: 6.2
import PackageDescription

/// Settings every Swift target shares: Swift 6 language mode (strict concurrency) and warnings as errors.
let commonSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .treatAllWarnings(as: .error),
]
/// Library and tool code also makes every import internal unless marked otherwise.
let strictSettings = commonSettings + [.enableUpcomingFeature("InternalImportsByDefault")]

let package = Package(
    name: "Latchkey",
    products: [
        .library(name: "Latchkey", targets: ["Latchkey", "LatchkeyFoundationValues"]),
        .library(name: "LatchkeySecurity", targets: ["LatchkeySecurity"]),
        // `import Security` on Linux (LatchkeySecurity re-exported), for packages that keep Apple's import.
        .library(name: "Security", targets: ["Security"]),
        .library(name: "LatchkeyTesting", targets: ["LatchkeyTesting"]),
        .executable(name: "latchkey", targets: ["latchkey"]),
        .executable(name: "latchkeyd", targets: ["latchkeyd"]),
        .executable(name: "git-credential-latchkey", targets: ["git-credential-latchkey"]),
        .executable(name: "docker-credential-latchkey", targets: ["docker-credential-latchkey"]),
    ],
    targets: [
        // C libraries from Debian's packages; each is imported by exactly one Swift module. None is linked: each
        // module loads its library when first used, through the `latchkey_` wrappers of its shim's loader.h
        // (tools/generate-loaders writes those of libsodium, SQLite and libcrypto), so a program pays at start
        // only for the libraries it calls. No pkgConfig either, which would link the library; the headers are in
        // /usr/include.
        // libsodium's headers only (Debian's libsodium-dev); LatchkeyCrypto loads libsodium.so.23.
        .systemLibrary(name: "CSodium", path: "Sources/CSodium"),
        // SQLite's headers only (Debian's libsqlite3-dev); LatchkeyStorage loads libsqlite3.so.0.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        // sd-bus's headers only (Debian's libsystemd-dev): LatchkeyDBus loads libsystemd.so.0 at its first bus.
        .systemLibrary(name: "CSystemd", path: "Sources/CSystemd"),
        // OpenSSL's headers only (Debian's libssl-dev); LatchkeyPKI's OpenSSL/ files load libcrypto.so.3.
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL"),
        // libpq's headers only (Debian's libpq-dev): LatchkeySync loads libpq.so.5 when it first connects,
        // so no program that links it pays for libpq's dependencies at start.
        .systemLibrary(name: "CPostgres", path: "Sources/CPostgres"),
        // tpm2-tss's headers only (Debian's libtss2-dev): ESAPI, the TCTI loader, marshalling and response codes,
        // imported by LatchkeyTPM alone, which loads the libraries when the TPM is first used (CTSS2/loader.h).
        .systemLibrary(name: "CTSS2", path: "Sources/CTSS2"),
        // The libc calls Swift cannot make (variadic prctl, SO_PEERCRED/SO_PASSCRED, CMSG macros), in C.
        .target(name: "CPOSIX"),
        // The POSIX layer: files, Unix sockets, processes, spawning, terminal, hex — libc behind Swift names.
        .target(name: "LatchkeyPOSIX", dependencies: ["CPOSIX"]),
        // D-Bus through sd-bus: the only importer of libsystemd (the agent's sleep watcher; the Secret Service).
        .target(name: "LatchkeyDBus", dependencies: ["CSystemd", "LatchkeyPOSIX"]),

        .target(name: "LatchkeyCrypto", dependencies: ["CSodium", "LatchkeyPOSIX"]),
        .target(name: "LatchkeyStorage", dependencies: ["CSQLite", "LatchkeyPOSIX"]),
        // The TPM 2.0 through tpm2-tss: salted sessions to a pinned storage key, sealing, PCRs, lockout.
        .target(name: "LatchkeyTPM", dependencies: ["CTSS2", "LatchkeyCrypto", "LatchkeyPOSIX"]),
        // Certificates (and later keys and trust) on OpenSSL's libcrypto: the only importer of COpenSSL.
        .target(name: "LatchkeyPKI", dependencies: ["COpenSSL", "LatchkeyCrypto"]),
        // The engine: the item model, the encrypted store and its persistence, with Apple's semantics.
        .target(name: "LatchkeyEngine", dependencies: ["LatchkeyCrypto", "LatchkeyStorage", "LatchkeyPOSIX", "LatchkeyPKI", "LatchkeyTPM"]),
        // The agent's protocol, shared by the agent and its client (package access): framing, the greeting,
        // typed messages, where the socket is and whether it may be trusted.
        .target(name: "LatchkeyProtocol", dependencies: ["LatchkeyEngine", "LatchkeyPOSIX", "LatchkeyPKI"]),
        // The library users import: the engine re-exported, the service seam (in process or through the
        // agent), the SecItem dictionary layer and the friendly API.
        .target(name: "Latchkey", dependencies: ["LatchkeyEngine", "LatchkeyProtocol", "LatchkeyCrypto", "LatchkeyPOSIX", "LatchkeyPKI"]),
        // Foundation's NSNumber and NSNull as the dictionary layer reads them: linked by the two products, not by
        // the tools, so that Latchkey itself links no swift-corelibs-foundation.
        .target(name: "LatchkeyFoundationValues", dependencies: ["Latchkey"]),
        .target(name: "LatchkeySecurity", dependencies: ["Latchkey", "LatchkeyFoundationValues", "LatchkeyCrypto"]),
        .target(name: "Security", dependencies: ["LatchkeySecurity"]),
        .target(name: "LatchkeyTesting", dependencies: ["Latchkey", "LatchkeySecurity"]),

        // The command-line tool: the commands live in a library so tests and fuzzers can run them in-process.
        .target(name: "LatchkeyCLI", dependencies: ["Latchkey", "LatchkeyPOSIX", "LatchkeyDBus", "LatchkeySync", "LatchkeySSH", "LatchkeyCrypto", "LatchkeyFormats"]),
        .executableTarget(
            name: "latchkey", dependencies: ["LatchkeyCLI", "LatchkeyPOSIX"],
            // The CLI's start (docs/DESIGN-NOTES.md): no exported symbols for the dynamic loader to look
            // through, and its 40,000 relative relocations packed (DT_RELR, glibc 2.36; linked by lld, as
            // gold cannot pack them): 940 KB of relocation entries the loader read at every start, now 8 KB.
            linkerSettings: [
                .unsafeFlags([
                    "-use-ld=lld", "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker",
                    "pack-relative-relocs",
                ])
            ]),

        // Other programs' files, read and written: GNOME Keyring's keyring files, KeePass's KDBX 4 and 3.1, `pass`
        // stores and browsers' CSV exports (`import --from`, `export --to`), in Swift over LatchkeyCrypto and
        // LatchkeyPKI (no C of its own: Argon2d, DEFLATE and KeePass's XML are here).
        .target(name: "LatchkeyFormats", dependencies: ["LatchkeyEngine", "LatchkeyCrypto", "LatchkeyPKI", "LatchkeyPOSIX"]),
        // The SSH agent protocol and OpenSSH's key formats, over keychain key items: the front end latchkeyd serves
        // on its ssh-agent socket and `latchkey ssh-key` imports through.
        .target(name: "LatchkeySSH", dependencies: ["LatchkeyEngine", "LatchkeyPKI", "LatchkeyCrypto"]),
        // The agent: holds the unlocked keys and decides which program sees which items.
        // The Secret Service provider (org.freedesktop.secrets) that latchkeyd runs with --secret-service.
        // End-to-end-encrypted sync through PostgreSQL: the only importer of libpq (CPostgres).
        .target(name: "LatchkeySync", dependencies: ["CPostgres", "LatchkeyEngine", "LatchkeyCrypto", "LatchkeyPOSIX"]),
        // The gate every front end passes a caller through: the process pinned, and who it is attested as
        // (sandbox app ID, LSM label, executable, or unidentified); the policy stays in the agent.
        .target(name: "LatchkeyCaller", dependencies: ["LatchkeyPOSIX", "LatchkeyCrypto"]),
        .target(name: "LatchkeySecretService", dependencies: ["LatchkeyCaller", "LatchkeyEngine", "LatchkeyDBus", "LatchkeyPKI", "LatchkeyCrypto", "LatchkeyPOSIX"]),
        .target(name: "LatchkeyAgent", dependencies: ["LatchkeyCaller", "LatchkeyEngine", "LatchkeyProtocol", "LatchkeyCrypto", "LatchkeyPOSIX", "LatchkeyDBus", "LatchkeyPKI", "LatchkeySecretService", "LatchkeySync", "LatchkeySSH"]),
        .executableTarget(name: "latchkeyd", dependencies: ["LatchkeyEngine", "LatchkeyProtocol", "LatchkeyAgent", "LatchkeyPOSIX"]),

        // The git and docker credential helpers: each protocol translated to the one seam and back (no engine
        // logic here), in a library so both executables stay a `main` each.
        .target(name: "LatchkeyCredentialHelpers", dependencies: ["Latchkey", "LatchkeyCrypto", "LatchkeyPOSIX"]),
        .executableTarget(name: "git-credential-latchkey", dependencies: ["LatchkeyCredentialHelpers"]),
        .executableTarget(name: "docker-credential-latchkey", dependencies: ["LatchkeyCredentialHelpers"]),

        // Benchmarks: Latchkey beside the raw SQLite + libsodium floor and beside peer tools.
        .executableTarget(name: "latchkey-bench", dependencies: ["Latchkey", "LatchkeyCrypto", "LatchkeyStorage", "LatchkeyPKI", "LatchkeyProtocol", "LatchkeyPOSIX", "LatchkeySync", "LatchkeyTPM", "LatchkeyFormats", "LatchkeyDBus"]),

        // libFuzzer targets (script/fuzz); built normally, a replayer of the committed corpus for the tests.
        .executableTarget(
            name: "latchkey-fuzz",
            dependencies: ["Latchkey", "LatchkeyEngine", "LatchkeyProtocol", "LatchkeyCLI", "LatchkeyPKI", "LatchkeySSH", "LatchkeyFormats", "LatchkeyCrypto"],
            path: "Fuzz/latchkey-fuzz"),

        // The four keychain managers of the seed articles, ported to Swift over LatchkeySecurity.
        .target(name: "SeedManagers", dependencies: ["LatchkeySecurity"], path: "Examples/SeedManagers"),

        // The main job on the embedded default keychain, end to end (README, script/demo).
        .executableTarget(name: "latchkey-demo", dependencies: ["Latchkey"]),

        // Spawned by tests that need a second process (umask, SIGKILL mid-write, several writers, power cuts).
        .executableTarget(
            name: "latchkey-test-helper",
            dependencies: ["Latchkey", "LatchkeyCrypto", "LatchkeySecurity", "SeedManagers", "CPowerLoss"],
            path: "Tests/Helpers/latchkey-test-helper"),
        // A power cut for SQLite (tests only): a VFS that keeps each file as it was at its last sync.
        .target(name: "CPowerLoss", path: "Tests/CPowerLoss", linkerSettings: [.linkedLibrary("sqlite3")]),

        // Two separately built client programs for the agent's tests (different binaries, same behaviour).
        .target(name: "LatchkeyTestClient", dependencies: ["Latchkey", "LatchkeyProtocol", "LatchkeySecurity"],
                path: "Tests/Helpers/LatchkeyTestClient"),
        .executableTarget(
            name: "latchkey-test-client-a", dependencies: ["LatchkeyTestClient"], path: "Tests/Helpers/latchkey-test-client-a"),
        .executableTarget(
            name: "latchkey-test-client-b", dependencies: ["LatchkeyTestClient"], path: "Tests/Helpers/latchkey-test-client-b"),

        // Shared by the test targets: temporary directories, the helper process, status extraction.
        .target(name: "LatchkeyTestSupport", dependencies: ["Latchkey", "LatchkeyFoundationValues", "LatchkeyPOSIX", "LatchkeyProtocol", "LatchkeyTPM", "CPseudoTerminal"], path: "Tests/Support"),
        .target(name: "CPseudoTerminal", path: "Tests/CPseudoTerminal"),
        .testTarget(name: "LatchkeyCryptoTests", dependencies: ["LatchkeyCrypto", "LatchkeyPOSIX", "LatchkeyTestSupport"]),
        .testTarget(name: "LatchkeyPKITests", dependencies: ["LatchkeyPKI", "LatchkeyTestSupport"]),
        .testTarget(name: "LatchkeyStorageTests", dependencies: ["LatchkeyStorage", "LatchkeyTestSupport"]),
        .testTarget(name: "LatchkeyPOSIXTests", dependencies: ["LatchkeyPOSIX", "LatchkeyTestSupport"]),
        .testTarget(
            name: "LatchkeyProtocolTests",
            dependencies: ["Latchkey", "LatchkeyEngine", "LatchkeyPKI", "LatchkeyProtocol", "LatchkeyPOSIX", "LatchkeyTestSupport"]),
        .testTarget(
            name: "LatchkeyEngineTests",
            dependencies: [
                "Latchkey", "LatchkeyEngine", "LatchkeyCrypto", "LatchkeyStorage", "LatchkeyTestSupport", "latchkey-test-helper",
                "latchkey-fuzz", "LatchkeyTPM", "LatchkeyPKI",
            ]),
        .testTarget(
            name: "LatchkeyCLITests",
            dependencies: [
                "LatchkeyCLI", "Latchkey", "LatchkeyProtocol", "LatchkeyPOSIX", "LatchkeyStorage", "LatchkeyTestSupport", "latchkey", "latchkeyd",
                "latchkey-bench",
            ]),
        .testTarget(
            name: "LatchkeyAgentTests",
            dependencies: [
                "Latchkey", "LatchkeyEngine", "LatchkeyProtocol", "LatchkeyAgent", "LatchkeyCaller", "LatchkeySecretService", "LatchkeyPOSIX", "LatchkeyCrypto",
                "LatchkeyTestSupport", "latchkeyd", "latchkey", "latchkey-test-client-a", "latchkey-test-client-b",
            ]),
        .testTarget(
            name: "LatchkeySecretServiceTests",
            dependencies: [
                "Latchkey", "LatchkeySecretService", "LatchkeyCrypto", "LatchkeyPKI", "LatchkeyPOSIX", "LatchkeyTestSupport", "latchkeyd",
                "latchkey",
            ]),
        // Builds with InternalImportsByDefault: access-level imports of Security, as Swift 6 code writes them.
        .testTarget(name: "SecurityModuleTests", dependencies: ["Security"],
                    swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]),
        .testTarget(
            name: "LatchkeyCredentialHelperTests",
            dependencies: [
                "LatchkeyCredentialHelpers", "Latchkey", "LatchkeyProtocol", "LatchkeyTestSupport", "git-credential-latchkey",
                "docker-credential-latchkey", "latchkey", "latchkeyd",
            ]),
        .testTarget(
            name: "LatchkeyFormatsTests",
            dependencies: [
                "LatchkeyFormats", "LatchkeyEngine", "LatchkeyCrypto", "LatchkeyPKI", "LatchkeyPOSIX", "LatchkeyTestSupport",
                "latchkey",
            ]),
        .testTarget(name: "LatchkeyDBusTests", dependencies: ["LatchkeyDBus", "LatchkeyTestSupport"]),
        .testTarget(
            name: "LatchkeyTPMTests",
            dependencies: ["LatchkeyTPM", "CTSS2", "LatchkeyPKI", "LatchkeyCrypto", "LatchkeyTestSupport"]),
        .testTarget(name: "LatchkeySSHTests", dependencies: ["LatchkeySSH", "LatchkeyPKI", "LatchkeyCrypto", "LatchkeyEngine", "LatchkeyTestSupport"]),
        .testTarget(name: "LatchkeySyncTests", dependencies: ["LatchkeySync", "LatchkeyEngine", "LatchkeyCrypto", "LatchkeyStorage", "LatchkeyTestSupport"]),
        .testTarget(
            name: "LatchkeyAPITests",
            dependencies: [
                "Latchkey", "LatchkeySecurity", "LatchkeyTesting", "SeedManagers", "LatchkeyTestSupport",
                "latchkey-test-helper",
            ]),

    ]
)

for target in package.targets where target.type != .system {
    // Examples and tests read like user code: plain `import`s, so no InternalImportsByDefault there.
    let userCode = ["SeedManagers", "LatchkeyTestSupport", "LatchkeyTestClient"].contains(target.name)
        || target.type == .test || target.name.hasPrefix("latchkey-test-")
    let settings = userCode ? commonSettings : strictSettings
    target.swiftSettings = (target.swiftSettings ?? []) + settings
}
