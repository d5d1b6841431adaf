import FoundationEssentials
import LatchkeyCrypto
import LatchkeyEngine
import LatchkeyPOSIX
import Synchronization

/// Asks the user through pinentry — the dialog GnuPG's agent uses, spoken to over the Assuan protocol on
/// its standard input and output — to confirm the keychain passphrase before an item whose access control
/// asks them is read or changed. One dialog at a time; one attempt each: Cancel is `errSecUserCanceled`, a
/// wrong passphrase `errSecAuthFailed`, a pinentry that cannot be started, ends without an answer or does
/// not answer within `timeoutSeconds` is `errSecInteractionNotAllowed`.
final class PinentryPresence: UserPresenceVerifier {
    /// The pinentry program.
    let program: String
    private let environment: [String: String]
    private let timeoutSeconds: Int32
    private let log: @Sendable (String) -> Void
    private let oneAtATime = Mutex(())

    init(
        program: String, environment: [String: String], timeoutSeconds: Int32 = 120,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.program = program
        self.environment = environment
        self.timeoutSeconds = timeoutSeconds
        self.log = log
    }

    /// The program to use: `LATCHKEY_PINENTRY` when set, else `pinentry` on the `PATH`; nil when there is none.
    static func find(environment: [String: String]) -> String? {
        if let chosen = environment["LATCHKEY_PINENTRY"], !chosen.isEmpty { return chosen }
        for directory in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/pinentry"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    func confirm(_ request: PresenceRequest, verify: (Passphrase) throws(KeychainError) -> Void) throws(KeychainError) {
        try oneAtATime.withLock { (_: inout ()) throws(KeychainError) in
            var pin = try ask(request)
            defer { for index in pin.indices { pin[index] = 0 } }
            try verify(Passphrase(bytes: pin))
        }
    }

    /// Asks the user to allow something (`CONFIRM`: Allow or Deny, no passphrase) — an SSH key's use, which
    /// `description` names. Deny is `errSecUserCanceled`; no answer in time, or a pinentry that cannot be
    /// started, `errSecInteractionNotAllowed`.
    func confirmUse(_ description: String, title: String = "Latchkey SSH agent") throws(KeychainError) {
        try oneAtATime.withLock { (_: inout ()) throws(KeychainError) in
            try converse { (session) throws(KeychainError) in
                try session.command("SETTITLE " + AssuanSession.escape(title))
                try session.command("SETDESC " + AssuanSession.escape(description))
                try session.command("SETOK Allow")
                try session.command("SETCANCEL Deny")
                try session.command("SETTIMEOUT \(timeoutSeconds)")
                try session.confirm()
                session.bye()
            }
        }
        log("pinentry allowed an SSH key's use")
    }

    /// Whether pinentry has somewhere to show a dialog: an X11 or Wayland display, or a terminal named by
    /// `GPG_TTY` (the agent's own standard input is never one: it runs detached).
    var hasDisplayOrTerminal: Bool {
        ["DISPLAY", "WAYLAND_DISPLAY", "GPG_TTY"].contains { !(environment[$0] ?? "").isEmpty }
    }

    /// Which button of a three-button question the user pressed.
    enum Choice: Equatable {
        /// The OK button.
        case ok
        /// The third button (`SETNOTOK`).
        case notOK
    }

    /// Asks a question with three buttons (`CONFIRM` after `SETOK`, `SETNOTOK`, `SETCANCEL`): the user's
    /// choice, or `errSecUserCanceled` for Cancel (or the window closed), `errSecInteractionNotAllowed` when
    /// nobody answers in time or pinentry cannot be started. A pinentry older than 0.8 (no third button,
    /// and its Cancel answers "not confirmed") gets only OK and Cancel: its answer is never `notOK`.
    func choose(_ description: String, title: String, ok: String, notOK: String, cancel: String) throws(KeychainError)
        -> Choice
    {
        try oneAtATime.withLock { (_: inout ()) throws(KeychainError) in
            try converse { (session) throws(KeychainError) -> Choice in
                let threeButtons = session.supportsNotOK()
                try session.command("SETTITLE " + AssuanSession.escape(title))
                try session.command("SETDESC " + AssuanSession.escape(description))
                try session.command("SETOK " + AssuanSession.escape(ok))
                if threeButtons { try session.command("SETNOTOK " + AssuanSession.escape(notOK)) }
                try session.command("SETCANCEL " + AssuanSession.escape(cancel))
                try session.command("SETTIMEOUT \(timeoutSeconds)")
                let choice = try session.confirmChoosing()
                session.bye()
                return threeButtons ? choice : .ok
            }
        }
    }

