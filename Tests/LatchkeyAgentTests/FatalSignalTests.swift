import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The second review's point 7 (issue 30): on SIGABRT, Swift's backtracer printed 16 bytes of memory at each
/// register — for the CLI, the secret, twice — and the CLI then stayed blocked. The CLI and the agent now end
/// at once on a crash signal, with one line and status 128+n: no backtrace, no memory, no core file.
@Suite(.serialized, .dedicatedThreads) struct FatalSignalTests {
    static let line = "fatal signal 6; no backtrace and no core file are written (the memory holds secrets)\n"

    /// The CLI, holding a secret from its arguments while it waits for the passphrase on its standard input,
    /// is sent SIGABRT.
    @Test func theCommandLineEndsWithOneLineAndNoMemory() throws {
        let sandbox = try AgentSandbox()
        let script = """
            import os, signal, subprocess, sys, time
            child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            # Until it waits for the passphrase (sleeping, reading standard input).
            for _ in range(1000):
                with open(f"/proc/{child.pid}/stat") as stat:
                    state = stat.read().rsplit(")", 1)[1].split()[0]
                with open(f"/proc/{child.pid}/syscall") as call:
                    reading = call.read().split()[0] == "0"
                if state == "S" and reading:
                    break
                time.sleep(0.01)
            child.send_signal(signal.SIGABRT)
            out, err = child.communicate(timeout=20)
            sys.stdout.write(f"{child.returncode}\\n")
            sys.stdout.write(err.decode(errors="replace"))
            """
        let run = try HelperProcess.run(
            "/usr/bin/python3",
            [
                "-c", script, HelperProcess.product("latchkey"), "add-generic-password", "-a", "alice", "-s", "mail",
                "-w", "crash-secret-value", "--passphrase-fd", "0",
            ],
            environment: sandbox.environment)
        #expect(
            run.stdout
                == "134\nlatchkey: add-generic-password: warning: a password on the command line is visible to other users; "
                + "put -w last to be prompted, or use --password-fd\nlatchkey: " + Self.line, "\(run.stdout)")
        #expect(!run.stdout.contains("crash-secret-value") && !run.stdout.contains("Registers"))
    }

    /// The agent, unlocked (its keys in memory), is sent SIGABRT.
    @Test func theAgentEndsWithOneLineAndNoMemory() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        let agent = try #require(sandbox.agent)
        kill(agent.pid, SIGABRT)
        try waitUntil("the agent to end") { !agent.isRunning }
        let status = try #require(agent.waitStatus)
        #expect(status & 0x7F == 0 && (status >> 8) & 0xFF == 134, "wait status \(status)")
        #expect(sandbox.agentLog.hasSuffix("latchkeyd: " + Self.line), "\(sandbox.agentLog)")
        #expect(!sandbox.agentLog.contains("Registers") && !sandbox.agentLog.contains("Backtrace"))
    }
}
