import CPOSIX
import Glibc

/// Signals, for programs that handle them with Dispatch.
package enum Signals {
    /// The signals that ask a service to stop: `SIGTERM`, `SIGINT`, `SIGHUP`.
    package static let termination: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// Sets `signal`'s disposition to ignore (so a Dispatch source sees it instead of the default action).
    package static func ignore(_ signal: Int32) { _ = Glibc.signal(signal, SIG_IGN) }

    /// Ignores `SIGPIPE`: a write to a closed socket then fails with `EPIPE` instead of ending the process.
    package static func ignoreBrokenPipes() { ignore(SIGPIPE) }

    /// A crash ends the process at once with `<name>: fatal signal <n>` on standard error and status 128+n:
    /// no backtrace (Swift's prints the memory registers point at — a passphrase, a secret), no core file.
    /// Call it first thing in `main`, after the runtime has installed its own handlers.
    package static func exitQuietlyOnCrash(name: String) throws(Errno) {
        guard latchkey_exit_on_fatal_signals(name) == 0 else { throw Errno.current }
    }
}
