// latchkey-bench: Latchkey beside the raw SQLite + libsodium floor (and, with --peers, beside the tools
// people use on Linux today), at several keychain sizes, reporting medians and ratios.
//
//   latchkey-bench [--sizes 1000,10000,100000] [--full] [--samples N] [--dir DIR] [--markdown FILE]
//                  [--peers [--peers-size N] [--peers-samples N]] [--json FILE] [--plot DIR]
//   latchkey-bench --plot DIR --from FILE [--reliability FILE]
//   latchkey-bench --pki [--samples N]   (in process, and through a latchkeyd it starts and stops)
//   latchkey-bench --access-log [--samples N]   (a find through latchkeyd with the access log on and off, and
//                  how large the log grows)
//   latchkey-bench --sync [--sync-items N] [--sync-vaults N] [--samples N]   (on a PostgreSQL it starts and stops)
//   latchkey-bench --sync-paths [--samples N]   (change to visible on a second device, by the agent's socket, the
//                  Secret Service, and around the agent)
//   latchkey-bench --sync-fleet 100,1000,10000 [--fleet-mode direct|pooled|both] [--fleet-idle S] [--fleet-busy S]
//                  (N simulated devices on one PostgreSQL, directly and through PgBouncer)
//   latchkey-bench --ssh [--samples N]   (latchkeyd's SSH agent beside ssh-agent and gpg-agent; also part of --peers)
//   latchkey-bench --tpm [--samples N]   (unlock with and without a TPM, on a swtpm it starts and stops)
//   latchkey-bench --import [--items N] [--samples N] [--formats csv,gnome-keyring,kdbx,pass]   (N items from a CSV export, a keyring file, a KDBX database
//                  and a pass store through `latchkey import --from`, beside copying the file)
//   latchkey-bench --snapshot [--items N] [--samples N]   (a versioned snapshot of an N-item keychain, in process
//                  and as `latchkey backup now`, beside copying the keychain file)
//   latchkey-bench --secret-service [--samples N] [--items N]   (cold D-Bus activation and search, beside GNOME
//                  Keyring; also part of --peers)
//   latchkey-bench --session-lock [--samples N]   (logind's Lock signal to the keys wiped; also part of --peers)
//   latchkey-bench --login [--samples N]   (as root: the PAM session step to the first secret-tool lookup, beside
//                  pam_gnome_keyring; also part of --peers)
//
// The D-Bus and PAM drivers (bench/secret-service.py, session-lock.py, login.py) run with --system-python
// (default /usr/bin/python3, which has Debian's python3-dbus).
// --json writes the run's figures; --plot draws SVG charts of the run just measured, or, with --from, of
// a run written before (docs/bench/run.json), beside the reliability suite's figures
// (docs/bench/reliability.json when --reliability is not given).
// Each size runs in its own child process, so peak memory is per size. --peers needs the tools that
// script/install-peers installs; script/bench runs everything.
import Foundation
import Latchkey
import LatchkeySync

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("latchkey-bench: \(message)\n".utf8))
    exit(64)
}

let arguments = Array(CommandLine.arguments.dropFirst())
// Started by a private bus from a `.service` file by bench/secret-service.py: activation's floor (issue 56).
if arguments == ["--bus-name-floor"] { BusNameFloor.serve() }
let usage = """
    usage: latchkey-bench [--sizes 1000,10000,100000] [--full] [--samples N] [--dir DIR] [--markdown FILE]
                          [--peers [--peers-size N] [--peers-samples N] [--python PATH] [--peers-script PATH]]
                          [--json FILE] [--plot DIR]
           latchkey-bench --plot DIR --from FILE [--reliability FILE]
           latchkey-bench --pki [--samples N]
           latchkey-bench --access-log [--samples N]
           latchkey-bench --sync [--sync-items N] [--sync-vaults N] [--samples N]
           latchkey-bench --sync-paths [--samples N]
           latchkey-bench --sync-fleet N[,N…] [--fleet-mode direct|pooled|both] [--fleet-idle S] [--fleet-busy S]
           latchkey-bench --ssh [--samples N]
           latchkey-bench --secret-service [--samples N] [--items N] [--secret-service-script PATH]
           latchkey-bench --bus-name-floor   (the activation floor --secret-service starts through the bus)
           latchkey-bench --session-lock [--samples N] [--session-lock-script PATH] [--fake-logind PATH]
           latchkey-bench --login [--samples N] [--login-script PATH] [--build-pam PATH]   (as root)
           (--secret-service, --session-lock and --login, alone or within --peers: [--system-python PATH])
           latchkey-bench --tpm [--samples N]
           latchkey-bench --import [--items N] [--samples N] [--formats csv,gnome-keyring,kdbx,pass]
           latchkey-bench --snapshot [--items N] [--samples N]
    """
