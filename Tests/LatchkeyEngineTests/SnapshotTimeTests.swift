import Foundation
import Latchkey
import Testing

/// The times `latchkey backup` prints and `--at` reads, all in UTC.
@Suite struct SnapshotTimeTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15T08:00:00Z

    @Test func listingsShowTheSecondInUTC() {
        #expect(SnapshotTime.iso(now) == "2027-01-15T08:00:00Z")
        #expect(SnapshotTime.iso(Date(timeIntervalSince1970: 951_782_400.5)) == "2000-02-29T00:00:00Z")
        #expect(SnapshotTime.iso(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
    }

    @Test func atReadsTimesDatesAndSpans() {
        let cases: [(String, Double)] = [
            ("2027-01-15T08:00:00Z", 1_800_000_000),
            ("2027-01-15T08:00Z", 1_800_000_000),
            ("2027-01-15 08:00:30Z", 1_800_000_030),
            ("2027-01-15T09:00:00+01:00", 1_800_000_000),
            ("2027-01-15T07:30-00:30", 1_800_000_000),
            ("2027-01-15", 1_800_000_000 + 16 * 3_600 - 0.001),
            ("2000-02-29", 951_868_799.999),
            ("90m", 1_800_000_000 - 5_400),
            ("12h", 1_800_000_000 - 43_200),
            ("1d", 1_800_000_000 - 86_400),
            ("2w", 1_800_000_000 - 1_209_600),
        ]
        for (text, expected) in cases {
            let parsed = SnapshotTime.parse(text, now: now)?.timeIntervalSince1970
            #expect(parsed.map { abs($0 - expected) < 0.0005 } == true, "\(text) read as \(String(describing: parsed))")
        }
    }

    @Test func atRefusesWhatIsNotATime() {
        for text in [
            "", "yesterday", "2027-13-01", "2027-02-29", "2027-01-15T24:00Z", "2027-01-15T08:00", "2027-01-15T08:00:00",
            "2027-01-15T08:00:00+1", "1x", "-1d", "d", "2027/01/15", "2027-01-15T08:00:61Z",
        ] {
            #expect(SnapshotTime.parse(text, now: now) == nil, "\(text)")
        }
    }
}
