// The analysis of a take (loudness, true peak, statistics, correlation) as text and JSON: the
// end-of-take summary's part, `micmon report`'s per-file report, and the live loudness in each
// `meter` line. One shape for all, so a live take's summary and the report of its file can be
// compared key for key. Pure; any thread.
import DSP

public enum AnalysisFormat {
    /// LUFS, or "-" while not measured (less than 400 ms, or nothing above the gate).
    static func lufs(_ value: Double, decimals: Int = 1) -> String {
        value.isFinite ? TextFormat.fixed(value, decimals: decimals) : "-"
    }

    /// A correlation, signed: "+0.98", "-1.00".
    static func correlation(_ value: Double) -> String {
        (value >= 0 ? "+" : "") + TextFormat.fixed(value, decimals: 2)
    }

    // MARK: JSON

    /// One programme's loudness (the keys of docs/json.md, "loudness programme").
    static func programmeJSON(_ p: ProgrammeLoudness) -> JSONObject {
        var object = JSONObject()
        object.string("name", p.name)
        object.numbers("channels", p.channels.map { Double($0 + 1) }, decimals: 0)
        object.number("integrated_lufs", p.integratedLUFS, decimals: 2)
        object.number("lra_lu", p.loudnessRangeLU, decimals: 2)
        object.decibels("true_peak_dbtp", p.truePeakDBTP, decimals: 2)
        object.number("max_momentary_lufs", p.maxMomentaryLUFS, decimals: 2)
        object.number("max_short_term_lufs", p.maxShortTermLUFS, decimals: 2)
        object.number("momentary_lufs", p.momentaryLUFS, decimals: 2)
        object.number("short_term_lufs", p.shortTermLUFS, decimals: 2)
        return object
    }

    /// One channel's statistics.
    static func channelJSON(_ c: ChannelAnalysis) -> JSONObject {
        var object = JSONObject()
        object.string("name", c.name)
        object.decibels("sample_peak_dbfs", c.samplePeakDBFS, decimals: 2)
        object.decibels("true_peak_dbtp", c.truePeakDBTP, decimals: 2)
        object.decibels("rms_dbfs", c.rmsDBFS, decimals: 2)
        object.number("dc_offset", c.statistics.dcOffset, decimals: 6)
        object.decibels("dc_offset_dbfs", c.dcOffsetDBFS, decimals: 1)
        object.integer("clips", c.statistics.clipCount)
        object.integer("clipped_samples", c.statistics.clipSamples)
        object.number("noise_floor_dbfs", c.statistics.noiseFloorDBFS, decimals: 1)
        object.integer("non_finite", c.statistics.nonFiniteCount)
        return object
    }

    /// The analysis as the keys of one object, added to `object` (the summary's `analysis`, or a
    /// report line after its `file`).
    static func add(_ a: TakeAnalysisResult, to object: inout JSONObject) {
        object.integer("sample_rate", a.sampleRate)
        object.integer("frames", a.frames)
        object.number("duration_s", a.durationSeconds, decimals: 3)
        object.string("loudness_mode", a.loudnessMode)
        object.objects("channels", a.channels.map(channelJSON))
        object.objects("programmes", a.programmes.map(programmeJSON))
        object.number("correlation", a.correlation, decimals: 3)
    }

    /// The summary's `analysis` object.
    public static func json(_ a: TakeAnalysisResult) -> JSONObject {
        var object = JSONObject()
        add(a, to: &object)
        return object
    }

    /// `micmon report --json`: one line per file, e.g.
    ///
    ///     {"type":"report","schema":1,"file":"take.wav","sample_rate":48000,"frames":480000,...}
    public static func reportJSON(_ a: TakeAnalysisResult, path: String) -> String {
        var object = JSONObject(type: "report")
        object.string("file", path)
        add(a, to: &object)
        return object.text
    }

