package import FoundationEssentials

/// The times of snapshots as `latchkey backup` writes and reads them, always in UTC so a listing and a
/// script agree whatever the time zone: `2026-12-05T13:40:02Z` in listings, the compact
/// `20261205T134002.123Z` in file names, and for `--at` an ISO 8601 time, a date, or a span ago.
package enum SnapshotTime {
    /// `2026-12-05T13:40:02Z` (the second; the millisecond is in the file name).
    package static func iso(_ date: Date) -> String {
        let (year, month, day, hour, minute, second, _) = fields(date)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))Z"
    }

    /// `20261205T134002.123Z`.
    static func compact(_ date: Date) -> String {
        let (year, month, day, hour, minute, second, milli) = fields(date)
        return
            "\(pad(year, 4))\(pad(month, 2))\(pad(day, 2))T\(pad(hour, 2))\(pad(minute, 2))\(pad(second, 2)).\(pad(milli, 3))Z"
    }

    /// Reads `--at`'s value, nil when it is none of these:
    /// - `2026-12-05T13:40:02Z`, `2026-12-05T13:40Z`, with `+hh:mm`/`-hh:mm` instead of `Z`, or a space for `T`;
    /// - `2026-12-05`: the end of that day (UTC), so the day's last snapshot;
    /// - `90m`, `12h`, `1d`, `2w`: that long before `now`.
    package static func parse(_ text: String, now: Date) -> Date? {
        if let last = text.last, let unit = ["m": 60, "h": 3_600, "d": 86_400, "w": 604_800][last],
            let count = Int(text.dropLast()), count >= 0, count <= 100_000
        {
            return now.addingTimeInterval(-Double(count * unit))
        }
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ length: Int) -> Int? {
            guard start + length <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + length)] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard bytes.count >= 10, let year = number(0, 4), bytes[4] == 0x2D, let month = number(5, 2), bytes[7] == 0x2D,
            let day = number(8, 2), (1...12).contains(month), (1...daysIn(month, year)).contains(day)
        else { return nil }
        let midnight = Double(daysFromCivil(year, month, day)) * 86_400
        if bytes.count == 10 { return Date(timeIntervalSince1970: midnight + 86_399.999) }
        guard bytes.count >= 17, bytes[10] == 0x54 || bytes[10] == 0x20, let hour = number(11, 2), bytes[13] == 0x3A,
            let minute = number(14, 2), hour < 24, minute < 60
        else { return nil }
        var index = 16
        var second = 0
        if index < bytes.count, bytes[index] == 0x3A {
            guard let value = number(index + 1, 2), value < 60 else { return nil }
            second = value
            index += 3
        }
        var offset = 0
        if index == bytes.count - 1, bytes[index] == 0x5A {
            offset = 0
        } else if index == bytes.count - 6, bytes[index] == 0x2B || bytes[index] == 0x2D,
            let hours = number(index + 1, 2),
            bytes[index + 3] == 0x3A, let minutes = number(index + 4, 2), hours < 24, minutes < 60
        {
            offset = (hours * 3_600 + minutes * 60) * (bytes[index] == 0x2B ? 1 : -1)
        } else {
            return nil
        }
        return Date(timeIntervalSince1970: midnight + Double(hour * 3_600 + minute * 60 + second - offset))
    }

    private static func fields(_ date: Date) -> (Int, Int, Int, Int, Int, Int, Int) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1_000).rounded(.down))
        let days = Int(milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000)
        let rest = Int(milliseconds - Int64(days) * 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        return (year, month, day, rest / 3_600_000, rest / 60_000 % 60, rest / 1_000 % 60, rest % 1_000)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    private static func daysIn(_ month: Int, _ year: Int) -> Int {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of `daysFromCivil` (Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
