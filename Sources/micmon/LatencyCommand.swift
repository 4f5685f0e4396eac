import DSP
import Engine
import Glibc
import Platform
import Jack
import TerminalUI

/// `micmon latency`: callback timing statistics and, with a loop, the measured round trip.
/// Runs for `--duration` (default 5 s) or until SIGINT/SIGTERM, then prints one summary (text,
/// or one JSON object with `--json`).
enum LatencyCommand {
    /// How often the main thread folds in timings and runs the estimator.
    static let pollInterval = 0.01
    static let defaultDuration = 5.0

    static func run(_ invocation: Invocation) -> ExitCode {
        var configuration = LatencyConfiguration()
        configuration.clientName = invocation.clientName
        configuration.serverName = invocation.serverName
        configuration.sendPort = invocation.sendPort
        configuration.returnPort = invocation.returnPort
        configuration.softwareLoop = invocation.softwareLoop
        configuration.durationSeconds = invocation.durationSeconds ?? defaultDuration

        let session: LatencySession
        do {
            session = try LatencySession(configuration)
        } catch {
            return report(error)
        }
        for warning in session.warnings { Console.error("micmon: warning: \(warning)") }
        do {
            try session.start()
        } catch {
            _ = session.stop()
            session.close()
            return report(error)
        }

        let live = !invocation.json && Console.stdoutIsTerminal
        let began = MonotonicClock.nanoseconds()
        var lastLive: UInt64?
        var reason = "stopped"
        while true {
            StopSignals.sleep(seconds: pollInterval)
            session.poll()
            if StopSignals.received != 0 { reason = StopSignals.received == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)"; break }
            if session.isComplete { reason = "duration reached"; break }
            if session.serverIsGone { reason = "the JACK server went away"; break }
            if Console.outputIsBroken { reason = "output closed"; break }
            let now = MonotonicClock.nanoseconds()
            if Double(now - began) / 1e9 > configuration.durationSeconds + 10 {
                reason = "the server stopped running process cycles"
                break
            }
            if live && lastLive.map({ now - $0 >= 200_000_000 }) ?? true {
                lastLive = now
                Console.out("\r\u{1B}[2K" + liveLine(session))
            }
        }
        let summary = session.stop()
        if live { Console.out("\r\u{1B}[2K") }
        if invocation.json {
            Console.out(LatencyReport.json(summary, reason: reason) + "\n")
        } else {
            Console.out(LatencyReport.text(summary, reason: reason))
        }
        var code = ExitCode.ok
        if summary.serverWasLost {
            Console.error("micmon: the JACK server '\(session.client.serverName)' shut down")
            code = .serverUnavailable
        }
        Watchdog.run(within: 10, exitCode: code, what: "closing the JACK client") { session.close() }
        return code
    }

    /// One line of progress for a terminal.
    static func liveLine(_ session: LatencySession) -> String {
        var line = "  " + LatencyReport.fixed(session.secondsRun, 1) + " s"
        if let state = session.roundTripState {
            if !session.emissionIsArmed {
                line += "  waiting for out_1 and in_1 to be connected…"
            } else if let estimate = session.latestEstimate {
                let ms = estimate.delayFrames / Double(session.sampleRate) * 1000
                line += "  round trip " + LatencyReport.fixed(estimate.delayFrames, 3) + " frames (" + LatencyReport.fixed(ms, 3) + " ms)"
            } else {
                switch state {
                case .waiting, .arriving: line += "  waiting for the signal to come back…"
                case .silence: line += "  no signal: silence on in_1"
                case .noSignal: line += "  no signal in what comes back"
                case .beyondRange: line += "  the onset lies beyond the measurable range"
                case .locked: break
                }
            }
        }
        return line
    }

    static func report(_ error: LatencyError) -> ExitCode {
        Console.error("micmon: \(error.description)")
        switch error {
        case .badPort:
            return .usage
        case .jack(.serverUnavailable(let name, _)), .jack(.openFailed(let name, _)):
            Console.error("micmon: start a server first (e.g. `jackd -d alsa`, or `jackd -d dummy` without a sound card\(name == "default" ? "" : " and -n \(name)"))")
            return .serverUnavailable
        case .jack:
            return .serverUnavailable
        }
    }
}

