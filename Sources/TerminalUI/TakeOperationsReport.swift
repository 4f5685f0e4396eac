// What a recorder's operations say: hook results, warnings (the disk guard's among them) and
// retention's deletions, as stderr lines and as JSON objects on the take's timeline; free space
// and time left for the status line. Pure; any thread.

/// Free space on the take's file system and how long the take can go on, for the status line
/// and the `meter` object.
public struct DiskDisplay: Sendable, Equatable {
    public var freeBytes: UInt64
    /// nil when not known (nothing is written).
    public var secondsLeft: Double?

    public init(freeBytes: UInt64, secondsLeft: Double?) {
        self.freeBytes = freeBytes
        self.secondsLeft = secondsLeft
    }

    /// "free 68.2 GiB, 41h12m left" (or "free 68.2 GiB" without a rate).
    public var text: String {
        "free " + TextFormat.bytes(freeBytes) + (secondsLeft.map { ", " + TextFormat.span($0) + " left" } ?? "")
    }
}

/// How one hook ended, placed on the take's timeline where its event happened.
public struct HookReportLine: Sendable, Equatable {
    public enum Status: String, Sendable {
        case ok, failed
        case timedOut = "timed_out"
        case notStarted = "not_started"
        case notRun = "not_run"
    }

    /// `on-file-closed` or `on-event`.
    public var hook: String
    public var event: String
    public var command: String
    public var takeSeconds: Double
    public var takeFrame: UInt64
    public var status: Status
    public var exitCode: Int32?
    public var signal: Int32?
    /// Wall-clock seconds it ran.
    public var seconds: Double
    /// Its last line of output, or why it did not run.
    public var detail: String?
    /// `--hook-timeout`, for the timed-out message.
    public var timeout: Double

    public init(
        hook: String, event: String, command: String, takeSeconds: Double, takeFrame: UInt64, status: Status,
        exitCode: Int32? = nil, signal: Int32? = nil, seconds: Double, detail: String? = nil, timeout: Double
    ) {
        self.hook = hook
        self.event = event
        self.command = command
        self.takeSeconds = takeSeconds
        self.takeFrame = takeFrame
        self.status = status
        self.exitCode = exitCode
        self.signal = signal
        self.seconds = seconds
        self.detail = detail
        self.timeout = timeout
    }

    /// The stderr line for a hook that did not succeed (nil for one that did), e.g.
    /// `[12.345 s] hook --on-event (xrun) failed: exit 3: no route to host`.
    public var text: String? {
        let head = "[\(TakeTime.text(takeSeconds)) s] hook --\(hook) (\(event)) "
        let tail = detail.map { ": " + TextFormat.printable($0) } ?? ""
        switch status {
        case .ok: return nil
        case .failed:
            let how = exitCode.map { "exit \($0)" } ?? signal.map { "signal \($0)" } ?? "failed"
            return head + "failed: " + how + tail
        case .timedOut:
            return head + "still running after " + TextFormat.fixed(timeout, decimals: 1)
                + " s (--hook-timeout): killed" + tail
        case .notStarted: return head + "could not be started" + tail
        case .notRun: return head + "not run" + tail
        }
    }

    /// `{"type":"hook","schema":1,"time":12.345,"frame":592560,"hook":"on-event","event":"xrun",
    /// "command":"…","status":"failed","exit_code":3,"signal":null,"duration_s":0.004,"output":"…"}`.
    public var json: String {
        var object = JSONObject(type: "hook")
        object.literal("time", TakeTime.text(takeSeconds))
        object.integer("frame", takeFrame)
        object.string("hook", hook)
        object.string("event", event)
        object.string("command", command)
        object.string("status", status.rawValue)
        object.integer("exit_code", exitCode)
        object.integer("signal", signal)
        object.number("duration_s", seconds, decimals: 3)
        object.string("output", detail)
        return object.text
    }
}

/// A warning during a take (the disk guard's, retention's trouble), placed on its timeline.
public struct TakeWarningLine: Sendable, Equatable {
    /// `disk_low` (10 minutes left), `disk_stop` (free space reached --min-free: the take ends),
    /// `disk_unreadable` (statvfs failed), `retention` (a file it could not delete or record).
    public var warning: String
    public var message: String
    public var takeSeconds: Double
    public var takeFrame: UInt64
    public var disk: DiskDisplay?

    public init(warning: String, message: String, takeSeconds: Double, takeFrame: UInt64, disk: DiskDisplay? = nil) {
        self.warning = warning
        self.message = message
        self.takeSeconds = takeSeconds
        self.takeFrame = takeFrame
        self.disk = disk
    }

    /// `[3.000 s] warning: only 10 minutes left on /data: free 1.2 GiB, 9m58s left`.
    public var text: String { "[\(TakeTime.text(takeSeconds)) s] warning: " + TextFormat.printable(message) }

    public var json: String {
        var object = JSONObject(type: "warning")
        object.literal("time", TakeTime.text(takeSeconds))
        object.integer("frame", takeFrame)
        object.string("warning", warning)
        object.string("message", message)
        if let disk {
            object.integer("free_bytes", disk.freeBytes)
            object.number("seconds_left", disk.secondsLeft, decimals: 1)
        }
        return object.text
    }
}

/// A file retention deleted, placed where on the take's timeline the file that made room closed.
public struct RetentionLine: Sendable, Equatable {
    public var path: String
    /// `--keep 3`, `--keep-for 7d`: the rule that let it go.
    public var rule: String
    public var takeSeconds: Double
    public var takeFrame: UInt64

    public init(path: String, rule: String, takeSeconds: Double, takeFrame: UInt64) {
        self.path = path
        self.rule = rule
        self.takeSeconds = takeSeconds
        self.takeFrame = takeFrame
    }

    public var text: String {
        "[\(TakeTime.text(takeSeconds)) s] removed " + TextFormat.printable(path) + " (" + rule + ")"
    }

    public var json: String {
        var object = JSONObject(type: "retention")
        object.literal("time", TakeTime.text(takeSeconds))
        object.integer("frame", takeFrame)
        object.string("removed", path)
        object.string("rule", rule)
        return object.text
    }
}

/// A place on the take's timeline in seconds, 3 decimals, truncated (never later than it was).
enum TakeTime {
    static func text(_ seconds: Double) -> String {
        TextFormat.fixed((max(0, seconds) * 1000).rounded(.down) / 1000, decimals: 3)
    }
}

extension TextFormat {
    /// Bytes in binary units with one decimal: "512 B", "1.5 KiB", "68.2 GiB".
    public static func bytes(_ count: UInt64) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB", "PiB"]
        guard count >= 1024 else { return "\(count) B" }
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return fixed(value, decimals: 1) + " " + units[unit]
    }

    /// A span of time, coarse: "45s", "9m58s", "41h12m", "12d03h".
    public static func span(_ seconds: Double) -> String {
        let whole = seconds.isFinite ? Int(max(0, min(seconds, 1e12))) : 0
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return "\(whole / 60)m" + pad(String(whole % 60), 2, with: "0") + "s" }
        if whole < 86400 { return "\(whole / 3600)h" + pad(String(whole % 3600 / 60), 2, with: "0") + "m" }
        return "\(whole / 86400)d" + pad(String(whole % 86400 / 3600), 2, with: "0") + "h"
    }
}
