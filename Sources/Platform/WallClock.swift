// The wall clock (CLOCK_REALTIME) and the local calendar (localtime_r, the TZ rules of the
// process). Any non-realtime thread.

import Glibc

/// The time of day by the system's wall clock, and how it reads in local time.
public enum WallClock {
    /// Now, in nanoseconds since the Unix epoch (CLOCK_REALTIME). Any thread.
    public static func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Now, in seconds since the Unix epoch with a fraction (when a file was written, for
    /// `--keep-for`; a file's name). Not for measuring intervals: it jumps when the clock is set.
    public static func secondsSinceEpoch() -> Double {
        Double(nanoseconds()) / 1e9
    }

    /// A moment in nanoseconds since the epoch, as the local calendar reads it.
    public static func localTime(ofNanoseconds moment: Int64) -> LocalTime {
        let seconds = moment >= 0 ? moment / 1_000_000_000 : (moment - 999_999_999) / 1_000_000_000
        var whole = time_t(seconds)
        var fields = tm()
        localtime_r(&whole, &fields)
        return LocalTime(
            year: Int(fields.tm_year) + 1900, month: Int(fields.tm_mon) + 1, day: Int(fields.tm_mday),
            hour: Int(fields.tm_hour), minute: Int(fields.tm_min), second: Int(fields.tm_sec),
            nanosecond: Int(moment - seconds * 1_000_000_000), utcOffsetSeconds: Int(fields.tm_gmtoff))
    }
}

/// A moment on the local calendar.
public struct LocalTime: Sendable, Equatable {
    public var year, month, day, hour, minute, second: Int
    /// Within the second, 0 ..< 1e9.
    public var nanosecond: Int
    /// Local time minus UTC, in seconds (east positive).
    public var utcOffsetSeconds: Int

    public init(
        year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, nanosecond: Int,
        utcOffsetSeconds: Int
    ) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.nanosecond = nanosecond
        self.utcOffsetSeconds = utcOffsetSeconds
    }

    /// Seconds since local midnight by the clock face (hour × 3600 + minute × 60 + second and
    /// the fraction), which is what a `bext` TimeReference counts.
    public var secondsSinceMidnight: Double {
        Double(hour * 3600 + minute * 60 + second) + Double(nanosecond) / 1e9
    }

    /// `yyyy-mm-dd`.
    public var date: String { "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))" }
    /// `hh:mm:ss`.
    public var time: String { "\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))" }
    /// ISO 8601 with microseconds and the offset: `2026-12-01T15:04:05.123456+01:00`.
    public var iso8601: String {
        let offset = abs(utcOffsetSeconds)
        let sign = utcOffsetSeconds < 0 ? "-" : "+"
        return "\(date)T\(time).\(pad(nanosecond / 1000, 6))\(sign)\(pad(offset / 3600, 2)):\(pad(offset / 60 % 60, 2))"
    }

    private func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
