// latchkeyd: the Latchkey agent. It holds the unlocked keychain's keys (in locked, zeroized memory), serves
// clients over a Unix socket, identifies each by its user and its executable, and grants registered
// programs their access groups. See `latchkeyd --help`.
import Dispatch
import FoundationEssentials
import LatchkeyAgent
import LatchkeyEngine
import LatchkeyPOSIX
import LatchkeyProtocol
import Synchronization

do {
    // First: a crash must not print memory (Swift's backtracer shows what registers point at: keys, secrets).
    try Signals.exitQuietlyOnCrash(name: "latchkeyd")
} catch {
    StandardError.write("latchkeyd: warning: a crash could print memory that holds secrets (\(error))\n")
}

// Read once: `ProcessInfo.processInfo.environment` builds its dictionary again at every use, and a cold D-Bus
// activation waits for the agent's start (issue 56).
let environment = CurrentProcess.environment

var arguments = Array(CommandLine.arguments.dropFirst())
var keychain = KeychainLocation.defaultPath(environment: environment)
var socketPath = AgentLocation.socketPath(environment: environment)
var verbose = false
var pinentry: String?
// The setting for the socket-activated service (contrib/systemd reads it from latchkeyd.env).
var secretService = environment["LATCHKEY_SECRET_SERVICE"] == "1"
var isolatedSecretService = environment["LATCHKEY_SECRET_SERVICE_POLICY"] == "isolated"
var synchronizableSecretService = environment["LATCHKEY_SECRET_SERVICE_SYNC"] == "1"
var backgroundSync = environment["LATCHKEY_SYNC"] != "0"
var accessLog = environment["LATCHKEY_ACCESS_LOG"] != "0"
var sshAgentSocket: String?
var sshAgent = environment["LATCHKEY_SSH_AGENT"] != "0"
var lockOnSessionLock = environment["LATCHKEY_LOCK_ON_SESSION_LOCK"] != "0"
var unlockUnattended = environment["LATCHKEY_UNLOCK_UNATTENDED"] == "1"
/// `--program-identity` and LATCHKEY_PROGRAM_IDENTITY take `executable` or `platform`; else exits 64.
func programIdentity(_ text: String, from source: String) -> ProgramIdentity {
    guard let identity = ProgramIdentity(rawValue: text) else {
        StandardError.write("latchkeyd: \(source) is executable or platform, not \"\(text)\"\n")
        CurrentProcess.exit(64)
    }
    return identity
}
var identity =
    environment["LATCHKEY_PROGRAM_IDENTITY"].flatMap { text in
        text.isEmpty ? nil : programIdentity(text, from: "LATCHKEY_PROGRAM_IDENTITY")
    } ?? .executable
