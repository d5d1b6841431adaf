import LatchkeyCrypto

/// `SecRandomRef`: Latchkey has one random source, so the only value is `kSecRandomDefault` (nil).
public typealias SecRandomRef = OpaquePointer

/// `kSecRandomDefault`: nil, as on Apple platforms.
public var kSecRandomDefault: SecRandomRef? { nil }

/// `SecRandomCopyBytes`: fills `bytes` with `count` bytes from the operating system's CSPRNG (libsodium's
/// `randombytes_buf`, `getrandom` underneath). Returns `errSecSuccess`; a negative count is `errSecParam`.
@discardableResult
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    guard count >= 0 else { return errSecParam }
    SecureRandom.fill(UnsafeMutableRawBufferPointer(start: bytes, count: count))
    return errSecSuccess
}
