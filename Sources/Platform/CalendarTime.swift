// Local calendar time for a recorder's file names: now (`WallClock`), `strftime` of a pattern at a
// time, the local UTC offset.
// For naming and aligning a recorder's files. Any non-realtime thread.

import Glibc

public enum CalendarTime {
    /// Now, in seconds since 1970-01-01 UTC (CLOCK_REALTIME: it can step when the clock is set).
    public static func now() -> Double { WallClock.secondsSinceEpoch() }

    /// `pattern` with its strftime fields filled in for `seconds` (local time), or nil when
    /// the result would not fit 4096 bytes (or is empty while the pattern is not).
    public static func format(_ pattern: String, at seconds: Double) -> String? {
        var time = time_t(seconds.rounded(.down))
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return nil }
        var buffer = [CChar](repeating: 0, count: 4097)
        let count = buffer.withUnsafeMutableBufferPointer { strftime($0.baseAddress!, $0.count, pattern, &parts) }
        if count == 0 && !pattern.isEmpty { return nil }
        return String(decoding: buffer[0 ..< count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Seconds east of UTC of local time at `seconds` (the zone's offset, daylight saving included).
    public static func localOffset(at seconds: Double) -> Double {
        var time = time_t(seconds.rounded(.down))
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return 0 }
        return Double(parts.tm_gmtoff)
    }
}
