import CSystemd
package import LatchkeyPOSIX

/// A failed call on the system bus: the negative errno sd-bus returned and, for a method call, the D-Bus
/// error it carried.
package struct BusError: Error, CustomStringConvertible {
    /// What was being done ("connecting to the system bus", "org.freedesktop.login1.Manager.Inhibit").
    package let operation: String
    /// sd-bus's negative errno.
    package let code: Int32
    /// The D-Bus error's message, when the peer sent one.
    package let detail: String?

    package var description: String {
        "\(operation): \(detail ?? Errno(-code).description)"
    }
}

/// A D-Bus connection through libsystemd's sd-bus — this file holds every call to libsystemd (module
/// `LatchkeyDBus` alone imports it). sd-bus objects are not thread-safe: a `Bus` is made, used and dropped
/// on one thread (it is not `Sendable`). `DBUS_SYSTEM_BUS_ADDRESS` and `DBUS_SESSION_BUS_ADDRESS` point it
/// at another bus (the tests' private ones).
package final class Bus {
    /// Holds a signal handler for as long as the bus lives; sd-bus keeps only a raw pointer to it.
    private final class Handler {
        let call: (Bool) -> Void
        init(_ call: @escaping (Bool) -> Void) { self.call = call }
    }

    /// Holds an object handler for as long as the bus lives.
    private final class ObjectHandler {
        let call: (BusMessage) -> Bool
        init(_ call: @escaping (BusMessage) -> Bool) { self.call = call }
    }

    private let bus: OpaquePointer
    private var handlers: [Unmanaged<Handler>] = []
    private var objectHandlers: [Unmanaged<ObjectHandler>] = []

    /// Which bus.
    package enum Kind: Sendable { case system, session }

    /// Connects to the system bus or to the session bus.
    package init(_ kind: Kind = .system) throws(BusError) {
        if case .failure(let error) = SDBus.loaded {
            // -ELIBACC: cannot access a needed shared library.
            throw BusError(operation: "loading libsystemd", code: -79, detail: error.message)
        }
        var opened: OpaquePointer?
        let code = kind == .system ? SDBus.library.openSystem(&opened) : SDBus.library.openUser(&opened)
        guard code >= 0, let opened else {
            throw BusError(
                operation: "connecting to the \(kind == .system ? "system" : "session") bus", code: code, detail: nil)
        }
        bus = opened
    }

    deinit {
        _ = SDBus.library.flushCloseUnref(bus)
        for handler in handlers { handler.release() }
        for handler in objectHandlers { handler.release() }
    }

    /// Takes a well-known name (fails when another connection owns it).
    package func requestName(_ name: String) throws(BusError) {
        let code = SDBus.library.requestName(bus, name, 0)
        guard code >= 0 else { throw BusError(operation: "taking the name \(name)", code: code, detail: nil) }
    }

    /// This connection's unique name (":1.42").
    package var uniqueName: String? {
        var name: UnsafePointer<CChar>?
        guard SDBus.library.getUniqueName(bus, &name) >= 0, let name else { return nil }
        return String(cString: name)
    }

    /// Hands every method call to `path` and the objects below it to `handler`, which answers it (a reply
    /// or an error, through `reply`/`fail`) and returns true — or returns false to let sd-bus answer
    /// `UnknownMethod`/`UnknownObject`.
    package func handleObjects(under path: String, _ handler: @escaping (BusMessage) -> Bool) throws(BusError) {
        let box = Unmanaged.passRetained(ObjectHandler(handler))
        let code = SDBus.library.addFallback(
            bus, nil, path,
            { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                let handled = Unmanaged<ObjectHandler>.fromOpaque(userdata).takeUnretainedValue().call(
                    BusMessage(retaining: message))
                return handled ? 1 : 0
            }, box.toOpaque())
        guard code >= 0 else {
            box.release()
            throw BusError(operation: "serving objects under \(path)", code: code, detail: nil)
        }
        objectHandlers.append(box)
    }

    /// Calls `handler` with the name of every peer that leaves the bus (NameOwnerChanged to no owner).
    package func onPeerGone(_ handler: @escaping (String) -> Void) throws(BusError) {
        try onPeers(arrived: { _ in }, gone: handler)
    }

    /// Calls `arrived` with the unique name of every connection that joins the bus, and `gone` with that of
    /// every one that leaves it (`NameOwnerChanged` from the bus itself).
    package func onPeers(arrived: @escaping (String) -> Void, gone handler: @escaping (String) -> Void) throws(BusError)
    {
        let rule =
            "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'"
        try addMatch(rule, during: "watching peers leave") { message in
            // NameOwnerChanged(name, old owner, new owner); `try?`: a malformed signal from the bus itself
            // tells nothing, and there is no caller to report it to.
            guard let name = try? message.readString(), let oldOwner = try? message.readString(),
                let newOwner = try? message.readString()
            else { return }
            if newOwner.isEmpty && name.hasPrefix(":") { handler(name) }
            if oldOwner.isEmpty && name.hasPrefix(":") && !newOwner.isEmpty { arrived(name) }
        }
    }

    /// Adds the match `rule`, calling `handler` with every message it lets through (other matches see it
    /// too); `during` names the step in the error when the bus refuses the rule.
    private func addMatch(_ rule: String, during: String, _ handler: @escaping (BusMessage) -> Void)
        throws(BusError)
    {
        let box = Unmanaged.passRetained(
            ObjectHandler { message in
                handler(message)
                return false
            })
        let code = SDBus.library.addMatch(
            bus, nil, rule,
            { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                _ = Unmanaged<ObjectHandler>.fromOpaque(userdata).takeUnretainedValue().call(
                    BusMessage(retaining: message))
                return 0
            }, box.toOpaque())
        guard code >= 0 else {
            box.release()
            throw BusError(operation: during, code: code, detail: nil)
        }
        objectHandlers.append(box)
    }

    /// A reply to `call`, to fill and `send`.
    package func reply(to call: BusMessage) throws(BusError) -> BusMessage {
        var reply: OpaquePointer?
        let code = SDBus.library.messageNewMethodReturn(call.message, &reply)
        guard code >= 0, let reply else { throw BusError(operation: "replying", code: code, detail: nil) }
        return BusMessage(adopting: reply)
    }

    /// Answers `call` with the D-Bus error `name` and `text`.
    package func fail(_ call: BusMessage, name: String, _ text: String) {
        var error = sd_bus_error()
        defer { SDBus.library.errorFree(&error) }
        _ = SDBus.library.errorSet(&error, name, text)
        _ = SDBus.library.replyMethodError(call.message, &error)  // A caller that left gets no answer: nothing to do.
    }

    /// A signal to fill and `send`.
    package func signal(path: String, interface: String, member: String) throws(BusError) -> BusMessage {
        var signal: OpaquePointer?
        let code = SDBus.library.messageNewSignal(bus, &signal, path, interface, member)
        guard code >= 0, let signal else {
            throw BusError(operation: "emitting \(interface).\(member)", code: code, detail: nil)
        }
        return BusMessage(adopting: signal)
    }

    /// Sends a reply or a signal.
    package func send(_ message: BusMessage) throws(BusError) {
        let code = SDBus.library.send(bus, message.message, nil)
        guard code >= 0 else { throw BusError(operation: "sending", code: code, detail: nil) }
    }

    /// What the bus daemon recorded of a connection when it connected (`GetConnectionCredentials`): its
    /// user, its process, and the security label its LSM gave it (an AppArmor profile such as
    /// `snap.app.app (enforce)`, an SELinux context), when the daemon reports one.
    package struct PeerCredentials: Sendable, Equatable {
        /// The user id.
        package let uid: UInt32
        /// The process id (in the daemon's pid namespace).
        package let pid: Int32
        /// The LSM label's bytes (without a terminating zero), or nil when the daemon reports none.
        package let securityLabel: [UInt8]?

        /// Credentials as given.
        package init(uid: UInt32, pid: Int32, securityLabel: [UInt8]?) {
            self.uid = uid
            self.pid = pid
            self.securityLabel = securityLabel
        }
    }

    /// What the daemon recorded of `peer` (a unique name) when it connected.
    package func connectionCredentials(of peer: String) throws(BusError) -> PeerCredentials {
        let reply = try call(
            "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionCredentials"
        ) { (message) throws(BusError) in try message.append(peer) }
        var uid: UInt32?
        var pid: UInt32?
        var label: [UInt8]?
        _ = try reply.enter("a", "{sv}")
        while try reply.enter("e", "sv") {
            let key = try reply.readString()
            guard let (type, contents) = try reply.peek(), type == "v" else {
                throw BusError(
                    operation: "GetConnectionCredentials", code: -Errno.badMessage.code, detail: "no variant")
            }
            _ = try reply.enter("v", contents)
            switch (key, contents) {
            case ("UnixUserID", "u"): uid = try reply.readUInt32()
            case ("ProcessID", "u"): pid = try reply.readUInt32()
            case ("LinuxSecurityLabel", "ay"):
                // The daemon includes the label's terminating zero.
                var bytes = try reply.readBytes()
                if bytes.last == 0 { bytes.removeLast() }
                label = bytes
            default: try reply.skip()
            }
            try reply.exit()
            try reply.exit()
        }
        try reply.exit()
        guard let uid, let pid, pid <= UInt32(Int32.max) else {
            throw BusError(
                operation: "asking who \(peer) is", code: -Errno.badMessage.code, detail: "the bus did not say")
        }
        return PeerCredentials(uid: uid, pid: Int32(pid), securityLabel: label)
    }

    /// The process the daemon recorded for a connection (`GetConnectionUnixProcessID`).
    package func processID(of peer: String) throws(BusError) -> Int32 {
        let reply = try call(
            "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionUnixProcessID"
        ) { (message) throws(BusError) in try message.append(peer) }
        return Int32(truncatingIfNeeded: try reply.readUInt32())
    }

    /// Every name on the bus, unique (`:1.42`) and well-known (`ListNames`).
    package func names() throws(BusError) -> [String] {
        let reply = try call(
            "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ListNames")
        var names: [String] = []
        _ = try reply.enter("a", "s")
        while try reply.peek() != nil { names.append(try reply.readString()) }
        try reply.exit()
        return names
    }

    /// The descriptor of this connection's socket (sd-bus's own: never closed or read by the caller).
    package var socketDescriptor: FileDescriptor? {
        let fd = SDBus.library.getFd(bus)
        return fd >= 0 ? FileDescriptor(rawValue: fd) : nil
    }

    /// The user and process of a peer, as the bus daemon knows them (from its socket credentials).
    package func credentials(of peer: String) throws(BusError) -> (uid: UInt32, pid: Int32) {
        var creds: OpaquePointer?
        let mask = UInt64(SD_BUS_CREDS_EUID) | UInt64(SD_BUS_CREDS_PID)
        let code = SDBus.library.getNameCreds(bus, peer, mask, &creds)
        guard code >= 0, let creds else { throw BusError(operation: "asking who \(peer) is", code: code, detail: nil) }
        defer { _ = SDBus.library.credsUnref(creds) }
        var uid: uid_t = 0
        var pid: pid_t = 0
        guard SDBus.library.credsGetEuid(creds, &uid) >= 0, SDBus.library.credsGetPid(creds, &pid) >= 0 else {
            throw BusError(
                operation: "asking who \(peer) is", code: -Errno.badMessage.code, detail: "the bus did not say")
        }
        return (uid, pid)
    }

    /// Calls `handler` with the first (boolean) argument of every signal `member` of `interface` that
    /// `sender` emits on `path`. The bus checks the sender: a signal from another peer is not delivered.
    package func onBooleanSignal(
        sender: String, path: String, interface: String, member: String, _ handler: @escaping (Bool) -> Void
    ) throws(BusError) {
        let rule = "type='signal',sender='\(sender)',path='\(path)',interface='\(interface)',member='\(member)'"
        let box = Unmanaged.passRetained(Handler(handler))
        let code = SDBus.library.addMatch(
            bus, nil, rule,
            { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                var value: Int32 = 0
                // A signal without a boolean argument is ignored (returning 0 lets other matches see it).
                guard SDBus.library.messageReadBasic(message, CChar(UInt8(ascii: "b")), &value) > 0 else { return 0 }
                Unmanaged<Handler>.fromOpaque(userdata).takeUnretainedValue().call(value != 0)
                return 0
            }, box.toOpaque())
        guard code >= 0 else {
            box.release()
            throw BusError(operation: "watching \(interface).\(member)", code: code, detail: nil)
        }
        handlers.append(box)
    }

    /// Calls `handler` with every signal `member` of `interface` that `sender` emits, on any path (the
    /// message's `path` says which object). The bus checks the sender: a signal from another peer is not
    /// delivered.
    package func onSignal(
        sender: String, interface: String, member: String, _ handler: @escaping (BusMessage) -> Void
    ) throws(BusError) {
        let rule = "type='signal',sender='\(sender)',interface='\(interface)',member='\(member)'"
        try addMatch(rule, during: "watching \(interface).\(member)", handler)
    }

    /// Calls a method of `destination`, with the arguments `build` appends; its reply, to read. A D-Bus error
    /// reply is thrown, its name and message in the detail.
    package func call(
        _ destination: String, path: String, interface: String, member: String, timeoutSeconds: UInt64 = 25,
        _ build: (BusMessage) throws(BusError) -> Void = { _ throws(BusError) in }
    ) throws(BusError) -> BusMessage {
        let operation = "\(interface).\(member)"
        var call: OpaquePointer?
        var code = SDBus.library.messageNewMethodCall(bus, &call, destination, path, interface, member)
        guard code >= 0, let call else { throw BusError(operation: operation, code: code, detail: nil) }
        let message = BusMessage(adopting: call)
        try build(message)
        var error = sd_bus_error()
        defer { SDBus.library.errorFree(&error) }
        var reply: OpaquePointer?
        code = SDBus.library.call(bus, message.message, timeoutSeconds * 1_000_000, &error, &reply)
        guard code >= 0, let reply else {
            let name = error.name.map { String(cString: $0) }
            let text = error.message.map { String(cString: $0) }
            throw BusError(operation: operation, code: code, detail: name.map { "\($0): \(text ?? "")" } ?? text)
        }
        return BusMessage(adopting: reply)
    }

    /// Calls a method whose arguments are strings and whose reply is one file descriptor; returns a
    /// duplicate of that descriptor, which the caller owns and closes.
    package func callReturningFileDescriptor(
        destination: String, path: String, interface: String, member: String, arguments: [String]
    ) throws(BusError) -> FileDescriptor {
        let operation = "\(interface).\(member)"
        var call: OpaquePointer?
        var code = SDBus.library.messageNewMethodCall(bus, &call, destination, path, interface, member)
        guard code >= 0, let call else { throw BusError(operation: operation, code: code, detail: nil) }
        defer { _ = SDBus.library.messageUnref(call) }
        for argument in arguments {
            code = argument.withCString { SDBus.library.messageAppendBasic(call, CChar(UInt8(ascii: "s")), $0) }
            guard code >= 0 else { throw BusError(operation: operation, code: code, detail: nil) }
        }
        var error = sd_bus_error()
        defer { SDBus.library.errorFree(&error) }
        var reply: OpaquePointer?
        code = SDBus.library.call(bus, call, 5_000_000, &error, &reply)
        guard code >= 0, let reply else {
            let detail = error.message.map { String(cString: $0) }
            throw BusError(operation: operation, code: code, detail: detail)
        }
        defer { _ = SDBus.library.messageUnref(reply) }
        var descriptor: Int32 = -1
        code = SDBus.library.messageReadBasic(reply, CChar(UInt8(ascii: "h")), &descriptor)
        guard code > 0, descriptor >= 0 else {
            throw BusError(
                operation: operation, code: code < 0 ? code : -Errno.badMessage.code,
                detail: "the reply holds no file descriptor")
        }
        // The descriptor belongs to the reply, which is freed on return.
        do throws(Errno) {
            return try FileDescriptor(rawValue: descriptor).duplicate()
        } catch {
            throw BusError(operation: operation, code: -error.code, detail: nil)
        }
    }

    /// Dispatches messages to the handlers as they arrive, and calls `tick` at least every
    /// `intervalMicroseconds` (for work other threads leave for this one), until the connection fails.
    package func run(intervalMicroseconds: UInt64, tick: () -> Void) throws(BusError) -> Never {
        while true {
            tick()
            let processed = SDBus.library.process(bus, nil)
            guard processed >= 0 else { throw BusError(operation: "reading the bus", code: processed, detail: nil) }
            if processed > 0 { continue }
            let waited = SDBus.library.wait(bus, intervalMicroseconds)
            guard waited >= 0 || waited == -Errno.interrupted.code else {
                throw BusError(operation: "waiting on the bus", code: waited, detail: nil)
            }
        }
    }

    /// Dispatches messages to the handlers as they arrive, until the connection fails.
    package func run() throws(BusError) -> Never {
        while true {
            let processed = SDBus.library.process(bus, nil)
            guard processed >= 0 else { throw BusError(operation: "reading the bus", code: processed, detail: nil) }
            if processed > 0 { continue }
            let waited = SDBus.library.wait(bus, UInt64.max)
            guard waited >= 0 || waited == -Errno.interrupted.code else {
                throw BusError(operation: "waiting on the bus", code: waited, detail: nil)
            }
        }
    }
}