/// The latency summary as text or as one JSON object. Pure functions; any thread.
enum LatencyReport {
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
        let fraction = log10(Double(count) + 1) / log10(Double(most) + 1)
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
            let label = row.to.map { pad(fixed(row.from, 0), 7) + " – " + pad(fixed($0, 0), 6) } ?? pad("≥ " + fixed(row.from, 0), 7) + "         "
            text += "  " + label + "  " + padRight(bar(row.count, most: most), 33) + pad(String(row.count), 9) + "\n"
        }
        return text
    }

    static func text(_ summary: LatencySummary, reason: String) -> String {
        let rate = Double(summary.sampleRate)
        let timing = summary.callbackTiming
        let periodMs = Double(summary.periodFrames) / rate * 1000
        func ms(_ frames: Double) -> String { fixed(frames / rate * 1000, 3) + " ms" }
        var text = "micmon latency: \(fixed(summary.seconds, 2)) s on server '\(summary.serverName)', \(summary.sampleRate) Hz, "
        text += "period \(summary.periodFrames) frames (\(fixed(periodMs, 3)) ms); ended: \(reason)\n\n"

        if let trip = summary.roundTrip {
            let route = trip.route == "software loop"
                ? "software loop, \(trip.returnPort) -> \(trip.sendPort)"
                : "\(trip.sendPort.isEmpty ? "(out_1 connected by hand)" : "out_1 -> " + trip.sendPort) … \(trip.returnPort.isEmpty ? "(in_1 connected by hand)" : trip.returnPort + " -> in_1")"
            text += "Round trip (\(route))\n"
            if let mean = trip.meanFrames, let low = trip.minimumFrames, let high = trip.maximumFrames {
                text += "  measured      \(fixed(mean, 3)) frames = \(ms(mean))   min \(fixed(low, 3))  mean \(fixed(mean, 3))  max \(fixed(high, 3)) frames, \(trip.estimates) estimates\n"
                text += "  spread        \(fixed(high - low, 3)) frames (max - min)\n"
                text += "  polarity      \(trip.isInverted == true ? "INVERTED (the return is upside down)" : "normal")"
                text += "   return level \(fixed(trip.returnLevelDecibels ?? 0, 1)) dB, peak/noise ≥ \(fixed(trip.peakToNoiseDecibels ?? 0, 0)) dB\n"
                if let lock = trip.lockMilliseconds {
                    text += "  locked in     \(fixed(lock, 0)) ms after the first emitted sample\n"
                }
                if trip.windowsWithoutSignal > 0 {
                    text += "  dropouts      the signal was missing from \(trip.windowsWithoutSignal) window(s) after lock\n"
                }
            } else {
                text += "  " + noSignalText(trip) + "\n"
            }
            if let reported = trip.jackReportedFrames, let playback = trip.playbackLatency, let capture = trip.captureLatency {
                text += "  JACK reports  \(reported) frames = \(ms(Double(reported))): playback [\(playback.min), \(playback.max)] of \(trip.playbackLatencyPort)"
                text += " + capture [\(capture.min), \(capture.max)] of \(trip.captureLatencyPort)\n"
                if let extra = trip.unaccountedFrames {
                    text += "  unaccounted   \(fixed(extra, 3)) frames = \(ms(extra)) (measured minus reported)\n"
                }
            }
            if trip.framesLost > 0 { text += "  lost          \(trip.framesLost) returned frames were not analysed (micmon fell behind)\n" }
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
        text += "server \(fixed(summary.serverLoadMean, 2)) % mean, \(fixed(summary.serverLoadMax, 2)) % max (jack_cpu_load)\n"
        text += "Xruns         \(summary.xruns)" + times(summary.xrunTimes) + "\n"
        text += "Late cycles   \(summary.lateCycleCount) (woke late + ran past the period)" + times(summary.lateCycleTimes) + "\n"
        return text
    }

    static func times(_ seconds: [Double]) -> String {
        guard !seconds.isEmpty else { return "" }
        let shown = seconds.prefix(20).map { fixed($0, 3) + " s" }.joined(separator: ", ")
        return " at " + shown + (seconds.count > 20 ? ", … (\(seconds.count - 20) more)" : "")
    }

    static func noSignalText(_ trip: RoundTripResult) -> String {
        let input = trip.captureLatencyPort
        switch trip.status {
        case .silence:
            return "no signal: nothing comes back (silence on \(input)); is the loop connected?"
        case .noSignal:
            return "no signal: what comes back is not the measurement signal (noise, or another source)"
        case .beyondRange:
            return "beyond range: the signal comes back, but not within \(trip.maximumDelayFrames) frames of being sent (or the loop changed after it started)"
        case .notLocked:
            return "not locked: the run ended before a full signal period came back (try a longer --duration)"
        case .notConnected:
            return "not measured: out_1 and in_1 were never both connected, so no signal was sent"
        case .measured:
            return "measured"
        }
    }

    // MARK: JSON

    static func number(_ value: Double?, _ decimals: Int) -> String {
        guard let value, value.isFinite else { return "null" }
        return fixed(value, decimals)
    }

    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    static func json(_ summary: LatencySummary, reason: String) -> String {
        let rate = Double(summary.sampleRate)
        let timing = summary.callbackTiming
        let periodUs = timing.periodUsecs
        func percentiles(_ p: CallbackTimingSummary.Percentiles, scale: Double) -> String {
            object([("p50", number(p.p50 * scale, 2)), ("p90", number(p.p90 * scale, 2)), ("p99", number(p.p99 * scale, 2)),
                    ("p999", number(p.p999 * scale, 2)), ("max", number(p.max * scale, 2)), ("mean", number(p.mean * scale, 2))])
        }
        let toPercent = periodUs > 0 ? 100 / periodUs : 0
        func rowsJSON(_ histogram: Histogram) -> String {
            "[" + rows(histogram).map { object([("from_us", number($0.from, 0)), ("to_us", number($0.to, 0)), ("count", String($0.count))]) }
                .joined(separator: ",") + "]"
        }
        func list(_ values: [Double]) -> String { "[" + values.map { number($0, 3) }.joined(separator: ",") + "]" }
        var pairs: [(String, String)] = [
            ("type", string("latency")), ("reason", string(reason)), ("server", string(summary.serverName)),
            ("client", string(summary.clientName)), ("sample_rate", String(summary.sampleRate)),
            ("period_frames", String(summary.periodFrames)), ("period_us", number(periodUs, 3)),
            ("duration_s", number(summary.seconds, 3)), ("cycles", String(timing.cycles)), ("cycles_missed", String(timing.cyclesMissed)),
            ("lateness_us", percentiles(timing.lateness, scale: 1)), ("lateness_pct", percentiles(timing.lateness, scale: toPercent)),
            ("execution_us", percentiles(timing.execution, scale: 1)), ("execution_pct", percentiles(timing.execution, scale: toPercent)),
            ("histogram_us", object([("lateness", rowsJSON(summary.lateness)), ("execution", rowsJSON(summary.execution))])),
            ("dsp_load_pct", object([("micmon", number(timing.dspLoadPercent, 3)), ("server_mean", number(summary.serverLoadMean, 3)),
                                     ("server_max", number(summary.serverLoadMax, 3))])),
            ("xruns", String(summary.xruns)), ("xrun_times_s", list(summary.xrunTimes)),
            ("late_cycles", String(summary.lateCycleCount)), ("late_cycle_times_s", list(summary.lateCycleTimes)),
        ]
        guard let trip = summary.roundTrip else {
            pairs += [("round_trip", "null"), ("round_trip_frames", "null"), ("round_trip_ms", "null"), ("lock_ms", "null")]
            return object(pairs)
        }
        func range(_ latency: JackLatencyRange?, port: String) -> String {
            guard let latency else { return "null" }
            return object([("port", string(port)), ("min", String(latency.min)), ("max", String(latency.max))])
        }
        let details: [(String, String)] = [
            ("route", string(trip.route)), ("send", string(trip.sendPort)), ("return", string(trip.returnPort)),
            ("status", string(trip.status.rawValue)), ("estimates", String(trip.estimates)),
            ("polarity", trip.isInverted.map { string($0 ? "inverted" : "normal") } ?? "null"),
            ("peak_to_noise_db", number(trip.peakToNoiseDecibels, 1)), ("return_level_db", number(trip.returnLevelDecibels, 2)),
            ("windows_without_signal", String(trip.windowsWithoutSignal)), ("frames_lost", String(trip.framesLost)),
            ("lock_frames", trip.lockFrames.map(String.init) ?? "null"),
            ("jack_playback_latency", range(trip.playbackLatency, port: trip.playbackLatencyPort)),
            ("jack_capture_latency", range(trip.captureLatency, port: trip.captureLatencyPort)),
            ("jack_reported_frames", trip.jackReportedFrames.map(String.init) ?? "null"),
            ("unaccounted_frames", number(trip.unaccountedFrames, 4)),
            ("unaccounted_ms", number(trip.unaccountedFrames.map { $0 / rate * 1000 }, 4)),
            ("signal_period_frames", String(trip.signalPeriodFrames)), ("max_measurable_frames", String(trip.maximumDelayFrames)),
        ]
        pairs.append(("round_trip", object(details)))
        if let low = trip.minimumFrames, let mean = trip.meanFrames, let high = trip.maximumFrames {
            pairs.append(("round_trip_frames", object([("min", number(low, 4)), ("mean", number(mean, 4)), ("max", number(high, 4))])))
            pairs.append(("round_trip_ms", object([("min", number(low / rate * 1000, 4)), ("mean", number(mean / rate * 1000, 4)),
                                                   ("max", number(high / rate * 1000, 4))])))
        } else {
            pairs += [("round_trip_frames", "null"), ("round_trip_ms", "null")]
        }
        pairs.append(("lock_ms", number(trip.lockMilliseconds, 1)))
        return object(pairs)
    }
}