let valueOptions: Set<String> = [
    "--sizes", "--samples", "--dir", "--markdown", "--peers-size", "--peers-samples", "--python", "--peers-script",
    "--child", "--in-process", "--size", "--passphrase-file", "--json", "--plot", "--from", "--reliability",
    "--echo-socket",
    "--sync-items", "--sync-vaults", "--items", "--secret-service-script", "--system-python", "--session-lock-script",
    "--fake-logind", "--login-script", "--build-pam",
    "--sync-fleet", "--sync-fleet-worker", "--fleet-conninfo", "--fleet-mode", "--fleet-idle", "--fleet-busy",
    "--formats",
]
if arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(0)
}
var position = 0
while position < arguments.count {
    let argument = arguments[position]
    if valueOptions.contains(argument) {
        position += 2
    } else if argument == "--full" || argument == "--peers" || argument == "--pki" || argument == "--sync"
        || argument == "--ssh" || argument == "--sync-paths"
        || argument == "--secret-service" || argument == "--tpm" || argument == "--session-lock"
        || argument == "--login" || argument == "--import" || argument == "--access-log" || argument == "--snapshot"
    {
        position += 1
    } else {
        fail("unknown argument \(argument)\n\(usage)")
    }
}
@MainActor func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name) else { return nil }
    guard index + 1 < arguments.count else { fail("\(name) needs a value") }
    return arguments[index + 1]
}

