import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// Bad requests get docker's kind of answer — the message on standard output, exit status 1 — and the login
/// stored before them is untouched.
@Suite struct DockerCredentialBadInputTests {
    func sandboxHoldingOne() throws -> HelperSandbox {
        let sandbox = try HelperSandbox()
        let stored = try sandbox.dockerHelper(
            "store", #"{"ServerURL":"https://registry.example.com","Username":"alice","Secret":"kept-secret"}"#)
        #expect(stored.status == 0, "\(stored.stdout)")
        return sandbox
    }

    func expectStillThere(_ sandbox: HelperSandbox) throws {
        let got = try sandbox.dockerHelper("get", "https://registry.example.com")
        #expect(
            got.stdout == #"{"ServerURL":"https://registry.example.com","Username":"alice","Secret":"kept-secret"}"#
                + "\n")
        #expect(try sandbox.internetPasswords().count == 1)
    }

    @Test(arguments: [
        ("not json", "the input is not JSON"),
        (#"{"ServerURL":"https://registry.example.com","Username":"alice","Secret":"x""#, "the input is not JSON"),
        (#"["https://registry.example.com"]"#, "the input is not a JSON object with ServerURL, Username and Secret"),
        (
            #"{"ServerURL":"https://registry.example.com","Username":"alice","Secret":"x","Password":"y"}"#,
            #"unknown key "Password" (the keys are ServerURL, Username and Secret)"#
        ),
        (#"{"ServerURL":"https://registry.example.com","Username":7,"Secret":"x"}"#, "Username is not a string"),
        (#"{"Username":"alice","Secret":"x"}"#, "no credentials server URL"),
        (#"{"ServerURL":"https://registry.example.com","Secret":"x"}"#, "no credentials username"),
        (#"{"ServerURL":"https://registry.example.com","Username":null,"Secret":"x"}"#, "no credentials username"),
        (#"{"ServerURL":"ftp://registry.example.com","Username":"alice","Secret":"x"}"#, "unsupported scheme: ftp"),
        (#"{"ServerURL":"https:///v2","Username":"alice","Secret":"x"}"#, "no hostname in URL"),
        ("", "the input is not JSON"),
    ])
    func aBadStoreIsRefusedAndLosesNothing(input: String, message: String) throws {
        let sandbox = try sandboxHoldingOne()
        let output = try sandbox.dockerHelper("store", input)
        #expect(output.status == 1)
        #expect(output.stdout == message + "\n")
        #expect(output.stderr.isEmpty)
        try expectStillThere(sandbox)
    }

    @Test func keysMatchInAnyCaseAsGosDecoderMatchesThem() throws {
        let sandbox = try HelperSandbox()
        let stored = try sandbox.dockerHelper("store", #"{"serverurl":"ghcr.io","USERNAME":"alice","secret":"s"}"#)
        #expect(stored.status == 0, "\(stored.stdout)")
        #expect(
            try sandbox.dockerHelper("get", "ghcr.io").stdout
                == #"{"ServerURL":"ghcr.io","Username":"alice","Secret":"s"}"# + "\n")
    }

    @Test func aLineOfTenMegabytesIsRefused() throws {
        let sandbox = try sandboxHoldingOne()
        let huge =
            #"{"ServerURL":"https://registry.example.com","Username":"alice","Secret":""#
            + String(repeating: "x", count: 10 << 20) + "\"}\n"
        for action in ["store", "get", "erase"] {
            let output = try sandbox.dockerHelper(action, huge)
            #expect(output.status == 1)
            #expect(output.stdout == "the input is larger than 1 MiB\n")
        }
        try expectStillThere(sandbox)
    }

    @Test func getAndEraseWithoutAURLAreDockersMissingURL() throws {
        let sandbox = try sandboxHoldingOne()
        for action in ["get", "erase"] {
            let output = try sandbox.dockerHelper(action, " \n")
            #expect(output.status == 1 && output.stdout == "no credentials server URL\n")
            let bad = try sandbox.dockerHelper(action, "unix:///var/run/docker.sock")
            #expect(bad.status == 1 && bad.stdout == "unsupported scheme: unix\n")
        }
        try expectStillThere(sandbox)
    }
}
