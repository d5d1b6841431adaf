// latchkeyd: the Latchkey agent. It holds the unlocked keychain's keys (in locked, zeroized memory), serves
// clients over a Unix socket, identifies each by its user and its executable, and grants registered
// programs their access groups. See `latchkeyd --help`.
import Dispatch
import Foundation
import LatchkeyEngine
import LatchkeyProtocol
import LatchkeyAgent
import LatchkeyPOSIX

let usage = """
    Usage: latchkeyd [--keychain path] [--socket path] [--pinentry program] [--verbose]

    Runs the Latchkey agent in the foreground. It serves the keychain named by --keychain (else
    LATCHKEY_KEYCHAIN, else the default keychain) on the socket named by --socket (else LATCHKEY_AGENT_SOCKET,
    else $XDG_RUNTIME_DIR/latchkey/agent.sock, else ~/.local/state/latchkey/agent.sock), in a directory of
    this user with mode 0700. Under systemd socket activation it uses the socket systemd passes. It starts
    locked: `latchkey unlock-keychain` unlocks it. One agent serves a keychain at a time. SIGTERM or SIGINT
    wipes the keys and ends it.

    Items whose access control asks for the user (SecAccessControl .userPresence, .devicePasscode,
    biometry, .applicationPassword) are released only after the user confirms the keychain passphrase in
    pinentry: --pinentry names the program (else LATCHKEY_PINENTRY, else pinentry on the PATH).

    """

var arguments = Array(CommandLine.arguments.dropFirst())
var keychain = KeychainLocation.defaultPath()
var socketPath = AgentLocation.socketPath()
var verbose = false
var pinentry: String?
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "--keychain" where !arguments.isEmpty: keychain = KeychainLocation.resolve(arguments.removeFirst())
    case "--socket" where !arguments.isEmpty: socketPath = arguments.removeFirst()
    case "--pinentry" where !arguments.isEmpty: pinentry = arguments.removeFirst()
    case "--verbose", "-v": verbose = true
    case "--help", "-h":
        print(usage, terminator: "")
        exit(0)
    default:
        FileHandle.standardError.write(Data("latchkeyd: unexpected argument \"\(argument)\"\n\(usage)".utf8))
        exit(64)
    }
}

let server: AgentServer
do {
    server = try AgentServer(options: .init(keychainPath: keychain, socketPath: socketPath, verbose: verbose, pinentry: pinentry))
} catch {
    FileHandle.standardError.write(Data("latchkeyd: \(error.message)\n".utf8))
    exit(Int32(UInt8(truncatingIfNeeded: error.status.rawValue)) == 0 ? 1 : Int32(UInt8(truncatingIfNeeded: error.status.rawValue)))
}

Signals.ignoreBrokenPipes()
var sources: [any DispatchSourceSignal] = []
for signalNumber in Signals.termination {
    Signals.ignore(signalNumber)
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
    source.setEventHandler {
        server.shutDown()
        exit(0)
    }
    source.resume()
    sources.append(source)
}
Thread.detachNewThread { server.serve() }
dispatchMain()