/// A D-Bus message (a call, reply or signal): read its arguments in order, or append a reply's. Owns one
/// reference to the sd-bus message.
package final class BusMessage {
    let message: OpaquePointer

    init(retaining message: OpaquePointer) {
        self.message = message
        _ = SDBus.library.messageRef(message)
    }

    init(adopting message: OpaquePointer) { self.message = message }

    deinit { _ = SDBus.library.messageUnref(message) }

    private func text(_ value: UnsafePointer<CChar>?) -> String { value.map { String(cString: $0) } ?? "" }

    /// The object path, interface, member, sender and signature of a call.
    package var path: String { text(SDBus.library.messageGetPath(message)) }
    package var interface: String { text(SDBus.library.messageGetInterface(message)) }
    package var member: String { text(SDBus.library.messageGetMember(message)) }
    package var sender: String { text(SDBus.library.messageGetSender(message)) }
    package var signature: String { text(SDBus.library.messageGetSignature(message, 1)) }

    private static func code(_ character: Character) -> CChar { CChar(UInt8(ascii: character.unicodeScalars.first!)) }

    private func failed(_ what: String, _ code: Int32) -> BusError {
        BusError(
            operation: "reading \(what) of \(member)", code: code < 0 ? code : -Errno.badMessage.code,
            detail: code < 0 ? nil : "the message has no \(what) here")
    }

    // MARK: Reading

    /// Reads a string ("s") or an object path ("o").
    package func readString(_ type: Character = "s") throws(BusError) -> String {
        var value: UnsafePointer<CChar>?
        let code = SDBus.library.messageReadBasic(message, Self.code(type), &value)
        guard code > 0, let value else { throw failed(type == "o" ? "an object path" : "a string", code) }
        return String(cString: value)
    }

    /// Reads an unsigned 32-bit integer ("u").
    package func readUInt32() throws(BusError) -> UInt32 {
        var value: UInt32 = 0
        let code = SDBus.library.messageReadBasic(message, Self.code("u"), &value)
        guard code > 0 else { throw failed("an unsigned integer", code) }
        return value
    }

    /// Reads a boolean.
    package func readBool() throws(BusError) -> Bool {
        var value: Int32 = 0
        let code = SDBus.library.messageReadBasic(message, Self.code("b"), &value)
        guard code > 0 else { throw failed("a boolean", code) }
        return value != 0
    }

    /// Reads a byte array ("ay").
    package func readBytes() throws(BusError) -> [UInt8] {
        var pointer: UnsafeRawPointer?
        var size = 0
        let code = SDBus.library.messageReadArray(message, Self.code("y"), &pointer, &size)
        guard code >= 0 else { throw failed("a byte array", code) }
        guard let pointer, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: size))
    }

    /// Reads a file descriptor ("h"): a close-on-exec duplicate, which the caller owns and closes (the
    /// message's own copy goes with the message).
    package func readFileDescriptor() throws(BusError) -> FileDescriptor {
        var descriptor: Int32 = -1
        let code = SDBus.library.messageReadBasic(message, Self.code("h"), &descriptor)
        guard code > 0, descriptor >= 0 else {
            throw failed("a file descriptor", code < 0 ? code : -Errno.badMessage.code)
        }
        do throws(Errno) {
            return try FileDescriptor(rawValue: descriptor).duplicate()
        } catch {
            throw failed("a copy of the file descriptor", -error.code)
        }
    }

    /// Enters an array, struct, variant or dict entry ("a", "r", "v", "e") of `contents`; false at the end
    /// of the enclosing array.
    package func enter(_ type: Character, _ contents: String) throws(BusError) -> Bool {
        let code = SDBus.library.messageEnterContainer(message, Self.code(type), contents)
        guard code >= 0 else { throw failed("a \(type)(\(contents))", code) }
        return code > 0
    }

    /// Leaves the container entered last.
    package func exit() throws(BusError) {
        let code = SDBus.library.messageExitContainer(message)
        guard code >= 0 else { throw failed("the end of a container", code) }
    }

    /// The type and contents of the next value, or nil at the end of the container.
    package func peek() throws(BusError) -> (type: Character, contents: String)? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let code = SDBus.library.messagePeekType(message, &type, &contents)
        guard code >= 0 else { throw failed("a value", code) }
        guard code > 0 else { return nil }
        return (Character(UnicodeScalar(UInt8(bitPattern: type))), text(contents))
    }

    /// Skips the next value, whatever it is.
    package func skip() throws(BusError) {
        let code = SDBus.library.messageSkip(message, nil)
        guard code >= 0 else { throw failed("a value to skip", code) }
    }

    /// Reads a string dictionary (`a{ss}`).
    package func readStringDictionary() throws(BusError) -> [String: String] {
        var dictionary: [String: String] = [:]
        _ = try enter("a", "{ss}")
        while try enter("e", "ss") {
            let key = try readString()
            dictionary[key] = try readString()
            try exit()
        }
        try exit()
        return dictionary
    }

    /// Reads an array of object paths (`ao`).
    package func readObjectPaths() throws(BusError) -> [String] {
        var paths: [String] = []
        _ = try enter("a", "o")
        while try peek() != nil { paths.append(try readString("o")) }
        try exit()
        return paths
    }

    // MARK: Appending

    /// Appends a string ("s"), an object path ("o") or a signature ("g").
    package func append(_ value: String, as type: Character = "s") throws(BusError) {
        let code = value.withCString { SDBus.library.messageAppendBasic(message, Self.code(type), $0) }
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }

    /// Appends a boolean.
    package func append(_ value: Bool) throws(BusError) {
        var flag: Int32 = value ? 1 : 0
        let code = SDBus.library.messageAppendBasic(message, Self.code("b"), &flag)
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }

    /// Appends an unsigned 64-bit integer ("t").
    package func append(_ value: UInt64) throws(BusError) {
        var number = value
        let code = SDBus.library.messageAppendBasic(message, Self.code("t"), &number)
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }

    /// Appends an unsigned 32-bit integer ("u").
    package func append(_ value: UInt32) throws(BusError) {
        var number = value
        let code = SDBus.library.messageAppendBasic(message, Self.code("u"), &number)
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }

    /// Appends a byte array ("ay").
    package func append(bytes: [UInt8]) throws(BusError) {
        let code = bytes.withUnsafeBytes {
            SDBus.library.messageAppendArray(message, Self.code("y"), $0.baseAddress, $0.count)
        }
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }

    /// Opens an array, struct, variant or dict entry of `contents`.
    package func open(_ type: Character, _ contents: String) throws(BusError) {
        let code = SDBus.library.messageOpenContainer(message, Self.code(type), contents)
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }

    /// Closes the container opened last.
    package func close() throws(BusError) {
        let code = SDBus.library.messageCloseContainer(message)
        guard code >= 0 else { throw BusError(operation: "writing \(member)", code: code, detail: nil) }
    }
}

