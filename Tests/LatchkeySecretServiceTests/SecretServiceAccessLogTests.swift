import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// The access log through the Secret Service (issue 53, point 3): under the isolated policy, `secret-tool`'s
/// store, lookup and clear are each an entry naming the program it acts as (its path), its process, the
/// item, and the front end — never the secret.
@Suite(.serialized, .dedicatedThreads) struct SecretServiceAccessLogTests {
    @Test func secretToolsRequestsAreLoggedAsItsOwn() throws {
        let desktop = try SecretServiceTests.Desktop(agentArguments: ["--secret-service-policy", "isolated"])
        try desktop.sandbox.unlock()
        #expect(
            try desktop.secretTool("store", "--label=Mail", "service", "mail", "user", "alice", input: "s3cret-value")
                .status == 0)
        #expect(try desktop.secretTool("lookup", "service", "mail", "user", "alice").stdout == "s3cret-value")
        #expect(try desktop.secretTool("clear", "service", "mail", "user", "alice").status == 0)
        let tool = URL(fileURLWithPath: "/usr/bin/secret-tool").resolvingSymlinksInPath().path
        let log = try desktop.sandbox.cli("log", "--program", tool).stdout
        let lines = log.split(separator: "\n").map(String.init)
        // The bus daemon's word for the process: its pid and user.
        let by =
            #" by "# + tool + #" \(acting as secret-service:"# + tool
            + #"\) pid \d+ uid \d+ through the Secret Service: "#
        #expect(!lines.isEmpty && lines.allSatisfy { $0.range(of: by, options: .regularExpression) != nil }, "\(log)")
        #expect(lines.contains { $0.contains(" allowed add genp ") && $0.contains("label=Mail") }, "\(log)")
        #expect(lines.contains { $0.contains(" allowed read genp ") && $0.contains("label=Mail") }, "\(log)")
        #expect(lines.contains { $0.contains(" allowed delete genp ") && $0.contains("label=Mail") }, "\(log)")
        #expect(!log.contains("s3cret-value"))
        try desktop.expectNothingInTheClear(["s3cret-value"])
    }
}
