// The latency summary as text or as one JSON object, and the live line. Pure; any thread.
import DSP

/// `micmon latency`'s report.
public enum LatencyReport {
    /// `value` with `decimals` digits after the point ("-0.000" prints as "0.000").
    static func fixed(_ value: Double, _ decimals: Int) -> String {
        TextFormat.fixed(value.isFinite ? value : 0, decimals: decimals)
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    static func padRight(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// A histogram regrouped for display: rows of one "nice" width (1, 2 or 5 × 10^k µs) that
    /// cover up to 1.5 × p99.9 in at most `rows` rows, plus a last open row for the rest.
    struct Row: Equatable {
        var from: Double
        var to: Double?
        var count: UInt64
    }

    static func rows(_ histogram: Histogram, rows: Int = 10) -> [Row] {
        guard histogram.count > 0 else { return [] }
        let reach = max(histogram.percentile(0.999) ?? 0, 1) * 1.5
        // 1, 2, 5, 10, 20, 50, … µs.
        var width = 1.0
        var step = 0
        while width * Double(rows) < reach {
            width *= [2.0, 2.5, 2.0][step % 3]
            step += 1
        }
        var result: [Row] = []
        for index in 0 ..< rows {
            let from = Double(index) * width
            result.append(Row(from: from, to: from + width, count: 0))
        }
        var rest: UInt64 = histogram.overflow
        for (bin, count) in histogram.bins.enumerated() where count > 0 {
            let value = Double(bin) * histogram.binWidth
            let row = Int(value / width)
            if row < rows { result[row].count += count } else { rest += count }
        }
        // Drop empty rows at the top end, keep the open row only when it holds something.
        while let last = result.last, last.count == 0, result.count > 1 { result.removeLast() }
        if rest > 0 { result.append(Row(from: Double(rows) * width, to: nil, count: rest)) }
        return result
    }

    /// Bars on a log scale (so a single slow cycle still shows), `width` columns for the most.
    static func bar(_ count: UInt64, most: UInt64, width: Int = 32) -> String {
        guard count > 0, most > 0 else { return "" }
        // A ratio of logarithms: the dB of count + 1 over the dB of most + 1 (both ≥ 2, so finite).
        let fraction = Decibels.amplitudeToDBFS(Double(count) + 1) / Decibels.amplitudeToDBFS(Double(most) + 1)
        let eighths = max(1, Int((fraction * Double(width * 8)).rounded()))
        let partial = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        return String(repeating: "█", count: eighths / 8) + partial[eighths % 8]
    }

    static func histogramText(_ title: String, _ histogram: Histogram) -> String {
        let rows = rows(histogram)
        guard !rows.isEmpty else { return "" }
        let most = rows.map(\.count).max() ?? 0
        var text = title + "\n"
        for row in rows {
            let label =
                row.to.map { pad(fixed(row.from, 0), 7) + " – " + pad(fixed($0, 0), 6) } ?? pad(
                    "≥ " + fixed(row.from, 0), 7) + "         "
            text += "  " + label + "  " + padRight(bar(row.count, most: most), 33) + pad(String(row.count), 9) + "\n"
        }
        return text
    }

    public static func text(_ summary: LatencyFigures, reason: StopReason) -> String {
        let summary = summary.withPrintableNames
        let rate = Double(summary.sampleRate)
        let timing = summary.timing
        let periodMs = Double(summary.periodFrames) / rate * 1000
        func ms(_ frames: Double) -> String { fixed(frames / rate * 1000, 3) + " ms" }
        var text =
            "micmon latency: \(fixed(summary.seconds, 2)) s on server '\(summary.serverName)', \(summary.sampleRate) Hz, "
        text += "period \(summary.periodFrames) frames (\(fixed(periodMs, 3)) ms); ended: \(reason.text)\n\n"

        if let trip = summary.roundTrip {
            let route =
                trip.route == "software loop"
                ? "software loop, \(trip.returnPort) -> \(trip.sendPort)"
                : "\(trip.sendPort.isEmpty ? "(out_1 connected by hand)" : "out_1 -> " + trip.sendPort) … \(trip.returnPort.isEmpty ? "(in_1 connected by hand)" : trip.returnPort + " -> in_1")"
            text += "Round trip (\(route))\n"
            if let mean = trip.meanFrames, let low = trip.minimumFrames, let high = trip.maximumFrames {
                text +=
                    "  measured      \(fixed(mean, 3)) frames = \(ms(mean))   min \(fixed(low, 3))  mean \(fixed(mean, 3))  max \(fixed(high, 3)) frames, \(trip.estimates) estimates\n"
                text += "  spread        \(fixed(high - low, 3)) frames (max - min)\n"
                text += "  polarity      \(trip.isInverted == true ? "INVERTED (the return is upside down)" : "normal")"
                text +=
                    "   return level \(fixed(trip.returnLevelDecibels ?? 0, 1)) dB, peak/noise ≥ \(fixed(trip.peakToNoiseDecibels ?? 0, 0)) dB\n"
                if let lock = trip.lockMilliseconds {
                    text += "  locked in     \(fixed(lock, 0)) ms after the first emitted sample\n"
                }
                if trip.windowsWithoutSignal > 0 {
                    text +=
                        "  dropouts      the signal was missing from \(trip.windowsWithoutSignal) window(s) after lock\n"
                }
            } else {
                text += "  " + noSignalText(trip) + "\n"
            }
            if let reported = trip.jackReportedFrames, let playback = trip.playbackLatency,
                let capture = trip.captureLatency
            {
                text +=
                    "  JACK reports  \(reported) frames = \(ms(Double(reported))): playback [\(playback.min), \(playback.max)] of \(trip.playbackLatencyPort)"
                text += " + capture [\(capture.min), \(capture.max)] of \(trip.captureLatencyPort)\n"
                if let extra = trip.unaccountedFrames {
                    text += "  unaccounted   \(fixed(extra, 3)) frames = \(ms(extra)) (measured minus reported)\n"
                }
            }
            if trip.framesLost > 0 {
                text += "  lost          \(trip.framesLost) returned frames were not analysed (micmon fell behind)\n"
            }
            text += "\n"
        } else {
            text += "Round trip: not measured (add --software-loop, or --send and --return)\n\n"
        }

        let periodUs = timing.periodUsecs
        func pct(_ us: Double) -> String { periodUs > 0 ? fixed(us / periodUs * 100, 2) : "-" }
        text += "Callback timing over \(timing.cycles) cycles (period \(fixed(periodUs, 0)) µs)\n"
        text += "                     p50       p90       p99     p99.9       max      mean\n"
        for (name, values) in [("lateness", timing.lateness), ("execution", timing.execution)] {
            let list = [values.p50, values.p90, values.p99, values.p999, values.max, values.mean]
            text += "  " + padRight(name + " µs", 12) + list.map { pad(fixed($0, 1), 10) }.joined() + "\n"
            text += "  " + padRight("  % period", 12) + list.map { pad(pct($0), 10) }.joined() + "\n"
        }
        if timing.cyclesMissed > 0 { text += "  (\(timing.cyclesMissed) cycles missed by the statistics)\n" }
        text += "\n"
        text += histogramText("Lateness (µs after the cycle start; bars on a log scale)", summary.lateness)
        text += histogramText("Execution time (µs; bars on a log scale)", summary.execution)
        text += "\n"
        text += "DSP load      micmon \(fixed(timing.dspLoadPercent, 2)) % (mean execution / period); "
        text +=
            "server \(fixed(summary.serverLoadMean, 2)) % mean, \(fixed(summary.serverLoadMax, 2)) % max (jack_cpu_load)\n"
        text += "Xruns         \(summary.xruns)" + times(summary.xrunTimes) + "\n"
        text +=
            "Late cycles   \(summary.lateCycleCount) (woke late + ran past the period)" + times(summary.lateCycleTimes)
            + "\n"
        return text
    }

    static func times(_ seconds: [Double]) -> String {
        guard !seconds.isEmpty else { return "" }
        let shown = seconds.prefix(20).map { fixed($0, 3) + " s" }.joined(separator: ", ")
        return " at " + shown + (seconds.count > 20 ? ", … (\(seconds.count - 20) more)" : "")
    }

    static func noSignalText(_ trip: RoundTripFigures) -> String {
        let input = trip.captureLatencyPort
        switch trip.status {
        case .silence:
            return "no signal: nothing comes back (silence on \(input)); is the loop connected?"
        case .noSignal:
            return "no signal: what comes back is not the measurement signal (noise, or another source)"
        case .beyondRange:
            return
                "beyond range: the signal comes back, but not within \(trip.maximumDelayFrames) frames of being sent (or the loop changed after it started)"
        case .notLocked:
            return "not locked: the run ended before a full signal period came back (try a longer --duration)"
        case .notConnected:
            return "not measured: out_1 and in_1 were never both connected, so no signal was sent"
        case .silentSelfLink:
            return
                "no signal: PipeWire's JACK connects a client's out_1 to its own in_1 but passes silence through "
                + "it (jack_iodelay's loop too); measure through a node instead, e.g. --send 'SINK:playback_FL' "
                + "--return 'SINK:monitor_FL' (docs/platforms.md)"
        case .measured:
            return "measured"
        }
    }

    // MARK: JSON

    /// The summary as one JSON object (`"type":"latency"`).
    public static func json(_ summary: LatencyFigures, reason: StopReason) -> String {
        let rate = Double(summary.sampleRate)
        let timing = summary.timing
        let periodUs = timing.periodUsecs
        func percentiles(_ p: TimingPercentiles, scale: Double) -> JSONObject {
            var object = JSONObject()
            for (key, value) in [
                ("p50", p.p50), ("p90", p.p90), ("p99", p.p99), ("p999", p.p999), ("max", p.max),
                ("mean", p.mean),
            ] {
                object.number(key, value * scale, decimals: 2)
            }
            return object
        }
        let toPercent = periodUs > 0 ? 100 / periodUs : 0
        func rowObjects(_ histogram: Histogram) -> [JSONObject] {
            rows(histogram).map { row in
                var object = JSONObject()
                object.number("from_us", row.from, decimals: 0)
                object.number("to_us", row.to, decimals: 0)
                object.integer("count", row.count)
                return object
            }
        }
        var object = JSONObject(type: "latency")
        object.string("reason", reason.text)
        object.string("server", summary.serverName)
        object.string("client", summary.clientName)
        object.integer("sample_rate", summary.sampleRate)
        object.integer("period_frames", summary.periodFrames)
        object.number("period_us", periodUs, decimals: 3)
        object.number("duration_s", summary.seconds, decimals: 3)
        object.integer("cycles", timing.cycles)
        object.integer("cycles_missed", timing.cyclesMissed)
        object.object("lateness_us", percentiles(timing.lateness, scale: 1))
        object.object("lateness_pct", percentiles(timing.lateness, scale: toPercent))
        object.object("execution_us", percentiles(timing.execution, scale: 1))
        object.object("execution_pct", percentiles(timing.execution, scale: toPercent))
        var histograms = JSONObject()
        histograms.objects("lateness", rowObjects(summary.lateness))
        histograms.objects("execution", rowObjects(summary.execution))
        object.object("histogram_us", histograms)
        var load = JSONObject()
        load.number("micmon", timing.dspLoadPercent, decimals: 3)
        load.number("server_mean", summary.serverLoadMean, decimals: 3)
        load.number("server_max", summary.serverLoadMax, decimals: 3)
        object.object("dsp_load_pct", load)
        object.integer("xruns", summary.xruns)
        object.numbers("xrun_times_s", summary.xrunTimes, decimals: 3)
        object.integer("late_cycles", summary.lateCycleCount)
        object.numbers("late_cycle_times_s", summary.lateCycleTimes, decimals: 3)
        guard let trip = summary.roundTrip else {
            for key in ["round_trip", "round_trip_frames", "round_trip_ms", "lock_ms"] { object.object(key, nil) }
            return object.text
        }
        func range(_ latency: PortLatency?, port: String) -> JSONObject? {
            guard let latency else { return nil }
            var object = JSONObject()
            object.string("port", port)
            object.integer("min", latency.min)
            object.integer("max", latency.max)
            return object
        }
        var details = JSONObject()
        details.string("route", trip.route)
        details.string("send", trip.sendPort)
        details.string("return", trip.returnPort)
        details.string("status", trip.status.rawValue)
        details.integer("estimates", trip.estimates)
        details.string("polarity", trip.isInverted.map { $0 ? "inverted" : "normal" })
        details.number("peak_to_noise_db", trip.peakToNoiseDecibels, decimals: 1)
        details.number("return_level_db", trip.returnLevelDecibels, decimals: 2)
        details.integer("windows_without_signal", trip.windowsWithoutSignal)
        details.integer("frames_lost", trip.framesLost)
        details.integer("lock_frames", trip.lockFrames)
        details.object("jack_playback_latency", range(trip.playbackLatency, port: trip.playbackLatencyPort))
        details.object("jack_capture_latency", range(trip.captureLatency, port: trip.captureLatencyPort))
        details.integer("jack_reported_frames", trip.jackReportedFrames)
        details.number("unaccounted_frames", trip.unaccountedFrames, decimals: 4)
        details.number("unaccounted_ms", trip.unaccountedFrames.map { $0 / rate * 1000 }, decimals: 4)
        details.integer("signal_period_frames", trip.signalPeriodFrames)
        details.integer("max_measurable_frames", trip.maximumDelayFrames)
        object.object("round_trip", details)
        if let low = trip.minimumFrames, let mean = trip.meanFrames, let high = trip.maximumFrames {
            var frames = JSONObject()
            var milliseconds = JSONObject()
            for (key, value) in [("min", low), ("mean", mean), ("max", high)] {
                frames.number(key, value, decimals: 4)
                milliseconds.number(key, value / rate * 1000, decimals: 4)
            }
            object.object("round_trip_frames", frames)
            object.object("round_trip_ms", milliseconds)
        } else {
            object.object("round_trip_frames", nil)
            object.object("round_trip_ms", nil)
        }
        object.number("lock_ms", trip.lockMilliseconds, decimals: 1)
        return object.text
    }

    // MARK: Live line

    /// One line of progress for a terminal, redrawn in place.
    public static func liveLine(_ progress: LatencyProgress) -> String {
        var line = "  " + fixed(progress.secondsRun, 1) + " s"
        guard let state = progress.loopState else { return line }
        if !progress.emissionIsArmed {
            line += "  waiting for out_1 and in_1 to be connected…"
        } else if let frames = progress.latestEstimateFrames {
            let ms = frames / Double(progress.sampleRate) * 1000
            line += "  round trip " + fixed(frames, 3) + " frames (" + fixed(ms, 3) + " ms)"
        } else {
            switch state {
            case .waiting, .arriving: line += "  waiting for the signal to come back…"
            case .silence: line += "  no signal: silence on in_1"
            case .noSignal: line += "  no signal in what comes back"
            case .beyondRange: line += "  the onset lies beyond the measurable range"
            case .locked: break
            }
        }
        return line
    }
}

extension LatencyFigures {
    /// The same figures with the server, client and port names made safe for a terminal
    /// (`TextFormat.printable`), for the text report; JSON escapes them its own way.
    var withPrintableNames: LatencyFigures {
        var figures = self
        figures.serverName = TextFormat.printable(serverName)
        figures.clientName = TextFormat.printable(clientName)
        if var trip = roundTrip {
            trip.sendPort = TextFormat.printable(trip.sendPort)
            trip.returnPort = TextFormat.printable(trip.returnPort)
            trip.playbackLatencyPort = TextFormat.printable(trip.playbackLatencyPort)
            trip.captureLatencyPort = TextFormat.printable(trip.captureLatencyPort)
            figures.roundTrip = trip
        }
        return figures
    }
}
