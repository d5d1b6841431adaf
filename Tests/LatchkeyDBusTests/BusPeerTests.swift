import Foundation
import LatchkeyDBus
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the bus daemon says of the connections on it — the facts the Secret Service's caller checks start
/// from — and how a connection to a bus that is not there fails.
@Suite(.serialized) struct BusPeerTests {
    @Test func theDaemonKnowsThisProcess() throws {
        let bus = try PrivateBus()
        let client = try Bus(address: bus.address)
        let unique = try #require(client.uniqueName)
        #expect(unique.hasPrefix(":1."))
        let credentials = try client.connectionCredentials(of: unique)
        #expect(credentials.uid == getuid())
        #expect(credentials.pid == getpid())
        #expect(try client.processID(of: unique) == getpid())
        let both = try client.credentials(of: unique)
        #expect(both.uid == getuid() && both.pid == getpid())
        #expect(try client.names().contains(unique))
        #expect(client.socketDescriptor != nil)
    }

    @Test func aNameTakenIsListedAndCannotBeTakenTwice() throws {
        let bus = try PrivateBus()
        let first = try Bus(address: bus.address)
        try first.requestName("org.latchkey.PeerTest")
        #expect(try first.names().contains("org.latchkey.PeerTest"))
        let second = try Bus(address: bus.address)
        do {
            try second.requestName("org.latchkey.PeerTest")
            Issue.record("a name was owned twice")
        } catch {
            #expect(error.operation == "taking the name org.latchkey.PeerTest")
            #expect(error.code == -EEXIST)
        }
    }

    @Test func aPeerThatIsNotThereIsAnError() throws {
        let bus = try PrivateBus()
        let client = try Bus(address: bus.address)
        do {
            _ = try client.connectionCredentials(of: ":1.9999")
            Issue.record("credentials of nobody")
        } catch {
            #expect(error.operation == "org.freedesktop.DBus.GetConnectionCredentials")
            #expect(error.detail?.hasPrefix("org.freedesktop.DBus.Error.NameHasNoOwner: ") == true)
        }
    }

    @Test func noBusAtTheAddressIsAnError() {
        let directory = TemporaryDirectory()
        let address = "unix:path=" + directory.file("nothing-here")
        do {
            _ = try Bus(address: address)
            Issue.record("connected to nothing")
        } catch {
            #expect(error.description == "connecting to the bus at \(address): No such file or directory")
            #expect(error.code == -ENOENT)
        }
    }
}
