import Glibc

/// A moment as the local clock shows it, from the C library (`localtime_r`: thread-safe, no Foundation
/// formatter on the way of a message, and nothing that can trap on an out-of-range date).
struct LocalTime: Equatable {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    /// 0 for Sunday … 6 for Saturday.
    var weekday: Int

    /// The local time of `milliseconds` since the Unix epoch; nil for a date the C library cannot represent.
    init?(milliseconds: UInt64) {
        guard milliseconds / 1_000 < UInt64(Int64.max) else { return nil }
        var seconds = time_t(milliseconds / 1_000)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return nil }
        year = Int(parts.tm_year) + 1_900
        month = Int(parts.tm_mon) + 1
        day = Int(parts.tm_mday)
        hour = Int(parts.tm_hour)
        minute = Int(parts.tm_min)
        weekday = Int(parts.tm_wday)
    }

    /// Whether both fall on the same local day.
    func isSameDay(as other: LocalTime) -> Bool {
        (year, month, day) == (other.year, other.month, other.day)
    }

    /// "2026-12-01".
    var date: String { "\(year)-\(Self.twoDigits(month))-\(Self.twoDigits(day))" }

    /// "16:34".
    var clock: String { "\(Self.twoDigits(hour)):\(Self.twoDigits(minute))" }

    /// "Tuesday".
    var weekdayName: String {
        ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"][weekday]
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

/// How the REPL writes when a message was created: the time alone for today, with the date otherwise.
enum Timestamp {
    /// "16:34" on `today`, "2026-11-30 16:34" on any other day (also a day in the future, which a peer whose
    /// clock is ahead can send).
    static func text(_ created: UInt64, today: LocalTime?) -> String {
        guard let time = LocalTime(milliseconds: created) else { return "(date unknown)" }
        if let today, time.isSameDay(as: today) { return time.clock }
        return "\(time.date) \(time.clock)"
    }

    /// The line printed when the day changes between two messages: "-- Tuesday 2026-12-01 --".
    static func dayLine(_ time: LocalTime) -> String {
        "-- \(time.weekdayName) \(time.date) --"
    }
}