/// The reliability figures to draw: --reliability FILE, else docs/bench/reliability.json when it is there.
@MainActor func reliabilityFigures() throws -> ReliabilityFigures? {
    let path = option("--reliability") ?? "docs/bench/reliability.json"
    guard option("--reliability") != nil || FileManager.default.fileExists(atPath: path) else { return nil }
    return try JSONDecoder().decode(ReliabilityFigures.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
}

@MainActor func plot(_ run: RunSummary, into directory: String) throws {
    for name in try Charts.write(run, reliability: try reliabilityFigures(), to: directory) {
        FileHandle.standardError.write(Data("latchkey-bench: wrote \(directory)/\(name)\n".utf8))
    }
}

if let from = option("--from") {
    // Charts of a run measured before: nothing is measured.
    guard let directory = option("--plot") else { fail("--from needs --plot DIR") }
    let run: RunSummary
    do {
        run = try JSONDecoder().decode(RunSummary.self, from: Data(contentsOf: URL(fileURLWithPath: from)))
    } catch {
        fail("cannot read the run in \(from): \(error)")
    }
    try plot(run, into: directory)
    exit(0)
}

let samples = Int(option("--samples") ?? "2000") ?? 2000

if let path = option("--echo-socket") {
    // The other end of `--pki`'s socket floor.
    try PKIAgentWorkloads.echo(at: path)
    exit(0)
}

if arguments.contains("--access-log") {
    // The access log's cost on a find through the agent (issue 53); nothing else is measured.
    print(
        AccessLogWorkload.render(
            try AccessLogWorkload(samples: samples).run(),
            command: "latchkey-bench " + arguments.joined(separator: " ")))
    exit(0)
}
if arguments.contains("--pki") {
    // Key and certificate operations beside the raw OpenSSL floor; nothing else is measured.
    let rows = try PKIWorkloads(samples: samples).run()
    print(PKIWorkloads.render(rows, command: "latchkey-bench " + arguments.joined(separator: " ")))
    print(PKIAgentWorkloads.render(try PKIAgentWorkloads(samples: samples).run()))
    exit(0)
}
if let specification = option("--sync-fleet-worker") {
    // One process of --sync-fleet's devices.
    guard let conninfo = option("--fleet-conninfo") else { fail("--sync-fleet-worker needs --fleet-conninfo") }
    try SyncFleetProcess(specification: specification, conninfo: conninfo).run()
    exit(0)
}
if let sizes = option("--sync-fleet") {
    // N devices online at once, directly and through PgBouncer; nothing else is measured.
    let counts = sizes.split(separator: ",").compactMap { Int($0) }
    guard !counts.isEmpty, counts.allSatisfy({ $0 >= 10 }) else {
        fail("--sync-fleet needs device counts of at least 10")
    }
    let modes: [SyncConnectionMode] =
        switch option("--fleet-mode") ?? "both" {
        case "direct": [.direct]
        case "pooled": [.pooled]
        case "both": [.direct, .pooled]
        default: fail("--fleet-mode is direct, pooled or both")
        }
    let executable =
        // No /proc: the path it was started by.
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var runs: [SyncFleetWorkload.Results] = []
    for count in counts {
        for mode in modes {
            let workload = SyncFleetWorkload(
                devices: count, mode: mode, idleSeconds: Int(option("--fleet-idle") ?? "20") ?? 20,
                busySeconds: Int(option("--fleet-busy") ?? "40") ?? 40)
            runs.append(try workload.run(executable: executable))
            FileHandle.standardError.write(Data(SyncFleetWorkload.render([runs.last!], command: "partial").utf8))
        }
    }
    print(SyncFleetWorkload.render(runs, command: "latchkey-bench " + arguments.joined(separator: " ")))
    exit(0)
}
if arguments.contains("--sync") {
    // Sync through a PostgreSQL the bench starts; nothing else is measured.
    let items = Int(option("--sync-items") ?? "100000") ?? 100_000
    let vaults = Int(option("--sync-vaults") ?? "1000") ?? 1_000
    guard items >= 10, vaults >= 1 else { fail("--sync-items needs at least 10 and --sync-vaults at least 1") }
    let workload = SyncWorkloads(items: items, samples: Int(option("--samples") ?? "200") ?? 200, vaults: vaults)
    print(
        SyncWorkloads.render(
            try workload.run(), items: items, vaults: vaults,
            command: "latchkey-bench " + arguments.joined(separator: " ")))
    exit(0)
}
if arguments.contains("--tpm") {
    // Unlocking with and without the TPM, on a swtpm the bench starts; nothing else is measured.
    let count = Int(option("--samples") ?? "20") ?? 20
    print(
        TPMWorkloads.render(
            try TPMWorkloads(samples: count).run(), samples: count,
            command: "latchkey-bench " + arguments.joined(separator: " ")))
    exit(0)
}
let executableDirectory = URL(
    fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]
).deletingLastPathComponent().path  // No /proc: the path it was started by.
if arguments.contains("--sync-paths") {
    // A change's way to another device by the road it took; nothing else is measured.
    let count = Int(option("--samples") ?? "30") ?? 30
    print(
        SyncPathsWorkload.render(
            try SyncPathsWorkload(samples: count, binDirectory: executableDirectory).run(), samples: count,
            command: "latchkey-bench " + arguments.joined(separator: " ")))
    exit(0)
}
if arguments.contains("--import") {
    // Importing other programs' files beside copying them; nothing else is measured.
    var workloads = ImportWorkloads(
        items: Int(option("--items") ?? "10000") ?? 10_000, samples: Int(option("--samples") ?? "3") ?? 3,
        binDirectory: executableDirectory)
    if let formats = option("--formats") { workloads.formats = Set(formats.split(separator: ",").map(String.init)) }
    print(
        ImportWorkloads.render(
            try workloads.run(), items: workloads.items, command: "latchkey-bench " + arguments.joined(separator: " ")))
    exit(0)
}
if arguments.contains("--snapshot") {
    // A snapshot of a keychain beside copying its file; nothing else is measured.
    let samples = Int(option("--samples") ?? "3") ?? 3
    let workload = SnapshotWorkload(
        items: Int(option("--items") ?? "100000") ?? 100_000, samples: samples, binDirectory: executableDirectory)
    print(
        SnapshotWorkload.render(
            try workload.run(), samples: samples, command: "latchkey-bench " + arguments.joined(separator: " ")))
    exit(0)
}
if arguments.contains("--ssh") {
    // SSH signatures through latchkeyd, ssh-agent and gpg-agent; nothing else is measured.
    let results = try SSHAgentWorkloads(
        samples: Int(option("--samples") ?? "400") ?? 400, binDirectory: executableDirectory
    ).run()
    print(SSHAgentWorkloads.render(results, command: "latchkey-bench " + arguments.joined(separator: " ")))
    exit(0)
}
/// The interpreter of the D-Bus and PAM drivers: Debian's, with python3-dbus.
let systemPython = option("--system-python") ?? "/usr/bin/python3"
@MainActor func secretServiceSection(samples: Int, command: String) throws -> String {
    let items = Int(option("--items") ?? "10000") ?? 10_000
    let workloads = SecretServiceWorkloads(
        samples: samples, items: items, binDirectory: executableDirectory,
        script: option("--secret-service-script") ?? "bench/secret-service.py", python: systemPython)
    FileHandle.standardError.write(
        Data("latchkey-bench: the Secret Service: activation and search among \(items.formatted()) items...\n".utf8))
    return SecretServiceWorkloads.render(try workloads.run(), items: items, command: command)
}
if arguments.contains("--secret-service") {
    // Cold D-Bus activation and search through the Secret Service, Latchkey beside GNOME Keyring.
    print(
        try secretServiceSection(
            samples: Int(option("--samples") ?? "30") ?? 30,
            command: "latchkey-bench " + arguments.joined(separator: " ")))
    exit(0)
}
@MainActor func sessionLockSection(samples: Int, command: String) throws -> String {
    let workload = SessionLockWorkload(
        samples: samples, binDirectory: executableDirectory,
        script: option("--session-lock-script") ?? "bench/session-lock.py",
        fakeLogind: option("--fake-logind") ?? "Tests/Tools/fake-logind.py", python: systemPython)
    FileHandle.standardError.write(Data("latchkey-bench: logind's Lock signal to the keys wiped...\n".utf8))
    return SessionLockWorkload.render(try workload.run(), command: command)
}
if arguments.contains("--session-lock") {
    // The session's Lock signal to latchkeyd's keys wiped; nothing else is measured.
    print(
        try sessionLockSection(
            samples: Int(option("--samples") ?? "50") ?? 50,
            command: "latchkey-bench " + arguments.joined(separator: " ")))
    exit(0)
}
@MainActor func loginSection(samples: Int, command: String) throws -> String {
    let workloads = LoginWorkloads(
        samples: samples, binDirectory: executableDirectory, script: option("--login-script") ?? "bench/login.py",
        buildPAM: option("--build-pam") ?? "script/build-pam", python: systemPython)
    FileHandle.standardError.write(
        Data("latchkey-bench: login to the first secret, beside pam_gnome_keyring...\n".utf8))
    return LoginWorkloads.render(try workloads.run(), command: command)
}
if arguments.contains("--login") {
    // The PAM session step to the first secret, pam_latchkey beside pam_gnome_keyring; nothing else is measured.
    print(
        try loginSection(
            samples: Int(option("--samples") ?? "30") ?? 30,
            command: "latchkey-bench " + arguments.joined(separator: " ")))
    exit(0)
}
let workDirectory = option("--dir") ?? NSTemporaryDirectory()

