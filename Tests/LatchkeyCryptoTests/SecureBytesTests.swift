import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct SecureBytesTests {
    @Test func descriptionNeverShowsTheBytes() {
        let bytes = SecureBytes(copying: Array("hunter2".utf8))
        #expect(bytes.description == "SecureBytes(7 bytes, redacted)")
        #expect(String(reflecting: bytes) == "SecureBytes(7 bytes, redacted)")
    }

    @Test func equalityIsByContent() {
        let a = SecureBytes(copying: [1, 2, 3])
        #expect(a.constantTimeEquals(SecureBytes(copying: [1, 2, 3])))
        #expect(!a.constantTimeEquals(SecureBytes(copying: [1, 2, 4])))
        #expect(!a.constantTimeEquals(SecureBytes(copying: [1, 2])))
    }

    @Test func randomBuffersDiffer() {
        #expect(!SecureBytes(randomCount: 32).constantTimeEquals(SecureBytes(randomCount: 32)))
    }

    @Test func aThrowingInitializerPropagatesItsError() {
        struct Boom: Error {}
        #expect(throws: Boom.self) { try SecureBytes(count: 8) { (_) throws(Boom) in throw Boom() } }
    }

    @Test func emptyBuffersWork() {
        let empty = SecureBytes(copying: [])
        #expect(empty.count == 0)
        #expect(empty.constantTimeEquals(SecureBytes(copying: [])))
    }
}
