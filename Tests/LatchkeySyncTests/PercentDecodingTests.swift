import Foundation
import LatchkeySync
import Testing

/// A connection string's query values are percent-decoded as Foundation's `removingPercentEncoding` decodes.
@Suite struct PercentDecodingTests {
    @Test func decodingMatchesFoundation() {
        for text in [
            "plain", "a%20b", "%2Fetc%2fpasswd", "%", "%4", "%zz", "%C3%A9", "%C3", "%FF", "100%25", "", "%00x",
        ] {
            #expect(text.percentDecoded == text.removingPercentEncoding, "\(text.debugDescription)")
        }
    }
}
