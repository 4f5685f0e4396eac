/// `micmon play`'s text: the position line under the meters, route messages, the summary.
/// Pure; any thread.
public enum PlaybackReport {
    /// Where playback stands, e.g. `PAUSED 00:12.3 / 01:00.0  song.wav` (`∞` when it loops).
    public static func positionLine(isPaused: Bool, seconds: Double, totalSeconds: Double?, path: String) -> String {
        (isPaused ? "PAUSED " : "") + TextFormat.clock(seconds) + " / " + (totalSeconds.map(TextFormat.clock) ?? "∞")
            + "  " + TextFormat.printable(path)
    }

    /// The destination ports went away at `seconds`; playback pauses or stops.
    public static func routeLost(at seconds: Double, ports: [String], pauses: Bool) -> String {
        TextFormat.clock(seconds) + " route lost: " + TextFormat.printable(ports.joined(separator: ", "))
            + " went away; " + (pauses ? "paused" : "stopping")
    }

    public static func routeRestored(at seconds: Double, ports: [String]) -> String {
        TextFormat.clock(seconds) + " route back: " + TextFormat.printable(ports.joined(separator: ", ")) + "; resumed"
    }

    /// How playback ended.
    public struct Summary: Sendable, Equatable {
        public var reason: StopReason
        public var framesPlayed: UInt64
        public var sampleRate: Int
        public var framesStarved: UInt64
        public var xruns: UInt64
        /// NaN and ±∞ samples of the file sent to JACK as 0 (never as themselves).
        public var nonFiniteReplaced: UInt64
        /// Frames of the server's clock that micmon's output did not reach in time (it was late or
        /// stopped), in `missedGaps` at their playback positions. Non-zero means exit 75.
        public var framesMissed: UInt64 = 0
        public var missedGapCount: UInt64 = 0
        public var missedGaps: [SessionSummary.Drop] = []
        /// PipeWire only: cycles micmon ran late (each one is in `framesMissed` or
        /// `framesUncertain`).
        public var lateCycles: UInt64 = 0
        /// PipeWire only: frames of cycles micmon entered a period after they began, which
        /// reached the outputs only if the whole graph was that late with it (nothing a client
        /// sees tells), in `uncertainGaps`. Non-zero means exit 75: a take that may have lost
        /// frames is never reported whole.
        public var framesUncertain: UInt64 = 0
        public var uncertainGapCount: UInt64 = 0
        public var uncertainGaps: [SessionSummary.Drop] = []
        /// Late reads of the server's frame counter that netted out: nothing missed.
        public var timelineJitter: UInt64 = 0

        public init(
            reason: StopReason, framesPlayed: UInt64, sampleRate: Int, framesStarved: UInt64, xruns: UInt64,
            nonFiniteReplaced: UInt64 = 0
        ) {
            self.nonFiniteReplaced = nonFiniteReplaced
            self.reason = reason
            self.framesPlayed = framesPlayed
            self.sampleRate = sampleRate
            self.framesStarved = framesStarved
            self.xruns = xruns
        }

        var seconds: Double { sampleRate > 0 ? Double(framesPlayed) / Double(sampleRate) : 0 }
    }

    public static func text(_ s: Summary) -> String {
        "Playback summary\n"
            + "  ended:     \(TextFormat.printable(s.reason.text))\n"
            + "  played:    \(s.framesPlayed) frames (\(TextFormat.fixed(s.seconds, decimals: 3)) s) at \(s.sampleRate) Hz\n"
            + "  starved:   \(s.framesStarved) frames\n"
            + "  xruns:     \(s.xruns)"
            + (s.nonFiniteReplaced > 0 ? "\n  non-finite: \(s.nonFiniteReplaced) samples (NaN or ±∞) sent as 0" : "")
            + timelineText(s)
    }

    /// The missed and late lines (nothing when the outputs' timeline was whole).
    static func timelineText(_ s: Summary) -> String {
        var lines: [String] = []
        if s.missedGapCount > 0 {
            lines.append(
                "  missed:    \(s.framesMissed) frames in \(s.missedGapCount) gap" + (s.missedGapCount == 1 ? "" : "s")
                    + " (the server ran them before micmon's output reached it)"
            )
            lines += SummaryFormatter.listed(s.missedGaps, total: Int(s.missedGapCount), sampleRate: s.sampleRate)
        }
        if s.uncertainGapCount > 0 {
            lines.append(
                "  unsure:    \(s.framesUncertain) frames in \(s.uncertainGapCount) period"
                    + (s.uncertainGapCount == 1 ? "" : "s")
                    + " entered a period late: lost unless the whole graph ran that late too (PipeWire does not tell)"
            )
            lines += SummaryFormatter.listed(s.uncertainGaps, total: Int(s.uncertainGapCount), sampleRate: s.sampleRate)
        }
        if s.lateCycles > 0 {
            lines.append(
                "  late:      \(s.lateCycles) cycle" + (s.lateCycles == 1 ? "" : "s")
                    + " micmon ran late (PipeWire): a late period never reached the outputs when the next call"
                    + " repeated its position (in missed), and may not have when it was entered a period late"
                    + " (in unsure)")
        }
        if s.timelineJitter > 0 { lines.append("  jitter:    \(s.timelineJitter) late counter reads, nothing missed") }
        return lines.map { "\n" + $0 }.joined()
    }