    private func ask(_ request: PresenceRequest) throws(KeychainError) -> [UInt8] {
        let pin = try converse { (session) throws(KeychainError) -> [UInt8] in
            try session.command("SETTITLE Latchkey")
            try session.command("SETDESC " + AssuanSession.escape(request.message))
            try session.command("SETPROMPT Passphrase:")
            try session.command("SETOK Allow")
            try session.command("SETCANCEL Deny")
            try session.command("SETTIMEOUT \(timeoutSeconds)")
            let pin = try session.getPin()
            session.bye()
            return pin
        }
        log("pinentry answered for \(request.applicationIdentifier)")
        return pin
    }

    /// Starts pinentry, waits for its greeting, runs `body` on the conversation and stops it.
    private func converse<T>(_ body: (AssuanSession) throws(KeychainError) -> T) throws(KeychainError) -> T {
        let toChild: (read: FileDescriptor, write: FileDescriptor)
        let fromChild: (read: FileDescriptor, write: FileDescriptor)
        let pid: Int32
        do {
            toChild = try Pipes.make()
            fromChild = try Pipes.make()
            var options = Spawn.Options()
            options.standardInput = .descriptor(toChild.read)
            options.standardOutput = .descriptor(fromChild.write)
            options.standardError = .null  // Never into the Assuan pipe.
            pid = try Spawn.start(program, [], environment: environment, options: options)
        } catch {
            throw KeychainError(.interactionNotAllowed, "pinentry \(program) cannot be started: \(error)")
        }
        toChild.read.close()
        fromChild.write.close()
        defer {
            toChild.write.close()
            fromChild.read.close()
            if Spawn.poll(pid) == nil {
                Spawn.terminate(pid)
                _ = Spawn.wait(pid)
            }
        }
        let session = AssuanSession(
            input: fromChild.read, output: toChild.write, timeoutSeconds: timeoutSeconds, program: program)
        try session.expectOK("its greeting")
        return try body(session)
    }
}

/// The client side of an Assuan conversation with pinentry: one command per line, answered by `OK`, `ERR
/// <code> <text>`, data lines (`D <percent-escaped bytes>`), status (`S …`) or comment (`#`) lines.
private struct AssuanSession {
    let input: FileDescriptor
    let output: FileDescriptor
    let timeoutSeconds: Int32
    let program: String

    /// GnuPG's error codes (the low 16 bits of an `ERR` code).
    private static let canceled = 99, timedOut = 62, notConfirmed = 114
    /// The refusal's words for "not confirmed": the third button where there is one (`confirmChoosing`).
    static let notConfirmedText = "the user refused the protected item (not confirmed)"

