public import Foundation

// The CFData functions code uses to move bytes in and out of Security's APIs.

/// `CFDataCreate`: a `CFData` holding a copy of `length` bytes at `bytes` (none for a nil pointer or a
/// length that is not positive). `allocator` is ignored.
public func CFDataCreate(_ allocator: CFAllocator!, _ bytes: UnsafePointer<UInt8>!, _ length: CFIndex) -> CFData! {
    guard let bytes, length > 0 else { return NSData() }
    return NSData(bytes: bytes, length: length)
}

/// `CFDataCreateWithBytesNoCopy`: a `CFData` over `length` bytes at `bytes`, not copied. With
/// `kCFAllocatorNull` as `bytesDeallocator` the bytes stay the caller's (who keeps them alive as long as the
/// data); with the default one (nil) the data frees them with `free` when it goes, as Core Foundation's
/// default allocator would — so they must come from `malloc`.
public func CFDataCreateWithBytesNoCopy(
    _ allocator: CFAllocator!, _ bytes: UnsafePointer<UInt8>!, _ length: CFIndex, _ bytesDeallocator: CFAllocator!
) -> CFData! {
    guard let bytes else { return NSData() }
    let freeing = bytesDeallocator !== kCFAllocatorNull
    guard length > 0 else {
        if freeing { free(UnsafeMutableRawPointer(mutating: bytes)) }  // The data owned them, and holds none.
        return NSData()
    }
    return NSData(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes), length: length, freeWhenDone: freeing)
}

/// `CFDataGetBytePtr`: the data's bytes, valid as long as the data (an empty data's pointer is not to be
/// read).
public func CFDataGetBytePtr(_ theData: CFData!) -> UnsafePointer<UInt8>! {
    theData.map { $0.bytes.assumingMemoryBound(to: UInt8.self) }
}

/// `CFDataGetLength`: the number of bytes.
public func CFDataGetLength(_ theData: CFData!) -> CFIndex { theData?.length ?? 0 }
