// swift-tools-version: 6.2
import PackageDescription

/// Settings every Swift target shares: Swift 6 language mode (strict concurrency) and warnings as errors.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "Latchkey",
    products: [
        .library(name: "Latchkey", targets: ["Latchkey"]),
    ],
    targets: [
        // C libraries from Debian's packages; each is imported by exactly one Swift module.
        .systemLibrary(
            name: "CSodium", path: "Sources/CSodium",
            pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite",
            pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),

        .target(name: "LatchkeyCrypto", dependencies: ["CSodium"]),
        .target(name: "LatchkeyStorage", dependencies: ["CSQLite"]),
        .target(name: "Latchkey", dependencies: ["LatchkeyCrypto", "LatchkeyStorage"]),

        // The main job on the embedded default keychain, end to end (README, script/demo).
        .executableTarget(name: "latchkey-demo", dependencies: ["Latchkey"]),

        // Spawned by tests that need a second process (umask, SIGKILL mid-write, several writers).
        .executableTarget(
            name: "latchkey-test-helper", dependencies: ["Latchkey"], path: "Tests/Helpers/latchkey-test-helper"),

        .testTarget(name: "LatchkeyCryptoTests", dependencies: ["LatchkeyCrypto"]),
        .testTarget(name: "LatchkeyStorageTests", dependencies: ["LatchkeyStorage"]),
        .testTarget(
            name: "LatchkeyTests",
            dependencies: ["Latchkey", "LatchkeyCrypto", "LatchkeyStorage", "latchkey-test-helper"]),

    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + strictSettings
}