/// libsystemd's sd-bus functions, loaded from `libsystemd.so.0` at the first use rather than linked: linked,
/// libsystemd (with its compression and gcrypt libraries) cost every `latchkey` command about 0.4 ms at
/// start, and only the agent and `latchkey import --from-secret-service` talk D-Bus. Each type is the C
/// declaration's.
private struct SDBus: @unchecked Sendable {
    // @unchecked: immutable function pointers into a library that stays loaded.
    let addFallback:
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, UnsafePointer<CChar>?, sd_bus_message_handler_t?,
            UnsafeMutableRawPointer?
        ) -> Int32
    let addMatch:
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, UnsafePointer<CChar>?, sd_bus_message_handler_t?,
            UnsafeMutableRawPointer?
        ) -> Int32
    let call:
        @convention(c) (
            OpaquePointer?, OpaquePointer?, UInt64, UnsafeMutablePointer<sd_bus_error>?,
            UnsafeMutablePointer<OpaquePointer?>?
        ) -> Int32
    let credsGetEuid: @convention(c) (OpaquePointer?, UnsafeMutablePointer<uid_t>?) -> Int32
    let credsGetPid: @convention(c) (OpaquePointer?, UnsafeMutablePointer<pid_t>?) -> Int32
    let credsUnref: @convention(c) (OpaquePointer?) -> OpaquePointer?
    let errorFree: @convention(c) (UnsafeMutablePointer<sd_bus_error>?) -> Void
    let errorSet:
        @convention(c) (UnsafeMutablePointer<sd_bus_error>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let flushCloseUnref: @convention(c) (OpaquePointer?) -> OpaquePointer?
    let getNameCreds:
        @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UInt64, UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    let getUniqueName: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32
    let getFd: @convention(c) (OpaquePointer?) -> Int32
    let messageAppendArray: @convention(c) (OpaquePointer?, CChar, UnsafeRawPointer?, Int) -> Int32
    let messageAppendBasic: @convention(c) (OpaquePointer?, CChar, UnsafeRawPointer?) -> Int32
    let messageCloseContainer: @convention(c) (OpaquePointer?) -> Int32
    let messageEnterContainer: @convention(c) (OpaquePointer?, CChar, UnsafePointer<CChar>?) -> Int32
    let messageExitContainer: @convention(c) (OpaquePointer?) -> Int32
    let messageGetInterface: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    let messageGetMember: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    let messageGetPath: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    let messageGetSender: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    let messageGetSignature: @convention(c) (OpaquePointer?, Int32) -> UnsafePointer<CChar>?
    let messageNewMethodCall:
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafePointer<CChar>?, UnsafePointer<CChar>?
        ) -> Int32
    let messageNewMethodReturn: @convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    let messageNewSignal:
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafePointer<CChar>?
        ) -> Int32
    let messageOpenContainer: @convention(c) (OpaquePointer?, CChar, UnsafePointer<CChar>?) -> Int32
    let messagePeekType:
        @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<UnsafePointer<CChar>?>?) ->
            Int32
    let messageReadArray:
        @convention(c) (OpaquePointer?, CChar, UnsafeMutablePointer<UnsafeRawPointer?>?, UnsafeMutablePointer<Int>?) ->
            Int32
    let messageReadBasic: @convention(c) (OpaquePointer?, CChar, UnsafeMutableRawPointer?) -> Int32
    let messageRef: @convention(c) (OpaquePointer?) -> OpaquePointer?
    let messageSkip: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    let messageUnref: @convention(c) (OpaquePointer?) -> OpaquePointer?
    let openSystem: @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    let openUser: @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    let process: @convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    let replyMethodError: @convention(c) (OpaquePointer?, UnsafePointer<sd_bus_error>?) -> Int32
    let requestName: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UInt64) -> Int32
    let send: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutablePointer<UInt64>?) -> Int32
    let wait: @convention(c) (OpaquePointer?, UInt64) -> Int32

    /// Loaded once per process; `Bus.init` reports a failure (libsystemd is part of every Debian system, so
    /// one means a broken installation).
    static let loaded: Result<SDBus, DynamicLibraryError> = {
        do throws(DynamicLibraryError) {
            return .success(try SDBus(DynamicLibrary("libsystemd.so.0")))
        } catch {
            return .failure(error)
        }
    }()

    /// The functions. Every call is made on a `Bus` or on a message of one, and a `Bus` exists only once
    /// `Bus.init` found them loaded, so the failure case is unreachable here.
    static var library: SDBus {
        switch loaded {
        case .success(let library): library
        case .failure(let error): preconditionFailure("sd-bus used before Bus.init checked that it loaded: \(error)")
        }
    }

    private init(_ library: DynamicLibrary) throws(DynamicLibraryError) {
        addFallback = try library.function("sd_bus_add_fallback")
        addMatch = try library.function("sd_bus_add_match")
        call = try library.function("sd_bus_call")
        credsGetEuid = try library.function("sd_bus_creds_get_euid")
        credsGetPid = try library.function("sd_bus_creds_get_pid")
        credsUnref = try library.function("sd_bus_creds_unref")
        errorFree = try library.function("sd_bus_error_free")
        errorSet = try library.function("sd_bus_error_set")
        flushCloseUnref = try library.function("sd_bus_flush_close_unref")
        getNameCreds = try library.function("sd_bus_get_name_creds")
        getUniqueName = try library.function("sd_bus_get_unique_name")
        getFd = try library.function("sd_bus_get_fd")
        messageAppendArray = try library.function("sd_bus_message_append_array")
        messageAppendBasic = try library.function("sd_bus_message_append_basic")
        messageCloseContainer = try library.function("sd_bus_message_close_container")
        messageEnterContainer = try library.function("sd_bus_message_enter_container")
        messageExitContainer = try library.function("sd_bus_message_exit_container")
        messageGetInterface = try library.function("sd_bus_message_get_interface")
        messageGetMember = try library.function("sd_bus_message_get_member")
        messageGetPath = try library.function("sd_bus_message_get_path")
        messageGetSender = try library.function("sd_bus_message_get_sender")
        messageGetSignature = try library.function("sd_bus_message_get_signature")
        messageNewMethodCall = try library.function("sd_bus_message_new_method_call")
        messageNewMethodReturn = try library.function("sd_bus_message_new_method_return")
        messageNewSignal = try library.function("sd_bus_message_new_signal")
        messageOpenContainer = try library.function("sd_bus_message_open_container")
        messagePeekType = try library.function("sd_bus_message_peek_type")
        messageReadArray = try library.function("sd_bus_message_read_array")
        messageReadBasic = try library.function("sd_bus_message_read_basic")
        messageRef = try library.function("sd_bus_message_ref")
        messageSkip = try library.function("sd_bus_message_skip")
        messageUnref = try library.function("sd_bus_message_unref")
        openSystem = try library.function("sd_bus_open_system")
        openUser = try library.function("sd_bus_open_user")
        process = try library.function("sd_bus_process")
        replyMethodError = try library.function("sd_bus_reply_method_error")
        requestName = try library.function("sd_bus_request_name")
        send = try library.function("sd_bus_send")
        wait = try library.function("sd_bus_wait")
    }
}