if let child = option("--child") {
    // Child: measure one size and print the result as JSON.
    guard let size = Int(child), size > 0 else { fail("bad --child size") }
    let directory = workDirectory + "/latchkey-bench-\(size)-\(ProcessInfo.processInfo.processIdentifier)"
    try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    defer { try? FileManager.default.removeItem(atPath: directory) }  // Scratch files; a leftover only costs disk.
    var result = SizeResult(size: size)
    let ours = try LatchkeyWorkloads(directory: directory, size: size, samples: samples).run()
    result.latchkey = ours.results
    result.latchkeyDiskBytesPerItem = ours.diskBytesPerItem
    result.floorRowBytes = ours.rowBytes
    let reading = ConcurrentReadWorkload(
        path: directory + "/bench.keychain", size: size,
        duration: .milliseconds(max(500, min(3_000, samples))),
        caller: CallerIdentity(applicationIdentifier: "bench.app"),
        passphrase: Passphrase("benchmark passphrase"))
    result.concurrentReads = try reading.run()
    let floor = try FloorWorkloads(directory: directory, size: size, rowBytes: ours.rowBytes, samples: samples).run()
    result.floor = floor.results
    result.floorDiskBytesPerItem = floor.diskBytesPerItem
    result.peakMemoryBytes = peakMemoryBytes()
    FileHandle.standardOutput.write(try JSONEncoder().encode(result))
    exit(0)
}

