import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// The access question (issue 53) through the Secret Service's isolated policy: another program's item that
/// matches a search is offered as locked; `Unlock` asks the user, through the scripted pinentry, naming the
/// asking program, the item (label and attributes, never the secret) and the program that stored it. Deny is
/// remembered until the keychain locks, Allow once reads it once, Always allow puts the program on the item's
/// list until `latchkey access remove`. The asking program never changes or deletes the item, and without a
/// display nothing is offered.
@Suite(.serialized, .dedicatedThreads) struct SecretServiceAccessQuestionTests {
    typealias Desktop = SecretServiceTests.Desktop

    /// An isolated desktop (with a display unless `display` is false) where secret-tool stored `Mail`; the
    /// path of a copy of secret-tool, another program.
    static func desktop(display: Bool = true) throws -> (Desktop, String) {
        let desktop = try Desktop(pinentryAnswer: "cancel", startingTheAgent: false, user: TestTools.nobody)
        if display { desktop.sandbox.agentEnvironment["DISPLAY"] = ":99" }
        try desktop.sandbox.start(
            HelperProcess.product("latchkeyd"),
            ["--verbose", "--secret-service", "--secret-service-policy", "isolated"])
        try desktop.sandbox.unlock()
        let stored = try desktop.secretTool(
            "store", "--label=Mail", "service", "mail", "user", "alice", input: "s3cret")
        #expect(stored.status == 0, "\(stored.stderr)")
        let other = desktop.sandbox.directory.file("bin/other-tool")
        let copied = try desktop.run(
            "/bin/sh",
            ["-c", "mkdir -p \"$(dirname \"$1\")\" && cp \"$0\" \"$1\"", SecretServiceIsolationTests.secretTool, other])
        #expect(copied.status == 0, "\(copied.stderr)")
        return (desktop, other)
    }

    static func answer(_ desktop: Desktop, _ how: String) throws {
        try (how + "\n").write(
            toFile: desktop.sandbox.directory.file("pinentry.answer"), atomically: true, encoding: .utf8)
    }

    static func questions(_ desktop: Desktop) -> Int {
        desktop.sandbox.file(desktop.sandbox.directory.file("pinentry.log")).components(separatedBy: "CONFIRM\n").count
            - 1
    }

    static func lookup(_ desktop: Desktop, _ program: String) throws -> String {
        try desktop.run(program, ["lookup", "service", "mail", "user", "alice"]).stdout
    }

    @Test func eachAnswerDoesWhatItSays() throws {
        let (desktop, other) = try Self.desktop()
        // Deny: nothing read, and not asked again until the keychain locks.
        #expect(try Self.lookup(desktop, other) == "")
        #expect(Self.questions(desktop) == 1, "\(desktop.sandbox.agentLog)")
        let asked = desktop.sandbox.file(desktop.sandbox.directory.file("pinentry.log"))
        #expect(
            asked.contains(
                "SETDESC \(other) wants to use your confidential information stored in this keychain item:\n"
                    + "  \"Mail\" service=mail user=alice\n"
                    + "  stored by secret-service:\(SecretServiceIsolationTests.secretTool)\nAsked by: \(other) (pid "),
            "\(asked)")
        #expect(!asked.contains("s3cret"))
        try Self.answer(desktop, "confirm")
        #expect(try Self.lookup(desktop, other) == "")
        #expect(Self.questions(desktop) == 1)

        // After a lock: asked again; Allow once reads it once and keeps nothing.
        #expect(try desktop.sandbox.cli("lock-keychain").status == 0)
        try desktop.sandbox.unlock()
        #expect(try Self.lookup(desktop, other) == "s3cret")
        #expect(Self.questions(desktop) == 2)
        #expect(try desktop.sandbox.cli("access", "list").stdout == "")

        // Always allow: on the item's list, read from then on without a question.
        try Self.answer(desktop, "notok")
        #expect(try Self.lookup(desktop, other) == "s3cret")
        #expect(Self.questions(desktop) == 3)
        let listed = try desktop.sandbox.cli("access", "list").stdout
        #expect(listed.contains("    executable \(other) "), "\(listed)")
        #expect(try Self.lookup(desktop, other) == "s3cret")
        #expect(Self.questions(desktop) == 3)

        // It reads the item, never changes or deletes it.
        let cleared = try desktop.run(other, ["clear", "service", "mail", "user", "alice"])
        #expect(cleared.status == 1)
        #expect(
            cleared.stderr.contains(
                "the item is another program's: its access list lets a program read it, not change it"),
            "\(cleared.stderr)")
        #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").stdout == "s3cret")

        // Taken off with one command: asked again at once.
        try Self.answer(desktop, "cancel")
        let reference = try #require(listed.split(separator: " ").first)
        #expect(try desktop.sandbox.cli("access", "remove", String(reference), other).status == 0)
        #expect(try Self.lookup(desktop, other) == "")
        #expect(Self.questions(desktop) == 4)

        // The log says how each read was allowed.
        let log = try desktop.sandbox.cli("log", "--item", String(reference)).stdout
        #expect(log.contains(": the user's answer: allow once\n"), "\(log)")
        #expect(log.contains(": the item's access list\n"), "\(log)")
    }

    @Test func withoutADisplayNothingIsOffered() throws {
        let (desktop, other) = try Self.desktop(display: false)
        #expect(try Self.lookup(desktop, other) == "")
        #expect(Self.questions(desktop) == 0)
        #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").stdout == "s3cret")
    }
}
