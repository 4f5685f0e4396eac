/// The end-of-session report, as text for people and as one JSON line for programs.
/// Pure; any thread.
public enum SummaryFormatter {
    /// Gaps listed one by one in the text; the rest are counted. JSON lists them all.
    public static let listedDrops = 10

    /// For example:
    ///
    ///     Session summary
    ///       ended:     duration reached
    ///       file:      take.wav
    ///       partial:   take.flac.partial.w64 (only when a crash-safe intermediate was kept)
    ///       duration:  10.000 s, 480000 frames at 48000 Hz
    ///       channel  max peak dBFS  mean RMS dBFS     clips
    ///       in_1             -3.21         -15.40         0
    ///       non-finite: in_1 3 samples (NaN or ±∞, metered as silence; counted in clips)
    ///       monitor:   3 non-finite samples sent as 0
    ///       xruns:     1 event (8 callbacks)
    ///       dropped:   1024 frames in 1 gap
    ///         at 1.000 s (frame 48000): 1024 frames (21.3 ms)
    ///       missed:    1024 frames in 1 gap, silence in place (the server ran them without micmon, …)
    ///         at 1.000 s (frame 48000): 1024 frames (21.3 ms)
    ///       jitter:    3 late counter reads, nothing lost (only when there were any)
    public static func text(_ s: SessionSummary) -> String {
        let names = s.channels.map { TextFormat.printable($0.name) }
        let nameWidth = min(max(names.map(\.count).max() ?? 0, 7), 24)
        var lines = ["Session summary"]
        lines.append("  ended:     " + TextFormat.printable(s.exitReason.text))
        lines.append("  file:      " + (s.filePath.map(TextFormat.printable) ?? "(none)"))
        if let partial = s.partialPath {
            lines.append(
                "  partial:   " + TextFormat.printable(partial)
                    + " (holds the take; its copy into the file did not finish)")
        }
        lines.append(
            "  duration:  " + TextFormat.fixed(s.durationSeconds, decimals: 3) + " s, "
                + "\(s.frames) frames at \(s.sampleRate) Hz" + (s.framesArmed == nil ? "" : " in the files"))
        if let armed = s.framesArmed {
            lines.append(
                "  armed:     " + TextFormat.fixed(seconds(armed, s.sampleRate), decimals: 3) + " s, "
                    + "\(armed) frames waiting for the trigger (in no file)")
        }
        if s.framesMissing > 0 {
            lines.append(
                "  missing:   \(s.framesMissing) frames ("
                    + TextFormat.fixed(seconds(s.framesMissing, s.sampleRate), decimals: 3)
                    + " s) of the duration asked for: the graph stopped calling micmon")
        }
        lines.append(
            "  " + TextFormat.padRight("channel", nameWidth)
                + "  max peak dBFS  mean RMS dBFS     clips")
        for (name, c) in zip(names, s.channels) {
            lines.append(
                "  " + TextFormat.padRight(name, nameWidth)
                    + "  " + TextFormat.pad(TextFormat.decibels(c.maxPeakDBFS, decimals: 2), 13)
                    + "  " + TextFormat.pad(TextFormat.decibels(c.meanRMSDBFS, decimals: 2), 13)
                    + "  " + TextFormat.pad(String(c.clipCount), 8))
        }
        let nonFinite = zip(names, s.channels).filter { $0.1.nonFiniteCount > 0 }
        if !nonFinite.isEmpty {
            lines += wrapped(
                "  non-finite: ", nonFinite.map { "\($0.0) \($0.1.nonFiniteCount)" },
                " samples (NaN or ±∞, metered as silence; counted in clips)")
        }
        if s.nonFiniteReplaced > 0 {
            lines.append("  monitor:   \(s.nonFiniteReplaced) non-finite samples sent as 0")
        }
        if let analysis = s.analysis {
            lines += AnalysisFormat.summaryLines(analysis, missedFrames: s.analysisFramesMissed)
        }
        if let b = s.ballistics {
            lines += wrapped(
                "  meter:     \(b.type.rawValue) (0 = \(TextFormat.fixed(b.type.referenceDBFS, decimals: 0)) dBFS), highest ",
                b.channels.map { TextFormat.printable($0.name) + " " + TextFormat.fixed($0.maxReading, decimals: 1) },
                " " + b.type.unit)
        }
        lines += s.fileLines()
        lines.append(
            "  xruns:     \(s.xruns)"
                + (s.xrunCallbacks > s.xruns
                    ? " event" + (s.xruns == 1 ? "" : "s") + " (\(s.xrunCallbacks) callbacks)" : "")
                + (s.xrunsAreDriverOnly
                    ? " (PipeWire's JACK reports its driver's xruns only; a late client is none: see missed)" : ""))
        if let t = s.callbackTiming {
            lines.append(
                "  callback:  late p99 " + TextFormat.fixed(t.latenessP99, decimals: 0) + " / max "
                    + TextFormat.fixed(t.latenessMax, decimals: 0) + " µs, ran mean "
                    + TextFormat.fixed(t.executionMean, decimals: 2)
                    + " / p99 " + TextFormat.fixed(t.executionP99, decimals: 0)
                    + " / max " + TextFormat.fixed(t.executionMax, decimals: 0) + " µs (period "
                    + TextFormat.fixed(t.periodUsecs, decimals: 0) + " µs)")
        }
        if s.framesDropped == 0 && s.drops.isEmpty {
            lines.append("  dropped:   0 frames")
        } else {
            lines.append(
                "  dropped:   \(s.framesDropped) frames in \(s.drops.count) gap" + (s.drops.count == 1 ? "" : "s"))
            lines += listed(s.drops, total: s.drops.count, sampleRate: s.sampleRate)
        }
        if s.missedGapCount > 0 {
            lines.append(
                "  missed:    \(s.framesMissed) frames in \(s.missedGapCount) gap" + (s.missedGapCount == 1 ? "" : "s")
                    + (s.filePath == nil ? "" : ", silence in place")
                    + " (the server ran them without micmon; JACK cannot tell whether other clients got them)")
            lines += listed(s.missedGaps, total: Int(s.missedGapCount), sampleRate: s.sampleRate)
        }
        if s.uncertainGapCount > 0 {
            lines.append(
                "  unsure:    \(s.framesUncertain) frames in \(s.uncertainGapCount) run"
                    + (s.uncertainGapCount == 1 ? "" : "s")
                    + " of digital silence between sound (the graph may have given micmon silence where the"
                    + " source had sound; JACK cannot tell)")
            lines += listed(s.uncertainGaps, total: Int(s.uncertainGapCount), sampleRate: s.sampleRate)
        }
        if s.lateCycles > 0 {
            lines.append(
                "  late:      \(s.lateCycles) cycle" + (s.lateCycles == 1 ? "" : "s")
                    + " micmon ran late: it was given the next period early, then nothing new"
                    + " (micmon's own loss, in missed)")
        }
        if s.serverGapCount > 0 {
            lines.append(
                "  server gaps: \(s.serverGapCount), \(s.framesSkippedByServer) frames (the whole graph lost them: the driver was late; nothing inserted)"
            )
            lines += listed(s.serverGaps, total: Int(s.serverGapCount), sampleRate: s.sampleRate)
        }
        if s.timelineJitter > 0 {
            lines.append("  jitter:    \(s.timelineJitter) late counter reads, nothing lost")
        }
        return lines.joined(separator: "\n")
    }

