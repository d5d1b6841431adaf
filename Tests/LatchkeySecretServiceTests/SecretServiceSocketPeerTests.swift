import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The third review's attack on the isolated policy (issue 50, point 1): a peer *address* is a name anyone can
/// bind. The attacker's connection is attributed to the target's process, and the target holds one
/// close-on-exec socket whose peer has the bus socket's name — connected to a listener of the attacker's, not
/// to the bus daemon. A connection is a program's own only when the socket it holds is connected to one the
/// bus daemon itself holds (by socket inode, from the kernel).
@Suite(.serialized, .dedicatedThreads) struct SecretServiceSocketPeerTests {
    typealias Desktop = SecretServiceTests.Desktop
    typealias Isolation = SecretServiceIsolationTests

    /// Waits, in the target, on the bus it is pointed at (the attacker's listener, which never answers).
    static let connectAndWait = """
        from jeepney.io.blocking import open_dbus_connection
        try:
            open_dbus_connection(bus="SESSION", auth_timeout=30)
        except Exception:
            pass
        """

    /// The target is secret-tool (whose items the attacker reads and overwrites) or a registered program (a
    /// copy of python3 with an item of its own); the attacker says its Hello after the exec, or says it before
    /// with the agent stopped until after the exec.
    @Test(arguments: ["hello-later", "stopped"], ["secret-tool", "registered"])
    func aListenerBoundToTheBusSocketsNameIsNotTheBus(_ mode: String, _ kind: String) throws {
        let desktop = try Isolation.desktop()
        let target: [String]
        let attributes: String
        let secret: String
        if kind == "registered" {
            let tool = try Isolation.copyOfPython(in: desktop, named: "registered-tool")
            try desktop.sandbox.register(tool, appID: "org.example.tool", groups: ["org.example.tool"])
            let stored = try desktop.run(tool, ["-c", Isolation.storeOwned, "tool"])
            #expect(stored.status == 0, "\(stored.stderr)")
            target = [tool, "-c", Self.connectAndWait]
            attributes = #"{"owner": "tool"}"#
            secret = "owned"
        } else {
            target = [Isolation.secretTool, "lookup", "service", "mail", "user", "alice"]
            attributes = #"{"service": "mail", "user": "alice"}"#
            secret = "s3cret"
        }
        let agent = try #require(desktop.sandbox.agent?.pid)
        for round in 0..<5 {
            let result = desktop.sandbox.directory.file("fake-\(mode)-\(kind)-\(round)")
            // (Its status is the target's, which loses its bus.)
            let attack = try desktop.run(
                "/usr/bin/python3",
                [
                    TestTools.directory + "/bus-fake-listener.py", result, desktop.socketPath, mode, String(agent),
                    attributes,
                ] + target)
            try waitUntil("the attacker's result: \(attack.stderr)") { FileManager.default.fileExists(atPath: result) }
            let lines = try String(contentsOfFile: result, encoding: .utf8)
            #expect(
                lines == "error org.freedesktop.DBus.Error.AccessDenied\n",
                "round \(round): \(lines)\n\(desktop.sandbox.agentLog)")
        }
        let log = desktop.sandbox.agentLog
        #expect(
            log.contains("holds 0 opened by the program it runs now: a connection made before it ran that program"),
            "\(log)")
        // Nothing was read or overwritten: the owner, asking on its own connection, is served its secret.
        if kind == "registered" {
            let read = try desktop.run(
                target[0],
                [
                    "-c",
                    "import secretstorage; print(next(secretstorage.search_items(secretstorage.dbus_init(), {'owner': 'tool'})).get_secret().decode())",
                ])
            #expect(read.stdout == secret + "\n", "\(read.stderr)")
        } else {
            #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").stdout == secret)
        }
    }
}
