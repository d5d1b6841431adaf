public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One end of an agent connection: framed messages over a Unix stream socket. Reads check the frame size
/// before allocating; a peer that stops mid-frame is an error, not a hang (a read timeout applies).
public final class AgentStream: @unchecked Sendable {
    // @unchecked: the descriptor is used by one thread at a time (the connection's handler, or a client
    // under its own lock) and closed once, in deinit.
    /// The connected socket's file descriptor (for peer credentials and polling); the stream owns it.
    public let descriptor: Int32

    /// Wraps an open, connected socket; the stream closes it when released.
    public init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// Connects to the agent's socket; nil when no agent listens there.
    public static func connect(path: String, timeoutSeconds: Int = 30) -> AgentStream? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            return nil
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            return nil
        }
        let stream = AgentStream(descriptor: fd)
        stream.setTimeout(seconds: timeoutSeconds)
        return stream
    }

    /// Bounds how long one read or write may block.
    public func setTimeout(seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Why a frame could not be sent or received.
    public enum Failure: Error, Equatable {
        /// The other side closed the connection (cleanly, between frames).
        case closed
        /// A system call failed (or timed out), or the peer closed mid-frame.
        case broken(String)
        /// The frame announced more bytes than allowed.
        case oversized(Int)
    }

    /// Sends one framed message.
    public func send(_ message: Data) throws(Failure) {
        var frame = Data(capacity: message.count + 4)
        withUnsafeBytes(of: UInt32(message.count).bigEndian) { frame.append(contentsOf: $0) }
        frame.append(message)
        try writeAll(frame)
    }

    /// Receives one framed message of at most `limit` bytes.
    public func receive(limit: Int = AgentFrame.maximumBytes) throws(Failure) -> Data {
        guard let header = try readExactly(4, allowCleanEnd: true) else { throw .closed }
        let length = header.withUnsafeBytes { Int(UInt32(bigEndian: $0.loadUnaligned(as: UInt32.self))) }
        guard length <= limit else { throw .oversized(length) }
        guard let body = try readExactly(length, allowCleanEnd: false) else { throw .broken("the peer closed mid-message") }
        return body
    }

    private func writeAll(_ data: Data) throws(Failure) {
        var failure: Failure?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = .broken(String(cString: strerror(errno)))
                    return
                }
                offset += written
            }
        }
        if let failure { throw failure }
    }

    private func readExactly(_ count: Int, allowCleanEnd: Bool) throws(Failure) -> Data? {
        var data = Data(count: count)
        var offset = 0
        var failure: Failure?
        var ended = false
        data.withUnsafeMutableBytes { buffer in
            while offset < count {
                let got = recv(descriptor, buffer.baseAddress! + offset, count - offset, 0)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = .broken(errno == EAGAIN ? "timed out" : String(cString: strerror(errno)))
                    return
                }
                if got == 0 {
                    ended = true
                    return
                }
                offset += got
            }
        }
        if let failure { throw failure }
        if ended {
            if offset == 0 && allowCleanEnd { return nil }
            throw .broken("the peer closed mid-message")
        }
        return data
    }
}

/// Where the agent listens: `LATCHKEY_AGENT_SOCKET`, else `$XDG_RUNTIME_DIR/latchkey/agent.sock`, else
/// `/tmp/latchkey-<uid>/agent.sock`. The directory is private (0700).
public enum AgentLocation {
    /// The environment variable that names the socket.
    public static let socketVariable = "LATCHKEY_AGENT_SOCKET"

    /// The socket path.
    public static func socketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment[socketVariable], !path.isEmpty { return path }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") { return runtime + "/latchkey/agent.sock" }
        return "/tmp/latchkey-\(geteuid())/agent.sock"
    }
}
