import Glibc

extension FileDescriptor {
    /// Up to `maximum` bytes, as many as one `read` gives (waiting until some arrive; EINTR retried); empty
    /// at the end of the input. For protocols whose end is a line (git's blank line) rather than the end of
    /// the stream.
    package func readSome(maximum: Int) throws(Errno) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max(maximum, 1))
        // What arrives may be a secret: the copy handed back is the caller's to wipe, this one is wiped here.
        defer { buffer.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(rawValue, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw Errno.current }
            return Array(buffer[0..<count])
        }
    }

    /// Reads bytes up to a newline (not included) or end of input; nil at end of input with nothing read.
    package func readLine(limit: Int = 64 << 10) -> [UInt8]? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < limit {
            let count = read(rawValue, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return bytes.isEmpty ? nil : bytes }
            if byte == UInt8(ascii: "\n") { return bytes }
            bytes.append(byte)
        }
        return bytes
    }

    /// Why `readAll` failed.
    package enum ReadAllFailure: Error, Equatable {
        /// More than the limit arrived.
        case tooLarge
        /// A read failed.
        case system(Errno)
    }

    /// Reads to end of input, at most `limit` bytes.
    package func readAll(limit: Int) throws(ReadAllFailure) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        defer { buffer.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(rawValue, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw .system(Errno.current) }
            if count == 0 { return bytes }
            bytes.append(contentsOf: buffer[0..<count])
            if bytes.count > limit { throw .tooLarge }
        }
    }

    /// Writes every byte.
    package func writeAll(_ bytes: [UInt8]) throws(Errno) {
        try bytes.withUnsafeBytes { buffer in Result { () throws(Errno) in try writeAll(buffer) } }.get()
    }

    /// Writes every byte of a buffer the caller holds (a secret in locked memory: no copy is made).
    package func writeAll(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let written = try retryingInterrupts { write(rawValue, bytes.baseAddress! + offset, bytes.count - offset) }
            offset += written
        }
    }
}
