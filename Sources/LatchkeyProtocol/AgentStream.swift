package import Foundation
package import LatchkeyPOSIX
import Synchronization

/// One end of an agent connection: framed messages over a Unix stream socket. Reads check the frame size
/// before reading the body and grow the buffer only as bytes arrive, so a peer that announces a large frame
/// and stops costs nothing; a peer that stops mid-frame is an error, not a hang (a read timeout applies).
package final class AgentStream: @unchecked Sendable {
    // @unchecked: the descriptor, the unread bytes and the polling time are used by one thread at a time (the
    // connection's handler, or a client under its own lock); closed once, in deinit; `shutDown` is thread-safe.
    /// The connected socket's file descriptor (for peer credentials and polling); the stream owns it.
    package let descriptor: Int32

    /// Wraps an open, connected socket; the stream closes it when released.
    package init(descriptor: Int32) { self.descriptor = descriptor }

    deinit {
        for index in pending.indices { pending[index] = 0 }  // Unread bytes may hold a secret.
        ahead.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }  // So may a broken read's.
        Descriptors.close(descriptor)
    }

    /// Connects to a socket without any check of who listens there; nil when nobody does. Clients use
    /// `AgentClient.connect`, which checks the socket's directory and the listener's user first.
    package static func connect(path: String, timeoutSeconds: Int = AgentFrame.replySeconds) -> AgentStream? {
        guard let fd = try? UnixSocket.connect(to: path) else { return nil }  // Nobody listens: no stream.
        let stream = AgentStream(descriptor: fd)
        stream.setTimeout(seconds: timeoutSeconds)
        return stream
    }

    /// Bounds how long one read or write may block.
    package func setTimeout(seconds: Int) { UnixSocket.setTimeouts(descriptor, seconds: seconds) }

    /// How long a receive polls for the next frame before it sleeps in the kernel (0: it sleeps at once).
    /// A client sets it for replies, the agent for a client's next request; see
    /// `Descriptors.spinUntilReadable`.
    package var spinNanoseconds = 0

    /// Ends the connection now, from any thread: a read blocked on it returns.
    package func shutDown() { UnixSocket.shutDown(descriptor) }

    /// Why a frame could not be sent or received.
    package enum Failure: Error, Equatable {
        /// The other side closed the connection (cleanly, between frames).
        case closed
        /// A system call failed (or timed out), or the peer closed mid-frame.
        case broken(String)
        /// The frame announced more bytes than allowed, or than the agent can hold now.
        case oversized(Int)
        /// Bytes of one frame came from a process other than the connection's (per-message credentials).
        case foreignSender(String)
    }

    /// Sends one framed message: the length header and the message go out together from where they are, so
    /// no copy of a message (which may hold a passphrase or a secret) is made to put its header in front;
    /// the caller wipes its own.
    package func send(_ message: Data) throws(Failure) {
        let header = UInt32(message.count).bigEndian
        let failure: Errno? = withUnsafeBytes(of: header) { head in
            message.withUnsafeBytes { body in
                do throws(Errno) {
                    try UnixSocket.sendAll(descriptor, head, body)
                    return nil
                } catch {
                    return error
                }
            }
        }
        if let failure { throw .broken(failure.description) }
    }

    /// Receives one framed message of at most `limit` bytes.
    package func receive(limit: Int = AgentFrame.maximumBytes) throws(Failure) -> Data {
        try receiveFrame(limit: limit, budget: nil, checkingSender: nil)
    }

    /// Receives one framed message and checks that every byte of it was sent by `sender` (the kernel
    /// attaches each message's sender once `UnixSocket.enableSenderCredentials` is on); the body's memory is
    /// taken from `budget` as it arrives and given back when the frame is released by the caller.
    package func receive(limit: Int, budget: ByteBudget, from sender: UnixSocket.Credentials) throws(Failure) -> Data {
        try receiveFrame(limit: limit, budget: budget, checkingSender: sender)
    }

    /// Bytes read past the end of the last frame's header: the start of its body (a small frame usually
    /// arrives whole with the header, in one read). Wiped as they are used.
    private var pending: [UInt8] = []
    /// How much the header read may take at once.
    private static let readAhead = 4_096
    /// The header read's buffer, kept for the stream's life (a 4 KiB allocation per frame made the allocator
    /// consolidate its free lists every time); zero between reads.
    private var ahead = [UInt8](repeating: 0, count: readAhead)

    private func receiveFrame(limit: Int, budget: ByteBudget?, checkingSender sender: UnixSocket.Credentials?) throws(Failure) -> Data {
        if pending.count < 4 {
            if spinNanoseconds > 0 {
                // Whether anything came or not, the read below blocks as usual; this only avoids the sleep.
                _ = Descriptors.spinUntilReadable(descriptor, nanoseconds: spinNanoseconds)
            }
            let start = pending.count
            guard let count = try readSome(into: &ahead, from: 0, minimum: 4 - start, sender: sender) else {
                if start == 0 { throw .closed }
                throw .broken("the peer closed mid-message")
            }
            pending.append(contentsOf: ahead[0..<count])
            ahead.withUnsafeMutableBytes { _ = UnsafeMutableRawBufferPointer(rebasing: $0[0..<count]).initializeMemory(as: UInt8.self, repeating: 0) }
        }
        let length = Int(UInt32(pending[0]) << 24 | UInt32(pending[1]) << 16 | UInt32(pending[2]) << 8 | UInt32(pending[3]))
        guard length <= limit else { throw .oversized(length) }
        var body: [UInt8] = []
        var reserved = 0
        defer { budget?.release(reserved) }
        // What arrived with the header first, then the rest as it comes.
        let early = min(length, pending.count - 4)
        if early > 0 {
            if let budget {
                guard budget.reserve(early) else { throw .oversized(length) }
                reserved += early
            }
            body.append(contentsOf: pending[4..<(4 + early)])
        }
        let used = 4 + early
        for index in 0..<used { pending[index] = 0 }
        pending.removeFirst(used)
        while body.count < length {
            let chunk = min(length - body.count, 64 << 10)
            if let budget {
                guard budget.reserve(chunk) else { throw .oversized(length) }
                reserved += chunk
            }
            let start = body.count
            body.append(contentsOf: [UInt8](repeating: 0, count: chunk))
            guard try read(into: &body, from: start, allowCleanEnd: false, sender: sender) else {
                throw .broken("the peer closed mid-message")
            }
        }
        let message = Data(body)
        body.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }  // It may hold a secret.
        return message
    }

    /// Reads into `buffer[start...]` until at least `minimum` bytes have arrived (taking whatever else is
    /// there, up to the buffer's end); nil at a clean end of stream before the first byte.
    private func readSome(into buffer: inout [UInt8], from start: Int, minimum: Int,
                          sender: UnixSocket.Credentials?) throws(Failure) -> Int? {
        var count = 0
        while count < minimum {
            let got = try receiveOnce(into: &buffer, at: start + count, sender: sender)
            if got == 0 {
                if count == 0 { return nil }
                throw .broken("the peer closed mid-message")
            }
            count += got
        }
        return count
    }

    /// Fills `buffer[start...]`; false at a clean end of stream before the first byte (when allowed).
    private func read(into buffer: inout [UInt8], from start: Int, allowCleanEnd: Bool,
                      sender: UnixSocket.Credentials?) throws(Failure) -> Bool {
        var offset = start
        while offset < buffer.count {
            let count = try receiveOnce(into: &buffer, at: offset, sender: sender)
            if count == 0 {
                if offset == start && allowCleanEnd { return false }
                throw .broken("the peer closed mid-message")
            }
            offset += count
        }
        return true
    }

    /// One receive into `buffer[offset...]`, checking the sender when asked; 0 at end of stream.
    private func receiveOnce(into buffer: inout [UInt8], at offset: Int, sender: UnixSocket.Credentials?) throws(Failure) -> Int {
        let received: Result<Int, Failure> = buffer.withUnsafeMutableBytes { raw in
            let window = UnsafeMutableRawBufferPointer(rebasing: raw[offset...])
            do throws(Errno) {
                guard let sender else { return .success(try UnixSocket.receive(descriptor, into: window)) }
                let (count, actual) = try UnixSocket.receive(descriptor, into: window)
                if count > 0 && (actual?.pid != sender.pid || actual?.uid != sender.uid) {
                    let who = actual.map { "pid \($0.pid) (uid \($0.uid))" } ?? "a sender the kernel did not name"
                    return .failure(.foreignSender("a message came from \(who), not from pid \(sender.pid), which connected"))
                }
                return .success(count)
            } catch {
                return .failure(.broken(error == .wouldBlock ? "timed out" : error.description))
            }
        }
        return try received.get()
    }
}

/// Bytes the agent may hold in partly received frames across all connections at once: a client that
/// announces large frames and trickles them in cannot make the agent grow without bound.
package final class ByteBudget: Sendable {
    private let remaining: Mutex<Int>

    /// A budget of `bytes`.
    package init(bytes: Int) { remaining = Mutex(bytes) }

    /// Takes `count` bytes; false when fewer are left.
    package func reserve(_ count: Int) -> Bool {
        remaining.withLock { remaining in
            guard remaining >= count else { return false }
            remaining -= count
            return true
        }
    }

    /// Gives `count` bytes back.
    package func release(_ count: Int) { remaining.withLock { $0 += count } }

    /// What is left.
    package var available: Int { remaining.withLock { $0 } }
}
