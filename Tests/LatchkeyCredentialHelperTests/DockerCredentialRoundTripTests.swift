import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// docker-credential-latchkey driven as docker drives a credential store: the action as the argument, JSON
/// (or a server URL) on standard input, JSON on standard output.
@Suite struct DockerCredentialRoundTripTests {
    @Test func storeGetListEraseRoundTrip() throws {
        let sandbox = try HelperSandbox()
        let stored = try sandbox.dockerHelper(
            "store", #"{"ServerURL":"https://registry.example.com","Username":"alice","Secret":"s3cret"}"# + "\n")
        #expect(stored.status == 0 && stored.stdout.isEmpty && stored.stderr.isEmpty, "\(stored.stdout)")

        let got = try sandbox.dockerHelper("get", "https://registry.example.com")
        #expect(got.status == 0)
        #expect(
            got.stdout == #"{"ServerURL":"https://registry.example.com","Username":"alice","Secret":"s3cret"}"# + "\n")
        // docker names a registry without its scheme too: https is the default.
        let bare = try sandbox.dockerHelper("get", "registry.example.com\n")
        #expect(bare.stdout == #"{"ServerURL":"registry.example.com","Username":"alice","Secret":"s3cret"}"# + "\n")

        let listed = try sandbox.dockerHelper("list", "unused")
        #expect(listed.status == 0 && listed.stdout == #"{"https://registry.example.com":"alice"}"# + "\n")

        let erased = try sandbox.dockerHelper("erase", "https://registry.example.com")
        #expect(erased.status == 0 && erased.stdout.isEmpty)
        let missing = try sandbox.dockerHelper("get", "https://registry.example.com")
        #expect(
            missing.status == 1 && missing.stdout == "credentials not found in native keychain\n"
                && missing.stderr.isEmpty)
        let again = try sandbox.dockerHelper("erase", "https://registry.example.com")
        #expect(again.status == 1 && again.stdout == "credentials not found in native keychain\n")
        #expect(try sandbox.dockerHelper("list").stdout == "{}\n")
    }

    @Test func anIdentityTokenIsTheTokenUsername() throws {
        let sandbox = try HelperSandbox()
        let stored = try sandbox.dockerHelper(
            "store", #"{"ServerURL":"https://index.docker.io/v1/","Username":"<token>","Secret":"eyJhbGciOi.x&y"}"#)
        #expect(stored.status == 0, "\(stored.stdout)")
        let got = try sandbox.dockerHelper("get", "https://index.docker.io/v1/")
        // Byte for byte what Go's encoder writes (docker's helpers are Go): HTML characters escaped.
        #expect(
            got.stdout
                == #"{"ServerURL":"https://index.docker.io/v1/","Username":"\u003ctoken\u003e","Secret":"eyJhbGciOi.x\u0026y"}"#
                + "\n")
        #expect(
            try sandbox.dockerHelper("list").stdout == #"{"https://index.docker.io/v1/":"\u003ctoken\u003e"}"# + "\n")
    }

    @Test func storeReplacesTheLoginOfTheURL() throws {
        let sandbox = try HelperSandbox()
        _ = try sandbox.dockerHelper("store", #"{"ServerURL":"localhost:5000","Username":"alice","Secret":"one"}"#)
        _ = try sandbox.dockerHelper("store", #"{"ServerURL":"localhost:5000","Username":"bob","Secret":"two"}"#)
        _ = try sandbox.dockerHelper(
            "store", #"{"ServerURL":"http://localhost:5001/v2","Username":"carol","Secret":"three"}"#)
        #expect(
            try sandbox.dockerHelper("get", "localhost:5000").stdout
                == #"{"ServerURL":"localhost:5000","Username":"bob","Secret":"two"}"# + "\n")
        #expect(
            try sandbox.dockerHelper("list").stdout
                == #"{"http://localhost:5001/v2":"carol","https://localhost:5000":"bob"}"# + "\n")
        #expect(try sandbox.internetPasswords().count == 2)
        // Port, scheme and path are part of the login's place.
        #expect(try sandbox.dockerHelper("get", "localhost:5001/v2").status == 1)
        #expect(try sandbox.dockerHelper("get", "http://localhost:5001").status == 1)
        #expect(try sandbox.dockerHelper("get", "http://localhost:5001/v2").status == 0)
    }

    @Test func theItemIsLabelledAndKeyedAsDockerCredentialOsxkeychainDoes() throws {
        let sandbox = try HelperSandbox()
        _ = try sandbox.dockerHelper(
            "store", #"{"ServerURL":"https://registry.example.com:8443/v2/?x=1","Username":"alice","Secret":"s3cret"}"#)
        let item = try #require(try sandbox.internetPasswords().first)
        #expect(item[.label] == .string("Docker Credentials"))
        #expect(item[.protocol] == .string("htps"))
        #expect(item[.server] == .string("registry.example.com"))
        #expect(item[.port] == .number(8443))
        #expect(item[.path] == .string("/v2/"))
        #expect(item[.account] == .string("alice"))
        #expect(item[.authenticationType] == .string("dflt"))
        #expect(item[.accessGroup] == .string("docker-credential-latchkey"))
        #expect(item.data == Data("s3cret".utf8))
    }

    @Test func listShowsOnlyDockerItems() throws {
        let sandbox = try HelperSandbox()
        _ = try sandbox.dockerHelper("store", #"{"ServerURL":"ghcr.io","Username":"alice","Secret":"s"}"#)
        // A git credential of the same keychain (and group) is no docker login.
        let environment = sandbox.environment.merging(["LATCHKEY_APPLICATION_ID": "docker-credential-latchkey"]) {
            _, new in new
        }
        _ = try sandbox.gitHelper(
            "store", lines("protocol=https", "host=github.com", "username=alice", "password=p"),
            environment: environment)
        #expect(try sandbox.internetPasswords().count == 2)
        #expect(try sandbox.dockerHelper("list").stdout == #"{"https://ghcr.io":"alice"}"# + "\n")
    }

    @Test func versionHelpAndUsage() throws {
        let sandbox = try HelperSandbox()
        #expect(try sandbox.dockerHelper("version").stdout == "docker-credential-latchkey (latchkey) 0.1.0\n")
        let usage = try sandbox.run(HelperSandbox.docker, [])
        #expect(
            usage.status == 1 && usage.stdout == "Usage: docker-credential-latchkey <store|get|erase|list|version>\n")
        let unknown = try sandbox.dockerHelper("frobnicate")
        #expect(unknown.status == 1 && unknown.stdout == "docker-credential-latchkey: unknown action: frobnicate\n")
        let help = try sandbox.run(HelperSandbox.docker, ["--help"])
        #expect(
            help.status == 0
                && help.stdout.hasPrefix("Usage: docker-credential-latchkey <store|get|erase|list|version>\n\n"))
        #expect(help.stdout.contains(#"{ "credsStore": "latchkey" }"#))
    }
}
