package import FoundationEssentials
package import LatchkeyPOSIX
import Synchronization

/// One end of an agent connection: framed messages over a Unix stream socket. Reads check the frame size
/// before reading the body and grow the buffer only as bytes arrive, so a peer that announces a large frame
/// and stops costs nothing; a peer that stops mid-frame is an error, not a hang (a read timeout applies).
package final class AgentStream: @unchecked Sendable {
    // @unchecked: the descriptor, the unread bytes and the polling time are used by one thread at a time (the
    // connection's handler, or a client under its own lock); closed once, in deinit; `shutDown` is thread-safe.
    /// The connected socket's file descriptor (for peer credentials and polling); the stream owns it.
    package let descriptor: FileDescriptor

    /// Wraps an open, connected socket; the stream closes it when released.
    package init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    deinit {
        for index in pending.indices { pending[index] = 0 }  // Unread bytes may hold a secret.
        // So may a broken read's.
        ahead.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
        descriptor.close()
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
    /// `FileDescriptor.spinUntilReadable`.
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

    private func receiveFrame(limit: Int, budget: ByteBudget?, checkingSender sender: UnixSocket.Credentials?)
        throws(Failure) -> Data
    {
        if pending.count < 4 {
            if spinNanoseconds > 0 {
                // Whether anything came or not, the read below blocks as usual; this only avoids the sleep.
                _ = descriptor.spinUntilReadable(nanoseconds: spinNanoseconds)
            }
            let start = pending.count
            guard let count = try readSome(into: &ahead, from: 0, minimum: 4 - start, sender: sender) else {
                if start == 0 { throw .closed }
                throw .broken("the peer closed mid-message")
            }
            pending.append(contentsOf: ahead[0..<count])
            ahead.withUnsafeMutableBytes {
                _ = UnsafeMutableRawBufferPointer(rebasing: $0[0..<count]).initializeMemory(
                    as: UInt8.self, repeating: 0)
            }
        }
        let length = Int(
            UInt32(pending[0]) << 24 | UInt32(pending[1]) << 16 | UInt32(pending[2]) << 8 | UInt32(pending[3]))
        guard length <= limit else { throw .oversized(length) }
        // A large frame goes into pages mapped for it alone: only the pages its bytes reach become memory, and
        // they go back to the kernel with the frame (the allocator would keep a freed buffer's).
        let mapped = length > Self.mappedFrameBytes
        let capacity =
            mapped ? (length + CurrentProcess.pageSize - 1) / CurrentProcess.pageSize * CurrentProcess.pageSize : length
        let region: UnsafeMutableRawBufferPointer
        if mapped {
            guard let pages = Memory.mapPages(capacity) else { throw .oversized(length) }
            region = UnsafeMutableRawBufferPointer(start: pages, count: capacity)
        } else {
            region = UnsafeMutableRawBufferPointer.allocate(byteCount: max(length, 1), alignment: 1)
        }
        var filled = 0
        var reserved = 0
        /// Wipes what arrived and gives the memory and its budget back.
        let release: @Sendable (UnsafeMutableRawBufferPointer, Int, Int) -> Void = {
            [budget] region, filled, reserved in
            if filled > 0 {
                UnsafeMutableRawBufferPointer(rebasing: region[0..<filled]).initializeMemory(
                    as: UInt8.self, repeating: 0)
            }
            if mapped { Memory.unmapPages(region.baseAddress!, size: region.count) } else { region.deallocate() }
            budget?.release(reserved)
        }
        do throws(Failure) {
            // What arrived with the header first, then the rest as it comes.
            let early = min(length, pending.count - 4)
            if early > 0 {
                if let budget {
                    guard budget.reserve(early) else { throw .oversized(length) }
                    reserved += early
                }
                pending.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(rebasing: region[0..<early]).copyMemory(
                        from: UnsafeRawBufferPointer(rebasing: $0[4..<(4 + early)]))
                }
                filled = early
            }
            let used = 4 + early
            for index in 0..<used { pending[index] = 0 }
            pending.removeFirst(used)
            while filled < length {
                let chunk = min(length - filled, 64 << 10)
                if let budget {
                    guard budget.reserve(chunk) else { throw .oversized(length) }
                    reserved += chunk
                }
                let count = try receiveOnce(
                    into: UnsafeMutableRawBufferPointer(rebasing: region[filled..<(filled + chunk)]), sender: sender)
                guard count > 0 else { throw .broken("the peer closed mid-message") }
                filled += count
                if let budget, count < chunk {
                    budget.release(chunk - count)
                    reserved -= chunk - count
                }
            }
        } catch {
            release(region, filled, reserved)
            throw error
        }
        guard mapped else {
            let message = Data(UnsafeRawBufferPointer(rebasing: region[0..<length]))
            release(region, filled, reserved)  // The copy is the caller's to wipe; this buffer is wiped now.
            return message
        }
        // The frame's pages become the message itself (no copy); they are wiped, unmapped and their budget
        // given back when the caller releases it.
        let held = (region, filled, reserved)
        return Data(
            bytesNoCopy: region.baseAddress!, count: length,
            deallocator: .custom { _, _ in release(held.0, held.1, held.2) })
    }

    /// Frames above this size are read into pages of their own.
    static let mappedFrameBytes = 256 << 10

    /// Reads into `buffer[start...]` until at least `minimum` bytes have arrived (taking whatever else is
    /// there, up to the buffer's end); nil at a clean end of stream before the first byte.
    private func readSome(
        into buffer: inout [UInt8], from start: Int, minimum: Int,
        sender: UnixSocket.Credentials?
    ) throws(Failure) -> Int? {
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

    /// One receive into `buffer[offset...]`, checking the sender when asked; 0 at end of stream.
    private func receiveOnce(into buffer: inout [UInt8], at offset: Int, sender: UnixSocket.Credentials?)
        throws(Failure) -> Int
    {
        let received: Result<Int, Failure> = buffer.withUnsafeMutableBytes { raw in
            do throws(Failure) {
                return .success(
                    try receiveOnce(into: UnsafeMutableRawBufferPointer(rebasing: raw[offset...]), sender: sender))
            } catch {
                return .failure(error)
            }
        }
        return try received.get()
    }

    /// One receive into `window`, checking the sender when asked; 0 at end of stream.
    private func receiveOnce(into window: UnsafeMutableRawBufferPointer, sender: UnixSocket.Credentials?)
        throws(Failure) -> Int
    {
        let count: Int
        let actual: UnixSocket.Credentials?
        do throws(Errno) {
            guard sender != nil else { return try UnixSocket.receive(descriptor, into: window) }
            (count, actual) = try UnixSocket.receive(descriptor, into: window)
        } catch {
            throw .broken(error == .wouldBlock ? "timed out" : error.description)
        }
        if let sender, count > 0 && (actual?.pid != sender.pid || actual?.uid != sender.uid) {
            let who = actual.map { "pid \($0.pid) (uid \($0.uid))" } ?? "a sender the kernel did not name"
            throw .foreignSender("a message came from \(who), not from pid \(sender.pid), which connected")
        }
        return count
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