    /// The widest line `text` writes when names are short: a list of every channel (non-finite
    /// counts, a meter's highest readings) wraps onto further lines, so 64 channels stay readable.
    public static let lineWidth = 100

    /// `head`, then `items` joined by ", ", then `tail`: one line when it fits in `lineWidth`,
    /// else wrapped after a comma onto lines indented under the first item (the tail on a line
    /// of its own when it does not fit after the last item).
    static func wrapped(_ head: String, _ items: [String], _ tail: String) -> [String] {
        guard let first = items.first else { return [head + tail] }
        let indent = String(repeating: " ", count: head.count)
        var lines: [String] = []
        var current = head + first
        for item in items.dropFirst() {
            if current.count + 2 + item.count > lineWidth {
                lines.append(current + ",")
                current = indent + item
            } else {
                current += ", " + item
            }
        }
        if current.count + tail.count > lineWidth {
            lines.append(current)
            current = indent + tail.drop { $0 == " " }
        } else {
            current += tail
        }
        lines.append(current)
        return lines
    }

    /// The first `listedDrops` gaps, one line each, and how many more there are.
    static func listed(_ gaps: [SessionSummary.Drop], total: Int, sampleRate: Int) -> [String] {
        var lines = gaps.prefix(listedDrops).map { gap in
            "    at " + TextFormat.fixed(seconds(gap.startFrame, sampleRate), decimals: 3) + " s"
                + " (frame \(gap.startFrame)): \(gap.length) frames ("
                + TextFormat.fixed(1000 * seconds(gap.length, sampleRate), decimals: 1) + " ms)"
        }
        if total > listedDrops { lines.append("    … and \(total - listedDrops) more") }
        return lines
    }

