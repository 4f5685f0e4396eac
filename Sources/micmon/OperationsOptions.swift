// `record`'s unattended-operation options: retention (--keep, --keep-for), the disk guard
// (--min-free) and hooks (--on-file-closed, --on-event, --hook-timeout): their table entries,
// their values (sizes and durations) and their checks. Pure; any thread.

/// What `record` was asked to do around its files.
struct OperationsOptions: Equatable, Sendable {
    /// `--keep N`: keep the newest N files micmon wrote for FILE's pattern.
    var keepCount: Int?
    /// `--keep-for DURATION`: delete files micmon wrote for the pattern once they are older.
    var keepForSeconds: Double?
    /// `--min-free SIZE`: end the take when free space reaches this (0: never).
    var minimumFreeBytes: UInt64 = OperationsOptions.defaultMinimumFree
    var onFileClosed: String?
    var onEvent: String?
    /// `--hook-timeout DURATION`: a hook still running after this is killed.
    var hookTimeoutSeconds: Double = 30

    static let defaultMinimumFree: UInt64 = 256 << 20

    init() {}

    init(_ scanned: ScannedArguments) throws(UsageError) {
        keepCount = try scanned.number("keep").map { Int($0) }
        keepForSeconds = try scanned.last("keep-for") { text throws(UsageError) in
            try OptionValue.timeSpan(text, option: "--keep-for", upTo: 100 * 365 * 86400)
        }
        minimumFreeBytes =
            try scanned.last("min-free") { text throws(UsageError) in
                try OptionValue.byteSize(text, option: "--min-free")
            }
            ?? minimumFreeBytes
        onFileClosed = try scanned.last("on-file-closed") { text throws(UsageError) in
            try OptionValue.hookCommand(text, option: "--on-file-closed")
        }
        onEvent = try scanned.last("on-event") { text throws(UsageError) in
            try OptionValue.hookCommand(text, option: "--on-event")
        }
        hookTimeoutSeconds =
            try scanned.last("hook-timeout") { text throws(UsageError) in
                try OptionValue.timeSpan(text, option: "--hook-timeout", upTo: 86400)
            } ?? hookTimeoutSeconds
    }

    /// Whether any hook is set.
    var hasHooks: Bool { onFileClosed != nil || onEvent != nil }
}

extension OptionValue {
    /// A duration: a number with an optional unit, `ms`, `s`, `m`, `h` or `d` (`90`, `30s`,
    /// `15m`, `1.5h`, `7d`); more than 0 and at most `upTo` seconds, else exit 64.
    static func timeSpan(_ text: String, option: String, upTo limit: Double) throws(UsageError) -> Double {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        var number = Substring(text)
        var scale = 1.0
        for (unit, seconds) in units where text.hasSuffix(unit) {
            let stripped = text.dropLast(unit.count)
            // "ms" before "s", and a bare "m" only when it is not the end of "ms".
            if unit == "s" && text.hasSuffix("ms") { continue }
            number = stripped
            scale = seconds
            break
        }
        let isDecimal = !number.isEmpty && number.allSatisfy { "0123456789.".contains($0) }
        guard isDecimal, let value = Double(number), value.isFinite else {
            throw UsageError("\(option) needs a duration such as 30s, 15m, 1h or 7d, not '\(text)'")
        }
        let seconds = value * scale
        guard seconds > 0, seconds <= limit else {
            throw UsageError(
                "\(option) must be more than 0 and at most \(NumberRange.plain(limit)) s (got \(text))")
        }
        return seconds
    }

    /// A size in bytes: a number with an optional binary unit, `K`, `M`, `G` or `T` (each may be
    /// followed by `iB` or `B`: `512M`, `1.5GiB`, `100KB`; all mean powers of 1024), or bytes
    /// (`0`, `1048576`); at most 1 PiB, else exit 64.
    static func byteSize(_ text: String, option: String) throws(UsageError) -> UInt64 {
        var body = Substring(text)
        for suffix in ["iB", "B"] where body.hasSuffix(suffix) && body.count > suffix.count {
            body = body.dropLast(suffix.count)
            break
        }
        var scale: Double = 1
        if let last = body.last, let power = ["K": 1, "M": 2, "G": 3, "T": 4][String(last).uppercased()] {
            body = body.dropLast()
            scale = Double(UInt64(1) << (10 * UInt64(power)))
        }
        let isDecimal = !body.isEmpty && body.allSatisfy { "0123456789.".contains($0) }
        guard isDecimal, let value = Double(body), value.isFinite else {
            throw UsageError("\(option) needs a size such as 256M, 1.5G or 0, not '\(text)'")
        }
        let bytes = (value * scale).rounded()
        guard bytes <= Double(UInt64(1) << 50) else {
            throw UsageError("\(option) must be at most 1P (got \(text))")
        }
        return UInt64(bytes)
    }

    /// A hook's command line (run through /bin/sh -c): not empty.
    static func hookCommand(_ text: String, option: String) throws(UsageError) -> String {
        guard text.contains(where: { $0 != " " && $0 != "\t" }) else {
            throw UsageError("\(option) needs a command to run (through /bin/sh -c)")
        }
        return text
    }
}

extension CommandTable {
    /// `record`'s options for running unattended, in the order `--help` lists them.
    static let operationsOptions: [OptionSpec] = [
        OptionSpec(
            "keep", "N", kind: .number(NumberRange(1, 1_000_000, whole: true)),
            help: "after each file is finalized, delete the oldest files micmon itself wrote for FILE's pattern "
                + "(in this run or an earlier one) so the newest N stay; nothing else is ever deleted"),
        OptionSpec(
            "keep-for", "DURATION", kind: .text,
            help: "likewise, delete files micmon wrote for the pattern once they were finalized longer than "
                + "DURATION ago (30s, 15m, 1h, 7d)"),
        OptionSpec(
            "min-free", "SIZE", kind: .text,
            help: "end the take cleanly (exit 74) while free space on its file system is still above SIZE plus "
                + "what the take must still write, and warn at 10 minutes left (512M, 2G; 0: never stop). "
                + "Default: 256M"),
        OptionSpec(
            "on-file-closed", "CMD", kind: .text,
            help: "after each file is finalized, run CMD through /bin/sh -c with MICMON_FILE, MICMON_FRAMES, "
                + "MICMON_DROPS, MICMON_SERVER_GAPS and more set (docs/recording.md)"),
        OptionSpec(
            "on-event", "CMD", kind: .text,
            help: "run CMD for start, stop, rotate, xrun, clip, drop, disk_low and disk_stop, with MICMON_EVENT "
                + "and the event's variables set; hooks run on their own thread, one at a time, never delaying "
                + "the take; a failing hook is logged, not fatal"),
        OptionSpec(
            "hook-timeout", "DURATION", kind: .text,
            help: "kill a hook (its whole process group) still running after DURATION. Default: 30s"),
    ]
}
