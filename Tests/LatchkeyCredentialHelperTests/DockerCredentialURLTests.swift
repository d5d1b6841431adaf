import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// A server URL is read strictly, so no two readers can disagree on its host: user information (`…@` before
/// the host, however it is spelt), a backslash, and any character RFC 3986 does not allow are refused — with
/// docker's kind of answer (the message on standard output, exit status 1) — for `get`, `erase` and `store`
/// alike, where Go's `net/url` (docker's own parser) refuses them or would read another host than a lenient
/// parser. Registries as docker names them (host:port, IPv6 literals, paths) still work.
@Suite struct DockerCredentialURLTests {
    static let stored = #"{"ServerURL":"https://registry.example.com","Username":"alice","Secret":"kept-secret"}"#

    func sandboxHoldingOne() throws -> HelperSandbox {
        let sandbox = try HelperSandbox()
        let stored = try sandbox.dockerHelper("store", Self.stored)
        #expect(stored.status == 0, "\(stored.stdout)")
        return sandbox
    }

    /// The issue's request: `get` of a URL whose "user" is evil.example\ and whose host is the registry.
    @Test func theCraftedURLOfTheIssueGetsNoSecret() throws {
        let sandbox = try sandboxHoldingOne()
        let got = try sandbox.dockerHelper("get", #"https://evil.example\@registry.example.com"#)
        #expect(got.status == 1)
        #expect(got.stdout == #"invalid character "\\" in the server URL"# + "\n")
        #expect(got.stderr.isEmpty)
        #expect(!got.stdout.contains("kept-secret"))
    }

    static let userInformation =
        #"the server URL names a user (user information before "@"), which a registry's URL may not"#

    @Test(arguments: [
        (#"evil.example\@registry.example.com"#, #"invalid character "\\" in the server URL"#),
        (#"https://registry.example.com\@evil.example"#, #"invalid character "\\" in the server URL"#),
        (#"https://registry.example.com\v2"#, #"invalid character "\\" in the server URL"#),
        ("https://alice@registry.example.com", userInformation),
        ("https://alice:password@registry.example.com", userInformation),
        ("https://@registry.example.com", userInformation),
        ("registry.example.com@registry.example.com", userInformation),
        ("https://evil.example%40@registry.example.com", userInformation),
        ("https://evil.example%5C@registry.example.com", userInformation),
        ("https://evil.example%40registry.example.com", "the server URL's host may not be percent-encoded"),
        ("https://registry.example.com%2Fv2", "the server URL's host may not be percent-encoded"),
        ("https://registry.example.com/v2/%zz", #"invalid URL escape "%zz""#),
        ("https://registry.example.com/v2/%4", #"invalid URL escape "%4""#),
        ("https://registry.example.com/v2 /x", #"invalid character " " in the server URL"#),
        ("https://registry.example.com/v2/\u{7}", #"invalid character "\u{07}" in the server URL"#),
        ("https://registry.example.com/v2/\u{E9}", #"invalid character "é" in the server URL"#),
        ("https://registry.example.com/v2/\"", #"invalid character "\"" in the server URL"#),
        ("https://registry.example.com/v2/<x>", #"invalid character "<" in the server URL"#),
        ("https://registry.example.com/v2/{x}", #"invalid character "{" in the server URL"#),
        ("https://registry.example.com/v2/a|b", #"invalid character "|" in the server URL"#),
        ("https://registry.example.com/v2/[x]", #"invalid character "[" in the server URL's path"#),
        ("https://registry.example.com/v2?[x]", #"invalid character "[" in the server URL's query"#),
        ("https://reg;istry.example.com", #"invalid character ";" in host name"#),
        ("https://registry.example.com:443:443", #"invalid character ":" in host name"#),
        ("https://registry.example.com:44x3", #"invalid port ":44x3" after host"#),
        ("https://registry.example.com:99999", "the server URL's port is not a number from 0 to 65535"),
        ("https://[::1", "missing ']' in host"),
        ("https://[::g]:5000", "the server URL's host is not an IPv6 address in brackets"),
        ("https://[::1]x", #"invalid port "x" after host"#),
        ("https://", "no hostname in URL"),
        ("https:registry.example.com", #"invalid port ":registry.example.com" after host"#),
        ("https:///v2", "no hostname in URL"),
        ("1http://registry.example.com", "first path segment in URL cannot contain colon"),
        ("https://registry.example.com/%FF", "the server URL's path is not UTF-8 once decoded"),
        ("https://registry.example.com/v2#a#b", ##"invalid character "#" in the server URL's fragment"##),
        ("ftp://registry.example.com", "unsupported scheme: ftp"),
    ])
    func aServerURLOutsideRFC3986OrNamingAUserIsRefused(url: String, message: String) throws {
        let sandbox = try sandboxHoldingOne()
        for action in ["get", "erase"] {
            let output = try sandbox.dockerHelper(action, url)
            #expect(output.status == 1, "\(action) \(url)")
            #expect(output.stdout == message + "\n", "\(action) \(url)")
            #expect(output.stderr.isEmpty)
        }
        let json = try JSONSerialization.data(withJSONObject: ["ServerURL": url, "Username": "mallory", "Secret": "x"])
        let store = try sandbox.dockerHelper("store", String(decoding: json, as: UTF8.self))
        #expect(store.status == 1 && store.stdout == message + "\n", "store \(url): \(store.stdout)")
        // The registry's login is untouched.
        #expect(try sandbox.dockerHelper("get", "https://registry.example.com").stdout == Self.stored + "\n")
        #expect(try sandbox.internetPasswords().count == 1)
    }

    @Test(arguments: [
        ("registry.example.com:5000", "https://registry.example.com:5000"),
        ("https://[::1]:5000/v2/", "https://[::1]:5000/v2/"),
        ("http://[fe80::1%25eth0]:5000", "http://[fe80::1%25eth0]:5000"),
        ("https://registry.example.com/v2/library/a-b_c.d~e", "https://registry.example.com/v2/library/a-b_c.d~e"),
        ("https://registry.example.com/v2/%41?x=1&y=%2F#top", "https://registry.example.com/v2/A"),
        ("https://registry.example.com:/v2/!$&'()*+,;=:@", "https://registry.example.com/v2/!$&'()*+,%3B=:@"),
        ("HTTPS://Registry.Example.com", "https://Registry.Example.com"),
        ("//registry.example.com", "https://registry.example.com"),
    ])
    func registriesAsDockerNamesThemStillWork(url: String, listed: String) throws {
        let sandbox = try HelperSandbox()
        let json = try JSONSerialization.data(withJSONObject: ["ServerURL": url, "Username": "alice", "Secret": "s"])
        let stored = try sandbox.dockerHelper("store", String(decoding: json, as: UTF8.self))
        #expect(stored.status == 0, "\(url): \(stored.stdout)")
        let got = try sandbox.dockerHelper("get", url)
        #expect(got.status == 0, "\(url): \(got.stdout)")
        #expect(got.stdout.contains(#""Username":"alice","Secret":"s"}"#), "\(url): \(got.stdout)")
        let list = try sandbox.dockerHelper("list")
        #expect(list.stdout.contains(listed.replacingOccurrences(of: "&", with: #"\u0026"#)), "\(url): \(list.stdout)")
    }
}
