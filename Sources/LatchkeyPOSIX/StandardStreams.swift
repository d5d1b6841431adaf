import Glibc

/// Reading a program's input as it arrives, for protocols whose end is a line (git's blank line) rather
/// than the end of the stream: `read(2)` once, EINTR retried.
package enum StandardStreams {
    /// The descriptor of standard input.
    package static let input: Int32 = 0

    /// Up to `maximum` bytes from `fd`, as many as one `read` gives (waiting until some arrive); empty at the
    /// end of the input.
    package static func readSome(_ fd: Int32, maximum: Int) throws(Errno) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max(maximum, 1))
        // What arrives may be a secret: the copy handed back is the caller's to wipe, this one is wiped here.
        defer { buffer.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw Errno.current }
            return Array(buffer[0..<count])
        }
    }
}
