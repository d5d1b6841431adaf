import Foundation
import LatchkeyDBus

/// `latchkey-bench --bus-name-floor`: the floor of a cold D-Bus activation of the Secret Service (issue 56) —
/// this static program, started by the bus from a `.service` file as latchkeyd is, connects to the session
/// bus, takes `org.freedesktop.secrets` and answers every call on `/org/freedesktop/secrets` with the path
/// `/`. What latchkeyd does besides (open its keychain, check the caller, answer ReadAlias) is what its
/// activation costs above this. Runs until the bench stops it.
enum BusNameFloor {
    static func serve() -> Never {
        do throws(BusError) {
            let bus = try Bus(.session)
            try bus.handleObjects(under: "/org/freedesktop/secrets") { message in
                do throws(BusError) {
                    let reply = try bus.reply(to: message)
                    try reply.append("/", as: "o")
                    try bus.send(reply)
                } catch {
                    return false  // sd-bus answers the call with an error.
                }
                return true
            }
            try bus.requestName("org.freedesktop.secrets")
            try bus.run()
        } catch {
            FileHandle.standardError.write(Data("latchkey-bench --bus-name-floor: \(error)\n".utf8))
            exit(1)
        }
    }
}