    /// One line, e.g.
    ///
    ///     {"type":"summary","schema":1,"reason":"duration reached","file":"take.wav","duration_s":10.000,"frames":480000,"sample_rate":48000,"channels":[{"name":"in_1","max_peak_dbfs":-3.21,"mean_rms_dbfs":-15.40,"clips":0,"non_finite":0}],"non_finite_replaced":0,"xruns":0,"frames_dropped":1024,"drops":[{"start_frame":48000,"length":1024,"start_s":1.000,"length_ms":21.3}],"server_gap_count":0,"frames_skipped_by_server":0,"server_gaps":[],"xrun_callbacks":0,"missed_gap_count":0,"frames_missed":0,"missed_gaps":[],"timeline_jitter":0}
    ///
    /// `non_finite_replaced` counts the NaN and ±∞ samples monitoring sent to JACK as 0. `xruns`
    /// counts events (`xrun_callbacks` the raw callbacks); `frames_missed` (in `missed_gap_count`
    /// gaps, placed in `missed_gaps`) are frames the server ran without micmon, included in
    /// `frames_dropped` when recording; `timeline_jitter` counts late counter reads that netted out.
    /// `partial` (the crash-safe intermediate's path) follows when the take was recorded
    /// through one and it was kept; `frames_missing` when a `--duration` take ended while no
    /// process cycle came; `callback_us` follows, when the callback's timing was measured.
    public static func json(_ s: SessionSummary) -> String {
        let channels = s.channels.map { c in
            var channel = JSONObject()
            channel.string("name", c.name)
            channel.decibels("max_peak_dbfs", c.maxPeakDBFS, decimals: 2)
            channel.decibels("mean_rms_dbfs", c.meanRMSDBFS, decimals: 2)
            channel.integer("clips", c.clipCount)
            channel.integer("non_finite", c.nonFiniteCount)
            return channel
        }
        func gapList(_ gaps: [SessionSummary.Drop]) -> [JSONObject] {
            gaps.map { d in
                var gap = JSONObject()
                gap.integer("start_frame", d.startFrame)
                gap.integer("length", d.length)
                gap.number("start_s", seconds(d.startFrame, s.sampleRate), decimals: 3)
                gap.number("length_ms", 1000 * seconds(d.length, s.sampleRate), decimals: 1)
                return gap
            }
        }
        var object = JSONObject(type: "summary")
        object.string("reason", s.exitReason.text)
        object.string("file", s.filePath)
        object.number("duration_s", s.durationSeconds, decimals: 3)
        object.integer("frames", s.frames)
        if let armed = s.framesArmed {
            object.integer("frames_armed", armed)
            object.number("armed_s", seconds(armed, s.sampleRate), decimals: 3)
        }
        object.integer("sample_rate", s.sampleRate)
        object.objects("channels", channels)
        object.integer("non_finite_replaced", s.nonFiniteReplaced)
        object.integer("xruns", s.xruns)
        if s.xrunsAreDriverOnly { object.string("xruns_counted", "driver only") }
        object.integer("frames_dropped", s.framesDropped)
        object.objects("drops", gapList(s.drops))
        object.integer("server_gap_count", s.serverGapCount)
        object.integer("frames_skipped_by_server", s.framesSkippedByServer)
        object.objects("server_gaps", gapList(s.serverGaps))
        object.integer("xrun_callbacks", s.xrunCallbacks)
        object.integer("missed_gap_count", s.missedGapCount)
        object.integer("frames_missed", s.framesMissed)
        object.objects("missed_gaps", gapList(s.missedGaps))
        object.integer("timeline_jitter", s.timelineJitter)
        if s.lateCycles > 0 { object.integer("late_cycles", s.lateCycles) }
        if s.uncertainGapCount > 0 {
            object.integer("uncertain_gap_count", s.uncertainGapCount)
            object.integer("frames_uncertain", s.framesUncertain)
            object.objects("uncertain_gaps", gapList(s.uncertainGaps))
        }
        if let partial = s.partialPath { object.string("partial", partial) }
        if let analysis = s.analysis {
            object.object("analysis", AnalysisFormat.json(analysis))
            object.integer("analysis_frames_missed", s.analysisFramesMissed)
        }
        if let ballistics = s.ballistics { object.object("ballistics", ballistics.json(includesNow: false)) }
        if s.framesMissing > 0 { object.integer("frames_missing", s.framesMissing) }
        if s.fileCount > 0 {
            object.integer("file_count", s.fileCount)
            object.objects("files", s.files.map { $0.json(sampleRate: s.sampleRate) })
        }
        if let t = s.callbackTiming {
            var timing = JSONObject()
            timing.number("lateness_p99", t.latenessP99, decimals: 1)
            timing.number("lateness_max", t.latenessMax, decimals: 1)
            timing.number("execution_mean", t.executionMean, decimals: 3)
            timing.number("execution_p99", t.executionP99, decimals: 1)
            timing.number("execution_max", t.executionMax, decimals: 1)
            timing.number("period", t.periodUsecs, decimals: 1)
            object.object("callback_us", timing)
        }
        return object.text
    }

    /// Frames as seconds at `sampleRate` (0 when the rate is unknown).
    static func seconds(_ frames: UInt64, _ sampleRate: Int) -> Double {
        sampleRate > 0 ? Double(frames) / Double(sampleRate) : 0
    }
}
