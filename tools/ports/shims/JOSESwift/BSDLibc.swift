// `timingsafe_bcmp`, which Darwin's libc has and glibc does not (it is not Security). JOSESwift compares MACs
// with it. A constant-time comparison: every byte is read whatever differs. Test-harness shim only.
import Foundation

/// Zero when the `len` bytes at `b1` and `b2` are equal, one otherwise, in time independent of their contents.
public func timingsafe_bcmp(_ b1: UnsafeRawPointer!, _ b2: UnsafeRawPointer!, _ len: Int) -> Int32 {
    var difference: UInt8 = 0
    for index in 0..<len { difference |= b1.load(fromByteOffset: index, as: UInt8.self) ^ b2.load(fromByteOffset: index, as: UInt8.self) }
    return difference == 0 ? 0 : 1
}
