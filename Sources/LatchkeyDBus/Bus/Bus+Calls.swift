import CSystemd
package import LatchkeyPOSIX

/// Signals listened to, and calls made to other peers.
extension Bus {
    /// Calls `handler` with the first (boolean) argument of every signal `member` of `interface` that
    /// `sender` emits on `path`. The bus checks the sender: a signal from another peer is not delivered.
    package func onBooleanSignal(
        sender: String, path: String, interface: String, member: String, _ handler: @escaping (Bool) -> Void
    ) throws(BusError) {
        let rule = "type='signal',sender='\(sender)',path='\(path)',interface='\(interface)',member='\(member)'"
        let box = Unmanaged.passRetained(Handler(handler))
        let code = latchkey_sd_bus_add_match(
            bus, nil, rule,
            { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                var value: Int32 = 0
                // A signal without a boolean argument is ignored (returning 0 lets other matches see it).
                guard latchkey_sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &value) > 0 else {
                    return 0
                }
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
        var code = latchkey_sd_bus_message_new_method_call(bus, &call, destination, path, interface, member)
        guard code >= 0, let call else { throw BusError(operation: operation, code: code, detail: nil) }
        let message = BusMessage(adopting: call)
        try build(message)
        var error = sd_bus_error()
        defer { latchkey_sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        code = latchkey_sd_bus_call(bus, message.message, timeoutSeconds * 1_000_000, &error, &reply)
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
        var code = latchkey_sd_bus_message_new_method_call(bus, &call, destination, path, interface, member)
        guard code >= 0, let call else { throw BusError(operation: operation, code: code, detail: nil) }
        defer { _ = latchkey_sd_bus_message_unref(call) }
        for argument in arguments {
            code = argument.withCString { latchkey_sd_bus_message_append_basic(call, CChar(UInt8(ascii: "s")), $0) }
            guard code >= 0 else { throw BusError(operation: operation, code: code, detail: nil) }
        }
        var error = sd_bus_error()
        defer { latchkey_sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        code = latchkey_sd_bus_call(bus, call, 5_000_000, &error, &reply)
        guard code >= 0, let reply else {
            let detail = error.message.map { String(cString: $0) }
            throw BusError(operation: operation, code: code, detail: detail)
        }
        defer { _ = latchkey_sd_bus_message_unref(reply) }
        var descriptor: Int32 = -1
        code = latchkey_sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "h")), &descriptor)
        guard code > 0, descriptor >= 0 else {
            throw BusError(
                operation: operation, code: code < 0 ? code : -Errno.badMessage.rawValue,
                detail: "the reply holds no file descriptor")
        }
        // The descriptor belongs to the reply, which is freed on return.
        do throws(Errno) {
            return try FileDescriptor(rawValue: descriptor).duplicate()
        } catch {
            throw BusError(operation: operation, code: -error.rawValue, detail: nil)
        }
    }
}