    /// `%`, CR and LF percent-escaped, as Assuan arguments must be.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    func command(_ line: String) throws(KeychainError) {
        try send(line)
        try expectOK(line.split(separator: " ").first.map(String.init) ?? line)
    }

    func expectOK(_ what: String) throws(KeychainError) {
        var ignored: [UInt8] = []
        try readUntilOK(what, data: &ignored)
    }

    /// `GETPIN`: the passphrase typed (percent-decoded), or the user's refusal.
    func getPin() throws(KeychainError) -> [UInt8] {
        try send("GETPIN")
        var pin: [UInt8] = []
        do throws(KeychainError) {
            try readUntilOK("GETPIN", data: &pin)
        } catch {
            for index in pin.indices { pin[index] = 0 }
            throw error
        }
        guard !pin.isEmpty else { throw KeychainError(.userCanceled, "the user refused the protected item") }
        return pin
    }

    /// Whether this pinentry has a third button (`SETNOTOK`, pinentry 0.8 and later), by `GETINFO version`.
    func supportsNotOK() -> Bool {
        var data: [UInt8] = []
        do {
            try send("GETINFO version")
            try readUntilOK("GETINFO", data: &data)
        } catch {
            return false  // An old or unusual pinentry: two buttons only.
        }
        let parts = String(decoding: data, as: UTF8.self).split(separator: ".").compactMap { Int($0) }
        guard parts.count >= 2 else { return false }
        return parts[0] > 0 || parts[1] >= 8
    }

    /// `CONFIRM` with three buttons: `.ok`, `.notOK` (GnuPG's "not confirmed", which a pinentry with a
    /// `SETNOTOK` button answers for it), or `errSecUserCanceled` for Cancel.
    func confirmChoosing() throws(KeychainError) -> PinentryPresence.Choice {
        do {
            try confirm()
            return .ok
        } catch  where error.detail == Self.notConfirmedText {
            return .notOK
        }
    }

    /// `CONFIRM`: nothing when the user allows, `errSecUserCanceled` when they deny.
    func confirm() throws(KeychainError) {
        try send("CONFIRM")
        var ignored: [UInt8] = []
        try readUntilOK("CONFIRM", data: &ignored)
    }

    func bye() { _ = try? send("BYE") }  // Saying goodbye is a courtesy: the pipes close anyway.

    private func send(_ line: String) throws(KeychainError) {
        do {
            try output.writeAll(Array((line + "\n").utf8))
        } catch {
            throw KeychainError(.interactionNotAllowed, "pinentry \(program) stopped listening: \(error)")
        }
    }

    private func readUntilOK(_ what: String, data: inout [UInt8]) throws(KeychainError) {
        while true {
            guard input.waitReadable(milliseconds: (timeoutSeconds + 5) * 1_000) else {
                throw KeychainError(.interactionNotAllowed, "pinentry \(program) did not answer \(what) in time")
            }
            guard var line = input.readLine(limit: 16 << 10) else {
                throw KeychainError(.interactionNotAllowed, "pinentry \(program) ended without answering \(what)")
            }
            defer { for index in line.indices { line[index] = 0 } }
            if line.starts(with: Array("OK".utf8)) { return }
            if line.starts(with: Array("D ".utf8)) {
                Self.decode(line.dropFirst(2), into: &data)
                continue
            }
            if line.starts(with: Array("ERR ".utf8)) {
                let text = String(decoding: line.dropFirst(4), as: UTF8.self)
                let code = Int(text.split(separator: " ").first ?? "") ?? 0
                switch code & 0xFFFF {
                case Self.canceled:
                    throw KeychainError(.userCanceled, "the user refused the protected item")
                case Self.notConfirmed:
                    throw KeychainError(.userCanceled, Self.notConfirmedText)
                case Self.timedOut: throw KeychainError(.interactionNotAllowed, "nobody answered pinentry in time")
                default: throw KeychainError(.interactionNotAllowed, "pinentry \(program) refused \(what): \(text)")
                }
            }
            // Status and comment lines carry nothing needed here.
        }
    }

    /// Appends percent-decoded bytes.
    private static func decode(_ escaped: ArraySlice<UInt8>, into data: inout [UInt8]) {
        var index = escaped.startIndex
        while index < escaped.endIndex {
            if escaped[index] == UInt8(ascii: "%"), index + 2 < escaped.endIndex,
                let byte = Hex.decode(String(decoding: escaped[(index + 1)...(index + 2)], as: UTF8.self))?.first
            {
                data.append(byte)
                index += 3
            } else {
                data.append(escaped[index])
                index += 1
            }
        }
    }
}