if let keychainPath = option("--in-process") {
    // Called back by bench/peers.py while latchkeyd runs: the Swift API's round trip.
    guard let size = Int(option("--size") ?? ""), let passphraseFile = option("--passphrase-file") else {
        fail("--in-process needs --size and --passphrase-file")
    }
    FileHandle.standardOutput.write(
        try ToolComparison.inProcess(
            keychainPath: keychainPath, size: size, samples: samples,
            passphraseFile: passphraseFile))
    exit(0)
}

var sizes = (option("--sizes") ?? "1000,10000,100000").split(separator: ",").compactMap { Int($0) }
if arguments.contains("--full") { sizes = [1_000, 10_000, 100_000, 1_000_000] }
guard !sizes.isEmpty else { fail("--sizes needs numbers") }

let executable =
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
var results: [SizeResult] = []
for size in sizes {
    FileHandle.standardError.write(Data("latchkey-bench: measuring \(size.formatted()) items...\n".utf8))
    let data = try standardOutput(
        of: executable, ["--child", "\(size)", "--samples", "\(samples)", "--dir", workDirectory],
        what: "the run at \(size) items")
    results.append(try JSONDecoder().decode(SizeResult.self, from: data))
}

var peers: PeerResults?
if arguments.contains("--peers") {
    let size = Int(option("--peers-size") ?? "1000") ?? 1000
    let peerSamples = Int(option("--peers-samples") ?? "100") ?? 100
    let python = option("--python") ?? ".build/peers-venv/bin/python"
    let script = option("--peers-script") ?? "bench/peers.py"
    guard FileManager.default.isExecutableFile(atPath: python), FileManager.default.fileExists(atPath: script) else {
        fail("--peers needs \(python) and \(script): run it from the repository after script/install-peers")
    }
    FileHandle.standardError.write(
        Data("latchkey-bench: measuring the CLI and peers at \(size.formatted()) items...\n".utf8))
    let directory = workDirectory + "/latchkey-bench-peers-\(ProcessInfo.processInfo.processIdentifier)"
    try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    defer { try? FileManager.default.removeItem(atPath: directory) }  // Scratch files; a leftover only costs disk.
    peers = try ToolComparison.runPeers(
        python: python, script: script,
        binDirectory: URL(fileURLWithPath: executable).deletingLastPathComponent().path,
        directory: directory, size: size, samples: peerSamples)
}

let command = "latchkey-bench " + CommandLine.arguments.dropFirst().joined(separator: " ")
var report = Report.render(results, peers: peers, command: command.trimmingCharacters(in: .whitespaces))
if arguments.contains("--peers") {
    FileHandle.standardError.write(Data("latchkey-bench: measuring SSH signatures through the agents...\n".utf8))
    let ssh = try SSHAgentWorkloads(
        samples: Int(option("--peers-samples") ?? "100").map { max(160, $0 * 4) } ?? 400,
        binDirectory: executableDirectory
    ).run()
    report += "\n" + SSHAgentWorkloads.render(ssh, command: command.trimmingCharacters(in: .whitespaces))
    report += "\n" + (try secretServiceSection(samples: 30, command: command.trimmingCharacters(in: .whitespaces)))
    report += "\n" + (try sessionLockSection(samples: 50, command: command.trimmingCharacters(in: .whitespaces)))
    if geteuid() == 0 {
        report += "\n" + (try loginSection(samples: 30, command: command.trimmingCharacters(in: .whitespaces)))
    } else {
        // A throwaway user and a PAM service file need root; the rest of the run does not.
        report += "\n" + LoginWorkloads.notRoot
    }
}
print(report)
if let markdown = option("--markdown") {
    try report.write(toFile: markdown, atomically: true, encoding: .utf8)
}
let summary = RunSummary(
    command: command.trimmingCharacters(in: .whitespaces), machine: Report.machine(),
    revision: ProcessInfo.processInfo.environment["LATCHKEY_BENCH_REVISION"], results: results, peers: peers)
if let json = option("--json") {
    try summary.encoded().write(to: URL(fileURLWithPath: json), options: .atomic)
}
if let directory = option("--plot") {
    try plot(summary, into: directory)
}