    /// The live loudness in a `meter` line.
    static func liveJSON(_ l: LoudnessDisplay) -> JSONObject {
        var object = JSONObject()
        object.objects(
            "programmes",
            l.programmes.map { p in
                var entry = JSONObject()
                entry.string("name", p.name)
                entry.number("momentary_lufs", p.momentaryLUFS, decimals: 1)
                entry.number("short_term_lufs", p.shortTermLUFS, decimals: 1)
                entry.number("integrated_lufs", p.integratedLUFS, decimals: 1)
                entry.number("lra_lu", p.loudnessRangeLU, decimals: 1)
                entry.decibels("true_peak_dbtp", p.truePeakDBTP, decimals: 1)
                return entry
            })
        object.number("correlation", l.correlation, decimals: 2)
        return object
    }

    // MARK: Text

    /// The summary's loudness lines, e.g.
    ///
    ///       loudness (per-channel)  integrated LUFS   LRA LU  true peak dBTP
    ///       in_1                            -23.0      0.0            -6.0
    ///       correlation: +0.98 (in_1 · in_2, whole take)
    public static func summaryLines(_ a: TakeAnalysisResult, missedFrames: UInt64 = 0) -> [String] {
        let nameWidth = min(max(a.programmes.map { TextFormat.printable($0.name).count }.max() ?? 0, 22), 24)
        var lines = [
            "  " + TextFormat.padRight("loudness (\(a.loudnessMode))", nameWidth)
                + "  integrated LUFS   LRA LU  true peak dBTP"
        ]
        for p in a.programmes {
            lines.append(
                "  " + TextFormat.padRight(TextFormat.printable(p.name), nameWidth)
                    + "  " + TextFormat.pad(lufs(p.integratedLUFS), 15)
                    + "  " + TextFormat.pad(TextFormat.fixed(p.loudnessRangeLU, decimals: 1), 7)
                    + "  " + TextFormat.pad(TextFormat.decibels(p.truePeakDBTP, decimals: 1), 14))
        }
        if let r = a.correlation, a.channels.count >= 2 {
            lines.append(
                "  correlation: " + correlation(r) + " (" + TextFormat.printable(a.channels[0].name) + " · "
                    + TextFormat.printable(a.channels[1].name) + ", whole take)")
        }
        if missedFrames > 0 {
            lines.append("  analysis:  \(missedFrames) frames missed (the analysis fell behind; loudness lacks them)")
        }
        return lines
    }

    /// `micmon report`'s text for one file.
    public static func reportText(_ a: TakeAnalysisResult, path: String) -> String {
        var lines = [
            TextFormat.printable(path) + ": " + TextFormat.fixed(a.durationSeconds, decimals: 3) + " s, "
                + "\(a.frames) frames at \(a.sampleRate) Hz, \(a.channels.count) channel"
                + (a.channels.count == 1 ? "" : "s")
        ]
        let nameWidth = min(max(a.channels.map { TextFormat.printable($0.name).count }.max() ?? 0, 7), 24)
        lines.append(
            "  " + TextFormat.padRight("channel", nameWidth)
                + "  peak dBFS  true peak dBTP  RMS dBFS  DC offset  noise floor dBFS  clips")
        for c in a.channels {
            lines.append(
                "  " + TextFormat.padRight(TextFormat.printable(c.name), nameWidth)
                    + "  " + TextFormat.pad(TextFormat.decibels(c.samplePeakDBFS, decimals: 2), 9)
                    + "  " + TextFormat.pad(TextFormat.decibels(c.truePeakDBTP, decimals: 2), 14)
                    + "  " + TextFormat.pad(TextFormat.decibels(c.rmsDBFS, decimals: 2), 8)
                    + "  " + TextFormat.pad(TextFormat.fixed(c.statistics.dcOffset, decimals: 6), 9)
                    + "  "
                    + TextFormat.pad(c.statistics.noiseFloorDBFS.map { TextFormat.fixed($0, decimals: 1) } ?? "-", 16)
                    + "  " + TextFormat.pad(String(c.statistics.clipCount), 5))
        }
        lines += summaryLines(a)
        return lines.joined(separator: "\n")
    }
}