/// Whole seconds from 1 to 3600, as --wait-for-keychain and LATCHKEY_WAIT_FOR_KEYCHAIN take them; else exits 64.
func waitSeconds(_ text: String, from source: String) -> Int {
    guard let seconds = Int(text), (1...3600).contains(seconds) else {
        StandardError.write("latchkeyd: \(source) takes whole seconds from 1 to 3600, not \"\(text)\"\n")
        CurrentProcess.exit(64)
    }
    return seconds
}
/// A span such as 1d, 12h, 30m or 90s (or whole seconds), from 1 s to 366 days, as --backup-every and
/// LATCHKEY_BACKUP_EVERY take it; else exits 64.
func backupInterval(_ text: String, from source: String) -> Int {
    let units: [Character: Int] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
    let unit = text.last.flatMap { units[$0] }
    guard let count = Int(unit == nil ? Substring(text) : text.dropLast()), count > 0,
        count <= 366 * 86_400 / (unit ?? 1)
    else {
        StandardError.write("latchkeyd: \(source) takes a span such as 1d, 12h, 30m or 90s, not \"\(text)\"\n")
        CurrentProcess.exit(64)
    }
    return count * (unit ?? 1)
}
/// A number of snapshots from 1 to 100000, as --backup-keep and LATCHKEY_BACKUP_KEEP take it; else exits 64.
func backupKeep(_ text: String, from source: String) -> Int {
    guard let count = Int(text), (1...100_000).contains(count) else {
        StandardError.write("latchkeyd: \(source) takes a number of snapshots from 1 to 100000, not \"\(text)\"\n")
        CurrentProcess.exit(64)
    }
    return count
}
var backupDirectory = environment[SnapshotDirectory.environmentVariable].flatMap {
    $0.isEmpty ? nil : $0
}
var backupEvery = environment["LATCHKEY_BACKUP_EVERY"].flatMap { text in
    text.isEmpty ? nil : backupInterval(text, from: "LATCHKEY_BACKUP_EVERY")
}
var backupKeepCount = environment["LATCHKEY_BACKUP_KEEP"].flatMap { text in
    text.isEmpty ? nil : backupKeep(text, from: "LATCHKEY_BACKUP_KEEP")
}
var waitForKeychain = environment["LATCHKEY_WAIT_FOR_KEYCHAIN"].flatMap { text in
    text.isEmpty ? nil : waitSeconds(text, from: "LATCHKEY_WAIT_FOR_KEYCHAIN")
}
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "--keychain" where !arguments.isEmpty: keychain = KeychainLocation.resolve(arguments.removeFirst())
    case "--socket" where !arguments.isEmpty: socketPath = arguments.removeFirst()
    case "--pinentry" where !arguments.isEmpty: pinentry = arguments.removeFirst()
    case "--verbose", "-v": verbose = true
    case "--secret-service": secretService = true
    case "--secret-service-sync": synchronizableSecretService = true
    case "--no-sync": backgroundSync = false
    case "--no-access-log": accessLog = false
    case "--ssh-agent-socket" where !arguments.isEmpty: sshAgentSocket = arguments.removeFirst()
    case "--no-ssh-agent": sshAgent = false
    case "--no-lock-on-session-lock": lockOnSessionLock = false
    case "--unlock-unattended": unlockUnattended = true
    case "--backup-directory" where !arguments.isEmpty: backupDirectory = arguments.removeFirst()
    case "--backup-every" where !arguments.isEmpty:
        backupEvery = backupInterval(arguments.removeFirst(), from: "--backup-every")
    case "--backup-keep" where !arguments.isEmpty:
        backupKeepCount = backupKeep(arguments.removeFirst(), from: "--backup-keep")
    case "--wait-for-keychain" where !arguments.isEmpty:
        waitForKeychain = waitSeconds(arguments.removeFirst(), from: "--wait-for-keychain")
    case "--program-identity" where !arguments.isEmpty:
        identity = programIdentity(arguments.removeFirst(), from: "--program-identity")
    case "--secret-service-policy" where !arguments.isEmpty:
        switch arguments.removeFirst() {
        case "shared": isolatedSecretService = false
        case "isolated": isolatedSecretService = true
        case let other:
            StandardError.write("latchkeyd: --secret-service-policy is shared or isolated, not \"\(other)\"\n")
            CurrentProcess.exit(64)
        }
    case "--help", "-h":
        print(AgentOptions.usage, terminator: "")
        CurrentProcess.exit(0)
    case "--version":
        print("latchkeyd \(ProductVersion.number)")
        CurrentProcess.exit(0)
    case "--manual":
        print(AgentOptions.manual, terminator: "")
        CurrentProcess.exit(0)
    case "--completion" where !arguments.isEmpty:
        guard let script = AgentOptions.completion(arguments.removeFirst()) else {
            StandardError.write("latchkeyd: there are completions for bash, zsh and fish\n")
            CurrentProcess.exit(64)
        }
        print(script, terminator: "")
        CurrentProcess.exit(0)
    default:
        StandardError.write("latchkeyd: unexpected argument \"\(argument)\"\n\(AgentOptions.usage)")
        CurrentProcess.exit(64)
    }
}

// The termination signals are caught before the server starts: it may own its bus name (D-Bus activation
// answers then) before it serves, and a SIGTERM sent in between must stop it, not be lost. They are handled
// once the main queue runs (dispatchMain below).
let started = Mutex<AgentServer?>(nil)
Signals.ignoreBrokenPipes()
var sources: [any DispatchSourceSignal] = []
for signalNumber in Signals.termination {
    Signals.ignore(signalNumber)
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
    source.setEventHandler {
        started.withLock { $0 }?.shutDown()
        CurrentProcess.exit(0)
    }
    source.resume()
    sources.append(source)
}

var chosenOptions = AgentServer.Options(
    keychainPath: keychain, socketPath: socketPath, verbose: verbose, pinentry: pinentry, secretService: secretService,
    isolatedSecretService: isolatedSecretService, backgroundSync: backgroundSync, accessLog: accessLog,
    sshAgentSocketPath: sshAgent ? sshAgentSocket ?? AgentLocation.sshSocketPath(agentSocket: socketPath) : nil,
    lockOnSessionLock: lockOnSessionLock, waitForKeychainSeconds: waitForKeychain, unlockUnattended: unlockUnattended,
    programIdentity: identity, synchronizableSecretService: synchronizableSecretService)
chosenOptions.backupDirectory = backupDirectory.map {
    SnapshotDirectory.resolve($0, environment: environment)
}
chosenOptions.backupInterval = backupEvery ?? chosenOptions.backupInterval
chosenOptions.backupKeep = backupKeepCount ?? chosenOptions.backupKeep
let options = chosenOptions

/// The server, or the exit with its error's status (the low byte of the OSStatus).
@Sendable func makeServer(_ options: AgentServer.Options) -> AgentServer {
    do {
        return try AgentServer(options: options)
    } catch {
        StandardError.write("latchkeyd: \(error.message)\n")
        CurrentProcess.exit(
            Int32(UInt8(truncatingIfNeeded: error.status.rawValue)) == 0
                ? 1 : Int32(UInt8(truncatingIfNeeded: error.status.rawValue)))
    }
}

if waitForKeychain == nil {
    let server = makeServer(options)
    started.withLock { $0 = server }
    DetachedThread.start(name: "agent") { server.serve() }
} else {
    // Starting may wait long for the keychain to appear: off the main queue, so a SIGTERM meanwhile ends the
    // agent at once (nothing is unlocked yet; a password held while waiting goes with the process).
    DetachedThread.start(name: "agent") {
        let server = makeServer(options)
        started.withLock { $0 = server }
        server.serve()
    }
}
dispatchMain()
