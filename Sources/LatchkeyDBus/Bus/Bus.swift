import CSystemd
import LatchkeyPOSIX

/// A D-Bus connection through libsystemd's sd-bus — the files of `Bus/` hold every call to libsystemd (module
/// `LatchkeyDBus` alone imports it). sd-bus objects are not thread-safe: a `Bus` is made, used and dropped
/// on one thread (it is not `Sendable`). `DBUS_SYSTEM_BUS_ADDRESS` and `DBUS_SESSION_BUS_ADDRESS` point it
/// at another bus (the tests' private ones).
package final class Bus {
    /// Holds a signal handler for as long as the bus lives; sd-bus keeps only a raw pointer to it.
    final class Handler {
        let call: (Bool) -> Void
        init(_ call: @escaping (Bool) -> Void) { self.call = call }
    }

    /// Holds an object handler for as long as the bus lives.
    final class ObjectHandler {
        let call: (BusMessage) -> Bool
        init(_ call: @escaping (BusMessage) -> Bool) { self.call = call }
    }

    let bus: OpaquePointer
    var handlers: [Unmanaged<Handler>] = []
    var objectHandlers: [Unmanaged<ObjectHandler>] = []

    /// Which bus.
    package enum Kind: Sendable { case system, session }

    /// Connects to the system bus or to the session bus.
    package init(_ kind: Kind = .system) throws(BusError) {
        if case .failure(let error) = SDBus.loaded {
            // -ELIBACC: cannot access a needed shared library.
            throw BusError(operation: "loading libsystemd", code: -79, detail: error.message)
        }
        var opened: OpaquePointer?
        let code = kind == .system ? latchkey_sd_bus_open_system(&opened) : latchkey_sd_bus_open_user(&opened)
        guard code >= 0, let opened else {
            throw BusError(
                operation: "connecting to the \(kind == .system ? "system" : "session") bus", code: code, detail: nil)
        }
        bus = opened
    }

    /// Connects as a client to the bus at `address` (a D-Bus address: `unix:path=/run/…/bus`): a bus named
    /// explicitly rather than through the environment (a sandbox's, a test's private one).
    package init(address: String) throws(BusError) {
        if case .failure(let error) = SDBus.loaded {
            throw BusError(operation: "loading libsystemd", code: -79, detail: error.message)
        }
        var made: OpaquePointer?
        var code = latchkey_sd_bus_new(&made)
        guard code >= 0, let made else { throw BusError(operation: "making a bus connection", code: code, detail: nil) }
        code = latchkey_sd_bus_set_address(made, address)
        if code >= 0 { code = latchkey_sd_bus_set_bus_client(made, 1) }
        if code >= 0 { code = latchkey_sd_bus_start(made) }
        guard code >= 0 else {
            _ = latchkey_sd_bus_flush_close_unref(made)
            throw BusError(operation: "connecting to the bus at \(address)", code: code, detail: nil)
        }
        bus = made
    }

    deinit {
        _ = latchkey_sd_bus_flush_close_unref(bus)
        for handler in handlers { handler.release() }
        for handler in objectHandlers { handler.release() }
    }

    /// Takes a well-known name (fails when another connection owns it).
    package func requestName(_ name: String) throws(BusError) {
        let code = latchkey_sd_bus_request_name(bus, name, 0)
        guard code >= 0 else { throw BusError(operation: "taking the name \(name)", code: code, detail: nil) }
    }

    /// Takes a well-known name, or — when another connection owns it — waits in the bus's queue for it
    /// (`SD_BUS_NAME_QUEUE`): the bus hands it over when the owner leaves, and says so with `NameAcquired`
    /// (`onNameAcquired`). True when the name is this connection's now.
    package func requestNameOrQueue(_ name: String) throws(BusError) -> Bool {
        let code = latchkey_sd_bus_request_name(bus, name, UInt64(SD_BUS_NAME_QUEUE))
        guard code >= 0 else { throw BusError(operation: "taking the name \(name)", code: code, detail: nil) }
        return code > 0
    }

    /// Calls `handler` when the bus gives this connection `name` (`NameAcquired`), as after waiting in its
    /// queue.
    package func onNameAcquired(_ name: String, _ handler: @escaping () -> Void) throws(BusError) {
        let rule =
            "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',member='NameAcquired',arg0='\(name)'"
        try addMatch(rule, during: "watching for the name \(name)") { _ in handler() }
    }

    /// This connection's unique name (":1.42").
    package var uniqueName: String? {
        var name: UnsafePointer<CChar>?
        guard latchkey_sd_bus_get_unique_name(bus, &name) >= 0, let name else { return nil }
        return String(cString: name)
    }

    /// Hands every method call to `path` and the objects below it to `handler`, which answers it (a reply
    /// or an error, through `reply`/`fail`) and returns true — or returns false to let sd-bus answer
    /// `UnknownMethod`/`UnknownObject`.
    package func handleObjects(under path: String, _ handler: @escaping (BusMessage) -> Bool) throws(BusError) {
        let box = Unmanaged.passRetained(ObjectHandler(handler))
        let code = latchkey_sd_bus_add_fallback(
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
    func addMatch(_ rule: String, during: String, _ handler: @escaping (BusMessage) -> Void)
        throws(BusError)
    {
        let box = Unmanaged.passRetained(
            ObjectHandler { message in
                handler(message)
                return false
            })
        let code = latchkey_sd_bus_add_match(
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
        let code = latchkey_sd_bus_message_new_method_return(call.message, &reply)
        guard code >= 0, let reply else { throw BusError(operation: "replying", code: code, detail: nil) }
        return BusMessage(adopting: reply)
    }

    /// Answers `call` with the D-Bus error `name` and `text`.
    package func fail(_ call: BusMessage, name: String, _ text: String) {
        var error = sd_bus_error()
        defer { latchkey_sd_bus_error_free(&error) }
        _ = latchkey_sd_bus_error_set(&error, name, text)
        // A caller that left gets no answer: nothing to do.
        _ = latchkey_sd_bus_reply_method_error(call.message, &error)
    }

    /// A signal to fill and `send`.
    package func signal(path: String, interface: String, member: String) throws(BusError) -> BusMessage {
        var signal: OpaquePointer?
        let code = latchkey_sd_bus_message_new_signal(bus, &signal, path, interface, member)
        guard code >= 0, let signal else {
            throw BusError(operation: "emitting \(interface).\(member)", code: code, detail: nil)
        }
        return BusMessage(adopting: signal)
    }

    /// Sends a reply or a signal.
    package func send(_ message: BusMessage) throws(BusError) {
        let code = latchkey_sd_bus_send(bus, message.message, nil)
        guard code >= 0 else { throw BusError(operation: "sending", code: code, detail: nil) }
    }

    /// Dispatches messages to the handlers as they arrive, and calls `tick` at least every
    /// `intervalMicroseconds` (for work other threads leave for this one), until the connection fails.
    package func run(intervalMicroseconds: UInt64, tick: () -> Void) throws(BusError) -> Never {
        while true {
            tick()
            let processed = latchkey_sd_bus_process(bus, nil)
            guard processed >= 0 else { throw BusError(operation: "reading the bus", code: processed, detail: nil) }
            if processed > 0 { continue }
            let waited = latchkey_sd_bus_wait(bus, intervalMicroseconds)
            guard waited >= 0 || waited == -Errno.interrupted.rawValue else {
                throw BusError(operation: "waiting on the bus", code: waited, detail: nil)
            }
        }
    }

    /// Dispatches messages to the handlers as they arrive, until the connection fails.
    package func run() throws(BusError) -> Never {
        while true {
            let processed = latchkey_sd_bus_process(bus, nil)
            guard processed >= 0 else { throw BusError(operation: "reading the bus", code: processed, detail: nil) }
            if processed > 0 { continue }
            let waited = latchkey_sd_bus_wait(bus, UInt64.max)
            guard waited >= 0 || waited == -Errno.interrupted.rawValue else {
                throw BusError(operation: "waiting on the bus", code: waited, detail: nil)
            }
        }
    }
}