    /// One line: `{"type":"summary","schema":1,"reason":"end of file","frames_played":…}`.
    public static func json(_ s: Summary) -> String {
        var object = JSONObject(type: "summary")
        object.string("reason", s.reason.text)
        object.integer("frames_played", s.framesPlayed)
        object.number("duration_s", s.seconds, decimals: 3)
        object.integer("sample_rate", s.sampleRate)
        object.integer("frames_starved", s.framesStarved)
        object.integer("xruns", s.xruns)
        object.integer("non_finite_replaced", s.nonFiniteReplaced)
        object.integer("missed_gap_count", s.missedGapCount)
        object.integer("frames_missed", s.framesMissed)
        object.objects("missed_gaps", gapList(s.missedGaps, sampleRate: s.sampleRate))
        if s.uncertainGapCount > 0 {
            object.integer("uncertain_gap_count", s.uncertainGapCount)
            object.integer("frames_uncertain", s.framesUncertain)
            object.objects("uncertain_gaps", gapList(s.uncertainGaps, sampleRate: s.sampleRate))
        }
        object.integer("timeline_jitter", s.timelineJitter)
        if s.lateCycles > 0 { object.integer("late_cycles", s.lateCycles) }
        return object.text
    }

    /// Gaps as JSON objects: playback position and length, in frames and in time.
    static func gapList(_ gaps: [SessionSummary.Drop], sampleRate: Int) -> [JSONObject] {
        gaps.map { d in
            var gap = JSONObject()
            gap.integer("start_frame", d.startFrame)
            gap.integer("length", d.length)
            gap.number("start_s", SummaryFormatter.seconds(d.startFrame, sampleRate), decimals: 3)
            gap.number("length_ms", 1000 * SummaryFormatter.seconds(d.length, sampleRate), decimals: 1)
            return gap
        }
    }
}

/// A change in where a capture input's signal comes from, as the session saw it.
public struct InputRouteChange: Sendable, Equatable {
    /// The raw values are the JSON `"event"`.
    public enum Kind: String, Sendable {
        /// The source port went away: the input reads silence.
        case sourceGone = "source_gone"
        /// The source came back and micmon reconnected it.
        case sourceBack = "source_back"
        /// The source had gone and the input's pattern matched a port of another name (a client
        /// back under a new name); micmon connected it.
        case sourceMatched = "source_matched"
        /// The input's request matched no port at start (`--allow-unconnected`) and now names
        /// one; micmon connected it.
        case sourceFound = "source_found"
        /// Someone else connected or disconnected this input.
        case connectionsChanged = "connections_changed"
    }

    public var kind: Kind
    /// The input ("in_1").
    public var input: String
    /// The requested source (gone, back) or the input's connections now.
    public var ports: [String]
    /// Seconds into the take.
    public var seconds: Double

    public init(kind: Kind, input: String, ports: [String], seconds: Double) {
        self.kind = kind
        self.input = input
        self.ports = ports
        self.seconds = seconds
    }

    /// Seconds with 3 decimals, truncated (an event is never stamped later than it was seen).
    var time: String { TextFormat.fixed((max(0, seconds) * 1000).rounded(.down) / 1000, decimals: 3) }

    /// The stderr line, e.g. `[1.250 s] in_1: source system:capture_1 went away; reading silence…`.
    public var text: String {
        let what: String
        switch kind {
        case .sourceGone: what = "\(input): source \(ports.joined()) went away; reading silence until it returns"
        case .sourceBack: what = "\(input): source \(ports.joined()) is back; reconnected"
        case .sourceMatched: what = "\(input): its pattern now matches \(ports.joined()); connected"
        case .sourceFound: what = "\(input): its source \(ports.joined()) appeared; connected"
        case .connectionsChanged:
            what =
                "\(input): connections changed by another client; now "
                + (ports.isEmpty ? "(none)" : ports.joined(separator: ", "))
        }
        return "[\(time) s] " + TextFormat.printable(what)
    }

    /// One line: `{"type":"event","schema":1,"time":1.250,"event":"source_gone","input":"in_1","ports":[…]}`.
    public var json: String {
        var object = JSONObject(type: "event")
        object.literal("time", time)
        object.string("event", kind.rawValue)
        object.string("input", input)
        object.strings("ports", ports)
        return object.text
    }
}

/// A block of lines redrawn in place on a terminal (the meters), or a single status line.
/// Produces the text to write; the caller writes it. Main thread.
public struct LiveScreen: Sendable {
    public static let hideCursor = "\u{1B}[?25l"
    public static let showCursor = "\u{1B}[?25h"
    /// Clears the line the cursor is on (for a one-line live display).
    public static let clearLine = "\r\u{1B}[2K"

    private var linesOnScreen = 0

    public init() {}

    /// Moves up over the last drawing and draws `lines` in its place.
    public mutating func redraw(_ lines: [String]) -> String {
        var text = linesOnScreen > 0 ? "\u{1B}[\(linesOnScreen)A" : ""
        for line in lines { text += Self.clearLine + line + "\n" }
        linesOnScreen = lines.count
        return text
    }

    /// Something else was printed below the drawing: the next one starts afresh under it.
    public mutating func forgetDrawing() { linesOnScreen = 0 }

    /// One status line drawn over the previous one (no newline).
    public static func overwrite(_ line: String) -> String { clearLine + line }
}
