import Foundation
import LatchkeyDBus
import Testing

/// `BusMessage`'s coding through a real `dbus-daemon`: each type Latchkey's front ends read and write leaves
/// one connection and arrives at another as it was written, and a value of the wrong type is an error naming
/// what was expected.
@Suite(.serialized) struct BusMessageCodingTests {
    static let name = "org.latchkey.CodingTest"
    static let interface = "org.latchkey.CodingTest"

    /// An echo server: each method reads its arguments and answers them back, changed in a known way.
    static func echo(_ bus: Bus, _ call: BusMessage) -> Bool {
        do throws(BusError) {
            let reply = try bus.reply(to: call)
            switch call.member {
            case "Texts":
                let text = try call.readString()
                let path = try call.readString("o")
                try reply.append(path, as: "o")
                try reply.append(text)
                try reply.append("s", as: "g")
            case "Numbers":
                let small = try call.readUInt32()
                try reply.append(small &+ 1)
                try reply.append(UInt64(small) << 32)
                try reply.append(!(try call.readBool()))
            case "Bytes":
                try reply.append(bytes: (try call.readBytes()).reversed())
            case "Dictionary":
                let dictionary = try call.readStringDictionary()
                try reply.open("a", "{ss}")
                for key in dictionary.keys.sorted() {
                    try reply.open("e", "ss")
                    try reply.append(key)
                    try reply.append(dictionary[key]! + "!")
                    try reply.close()
                }
                try reply.close()
                try reply.open("a", "o")
                for index in 0..<dictionary.count { try reply.append("/item/\(index)", as: "o") }
                try reply.close()
            case "Refuse":
                bus.fail(call, name: "org.latchkey.CodingTest.Error.Refused", "no, thanks")
                return true
            default:
                return false
            }
            try bus.send(reply)
        } catch {
            bus.fail(call, name: "org.latchkey.CodingTest.Error.Unread", error.description)
        }
        return true
    }

    let bus: PrivateBus
    let client: Bus

    init() throws {
        bus = try PrivateBus()
        try bus.serve(Self.name, under: "/test", Self.echo)
        client = try Bus(address: bus.address)
    }

    func call(_ member: String, _ build: (BusMessage) throws(BusError) -> Void = { _ throws(BusError) in })
        throws(BusError) -> BusMessage
    {
        try client.call(Self.name, path: "/test", interface: Self.interface, member: member, timeoutSeconds: 10, build)
    }

    @Test func textsPathsAndSignatures() throws {
        let reply = try call("Texts") { (message) throws(BusError) in
            try message.append("h\u{E9}llo, w\u{F6}rld")
            try message.append("/org/freedesktop/secrets/collection/login", as: "o")
        }
        #expect(reply.signature == "osg")
        #expect(try reply.readString("o") == "/org/freedesktop/secrets/collection/login")
        #expect(try reply.readString() == "h\u{E9}llo, w\u{F6}rld")
        #expect(try reply.readString("g") == "s")
        #expect(try reply.peek() == nil)
    }

    @Test func numbersAndBooleans() throws {
        let reply = try call("Numbers") { (message) throws(BusError) in
            try message.append(UInt32.max)
            try message.append(false)
        }
        #expect(reply.signature == "utb")
        #expect(try reply.readUInt32() == 0)
        // A "t" has no reader of its own: skipped whole, and the next value is read.
        #expect(try reply.peek()?.type == "t")
        try reply.skip()
        #expect(try reply.readBool() == true)
    }

    @Test func bytesEveryValueAndNone() throws {
        let every = (0...255).map { UInt8($0) }
        let reply = try call("Bytes") { (message) throws(BusError) in try message.append(bytes: every) }
        #expect(try reply.readBytes() == every.reversed())
        let empty = try call("Bytes") { (message) throws(BusError) in try message.append(bytes: []) }
        #expect(try empty.readBytes() == [])
    }

    @Test func stringDictionariesAndObjectPaths() throws {
        let sent = ["service": "imap", "user": "alice", "": "empty key", "xdg:schema": ""]
        let reply = try call("Dictionary") { (message) throws(BusError) in
            try message.open("a", "{ss}")
            for (key, value) in sent {
                try message.open("e", "ss")
                try message.append(key)
                try message.append(value)
                try message.close()
            }
            try message.close()
        }
        #expect(reply.signature == "a{ss}ao")
        #expect(try reply.readStringDictionary() == sent.mapValues { $0 + "!" })
        #expect(try reply.readObjectPaths() == ["/item/0", "/item/1", "/item/2", "/item/3"])
    }

    @Test func aValueOfAnotherTypeIsAnError() throws {
        let reply = try call("Bytes") { (message) throws(BusError) in try message.append(bytes: [1]) }
        do {
            _ = try reply.readString()
            Issue.record("a byte array was read as a string")
        } catch {
            #expect(error.description == "reading a string of a reply: No such device or address")
            #expect(error.code == -6)
        }
        // The server meets the same when the call's arguments are not what it reads.
        do {
            _ = try call("Numbers") { (message) throws(BusError) in try message.append("not a number") }
            Issue.record("the server read a number from a string")
        } catch {
            #expect(
                error.detail
                    == "org.latchkey.CodingTest.Error.Unread: reading an unsigned integer of Numbers: No such device or address"
            )
        }
    }

    @Test func errorRepliesCarryTheirNameAndMessage() throws {
        do {
            _ = try call("Refuse")
            Issue.record("a refusal was a reply")
        } catch {
            #expect(error.operation == "org.latchkey.CodingTest.Refuse")
            #expect(error.detail == "org.latchkey.CodingTest.Error.Refused: no, thanks")
        }
        do {
            _ = try call("Unheard")
            Issue.record("an unknown method was answered")
        } catch {
            #expect(error.detail?.hasPrefix("org.freedesktop.DBus.Error.UnknownMethod: ") == true)
        }
    }
}
