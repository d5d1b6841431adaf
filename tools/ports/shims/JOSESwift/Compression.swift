// The streaming API of Apple's Compression framework JOSESwift uses for its "DEF" payloads —
// compression_stream with COMPRESSION_ZLIB, which is raw DEFLATE (RFC 1951) — on Linux, where the framework
// does not exist (it is not Security). zlib, loaded with dlopen, deflates and inflates with no header (window
// bits -15). Test-harness shim only, never part of Latchkey.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

public struct compression_stream_operation: Equatable { public let rawValue: UInt32 }
public struct compression_algorithm: Equatable { public let rawValue: UInt32 }
public struct compression_status: Equatable { public let rawValue: Int32 }
public struct compression_stream_flags: Equatable { public let rawValue: UInt32 }

public let COMPRESSION_STREAM_ENCODE = compression_stream_operation(rawValue: 0)
public let COMPRESSION_STREAM_DECODE = compression_stream_operation(rawValue: 1)
public let COMPRESSION_ZLIB = compression_algorithm(rawValue: 0x205)
public let COMPRESSION_STATUS_OK = compression_status(rawValue: 0)
public let COMPRESSION_STATUS_ERROR = compression_status(rawValue: -1)
public let COMPRESSION_STATUS_END = compression_status(rawValue: 1)
public let COMPRESSION_STREAM_FINALIZE = compression_stream_flags(rawValue: 1)

/// zlib's `z_stream` (zlib.h, 64-bit layout).
private struct ZStream {
    var nextIn: UnsafePointer<UInt8>? = nil
    var availIn: UInt32 = 0
    var totalIn: UInt = 0
    var nextOut: UnsafeMutablePointer<UInt8>? = nil
    var availOut: UInt32 = 0
    var totalOut: UInt = 0
    var message: UnsafePointer<CChar>? = nil
    var state: OpaquePointer? = nil
    var zalloc: OpaquePointer? = nil
    var zfree: OpaquePointer? = nil
    var opaque: OpaquePointer? = nil
    var dataType: Int32 = 0
    var adler: UInt = 0
    var reserved: UInt = 0
}

/// Apple's `compression_stream`: the caller's buffers, and zlib's state behind `state`.
public struct compression_stream {
    public var dst_ptr: UnsafeMutablePointer<UInt8>
    public var dst_size: Int
    public var src_ptr: UnsafePointer<UInt8>
    public var src_size: Int
    public var state: UnsafeMutableRawPointer?
}

private let zlib: UnsafeMutableRawPointer? = dlopen("libz.so.1", RTLD_NOW)

private func function<T>(_ name: String, as type: T.Type) -> T {
    guard let address = dlsym(zlib, name) else { fatalError("zlib has no \(name)") }
    return unsafeBitCast(address, to: type)
}

/// What `state` points to: the z_stream and the direction.
private final class Inflight {
    var stream = ZStream()
    let encode: Bool
    init(encode: Bool) { self.encode = encode }
}

public func compression_stream_init(
    _ stream: UnsafeMutablePointer<compression_stream>, _ operation: compression_stream_operation,
    _ algorithm: compression_algorithm
) -> compression_status {
    typealias DeflateInit = @convention(c) (UnsafeMutableRawPointer?, Int32, Int32, Int32, Int32, Int32, UnsafePointer<CChar>?, Int32) -> Int32
    typealias InflateInit = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, Int32) -> Int32
    guard algorithm == COMPRESSION_ZLIB else { return COMPRESSION_STATUS_ERROR }
    let inflight = Inflight(encode: operation == COMPRESSION_STREAM_ENCODE)
    let size = Int32(MemoryLayout<ZStream>.size)
    let result = withUnsafeMutablePointer(to: &inflight.stream) { pointer in
        inflight.encode
            ? function("deflateInit2_", as: DeflateInit.self)(pointer, 5, 8, -15, 8, 0, "1.2.13", size)
            : function("inflateInit2_", as: InflateInit.self)(pointer, -15, "1.2.13", size)
    }
    guard result == 0 else { return COMPRESSION_STATUS_ERROR }
    stream.pointee.state = Unmanaged.passRetained(inflight).toOpaque()
    return COMPRESSION_STATUS_OK
}

public func compression_stream_process(_ stream: UnsafeMutablePointer<compression_stream>, _ flags: Int32)
    -> compression_status
{
    typealias Step = @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32
    guard let state = stream.pointee.state else { return COMPRESSION_STATUS_ERROR }
    let inflight = Unmanaged<Inflight>.fromOpaque(state).takeUnretainedValue()
    inflight.stream.nextIn = stream.pointee.src_ptr
    inflight.stream.availIn = UInt32(stream.pointee.src_size)
    inflight.stream.nextOut = stream.pointee.dst_ptr
    inflight.stream.availOut = UInt32(stream.pointee.dst_size)
    let finish = flags & 1 != 0
    let result = withUnsafeMutablePointer(to: &inflight.stream) { pointer in
        inflight.encode
            ? function("deflate", as: Step.self)(pointer, finish ? 4 : 0)  // Z_FINISH : Z_NO_FLUSH
            : function("inflate", as: Step.self)(pointer, finish ? 4 : 0)
    }
    stream.pointee.src_ptr = inflight.stream.nextIn ?? stream.pointee.src_ptr
    stream.pointee.src_size = Int(inflight.stream.availIn)
    stream.pointee.dst_ptr = inflight.stream.nextOut ?? stream.pointee.dst_ptr
    stream.pointee.dst_size = Int(inflight.stream.availOut)
    switch result {
    case 1: return COMPRESSION_STATUS_END  // Z_STREAM_END
    case 0, -5: return COMPRESSION_STATUS_OK  // Z_OK, Z_BUF_ERROR (no progress possible yet)
    default: return COMPRESSION_STATUS_ERROR
    }
}

public func compression_stream_destroy(_ stream: UnsafeMutablePointer<compression_stream>) -> compression_status {
    typealias End = @convention(c) (UnsafeMutableRawPointer?) -> Int32
    guard let state = stream.pointee.state else { return COMPRESSION_STATUS_ERROR }
    let inflight = Unmanaged<Inflight>.fromOpaque(state).takeRetainedValue()
    _ = withUnsafeMutablePointer(to: &inflight.stream) { pointer in
        function(inflight.encode ? "deflateEnd" : "inflateEnd", as: End.self)(pointer)
    }
    stream.pointee.state = nil
    return COMPRESSION_STATUS_OK
}
