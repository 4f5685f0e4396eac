import DSP
import Foundation
import Testing

@testable import TerminalUI

let latencyFigures: LatencyFigures = {
    var lateness = Histogram(binWidth: 1, binCount: 1000)
    var execution = Histogram(binWidth: 1, binCount: 1000)
    for value in [10.0, 12, 12, 15, 40] { lateness.add(value) }
    for value in [3.0, 3, 4, 9] { execution.add(value) }
    let percentiles = TimingPercentiles(p50: 12, p90: 15, p99: 40, p999: 40, max: 40, mean: 17.8)
    let trip = RoundTripFigures(
        route: "software loop", sendPort: "micmon:in_1", returnPort: "micmon:out_1", status: .measured, estimates: 4,
        minimumFrames: 255.9, meanFrames: 256, maximumFrames: 256.1, lockMilliseconds: 96, lockFrames: 4608,
        isInverted: false, peakToNoiseDecibels: 40, returnLevelDecibels: -0.01,
        playbackLatency: PortLatency(min: 0, max: 0),
        playbackLatencyPort: "micmon:out_1", captureLatency: PortLatency(min: 0, max: 0),
        captureLatencyPort: "micmon:in_1",
        maximumDelayFrames: 96000, signalPeriodFrames: 4096)
    return LatencyFigures(
        serverName: "test", clientName: "micmon", sampleRate: 48000, periodFrames: 256, seconds: 2,
        timing: CallbackTimingFigures(
            cycles: 375, lateness: percentiles, execution: percentiles, periodUsecs: 5333.333,
            cyclesMissed: 0),
        lateness: lateness, execution: execution, serverLoadMean: 1.5, serverLoadMax: 3, xruns: 1, xrunTimes: [0.5],
        lateCycleTimes: [], lateCycleCount: 0, roundTrip: trip)
}()

@Suite struct LatencyReportOutput {
    @Test func jsonKeysInOrder() throws {
        let text = LatencyReport.json(latencyFigures, reason: .durationReached)
        let keys = [
            "type", "schema", "reason", "server", "client", "sample_rate", "period_frames", "period_us", "duration_s",
            "cycles", "cycles_missed", "lateness_us", "lateness_pct", "execution_us", "execution_pct", "histogram_us",
            "dsp_load_pct", "xruns", "xrun_times_s", "late_cycles", "late_cycle_times_s", "round_trip",
            "round_trip_frames", "round_trip_ms", "lock_ms",
        ]
        var position = text.startIndex
        for key in keys {
            let range = try #require(text.range(of: "\"\(key)\":", range: position ..< text.endIndex), "\(key)")
            position = range.upperBound
        }
        let object = try parse(text)
        #expect(object["reason"] as? String == "duration reached")
        #expect((object["round_trip_frames"] as? [String: Any])?["mean"] as? Double == 256)
        #expect((object["round_trip"] as? [String: Any])?["status"] as? String == "measured")
        #expect((object["round_trip"] as? [String: Any])?["jack_reported_frames"] as? Int == 0)
        #expect(object["xrun_times_s"] as? [Double] == [0.5])
        #expect(((object["histogram_us"] as? [String: Any])?["lateness"] as? [[String: Any]])?.isEmpty == false)
    }

    @Test func withoutALoop() throws {
        var figures = latencyFigures
        figures.roundTrip = nil
        let text = LatencyReport.json(figures, reason: .interrupted)
        #expect(text.hasSuffix(#","round_trip":null,"round_trip_frames":null,"round_trip_ms":null,"lock_ms":null}"#))
        #expect(try parse(text)["reason"] as? String == "interrupted (SIGINT)")
        let report = LatencyReport.text(figures, reason: .interrupted)
        #expect(report.contains("ended: interrupted (SIGINT)"))
        #expect(report.contains("Round trip: not measured (add --software-loop, or --send and --return)"))
    }

    @Test func textReport() {
        let report = LatencyReport.text(latencyFigures, reason: .durationReached)
        let lines = report.split(separator: "\n").map(String.init)
        #expect(
            lines[0]
                == "micmon latency: 2.00 s on server 'test', 48000 Hz, period 256 frames (5.333 ms); ended: duration reached"
        )
        #expect(lines.contains("Round trip (software loop, micmon:out_1 -> micmon:in_1)"))
        #expect(
            lines.contains {
                $0.hasPrefix("  measured      256.000 frames = 5.333 ms   min 255.900  mean 256.000  max 256.100")
            })
        #expect(lines.contains("Xruns         1 at 0.500 s"))
        #expect(lines.contains("Late cycles   0 (woke late + ran past the period)"))
    }

    @Test func liveLine() {
        var progress = LatencyProgress(
            secondsRun: 1.25, sampleRate: 48000, loopState: nil, emissionIsArmed: false,
            latestEstimateFrames: nil)
        #expect(LatencyReport.liveLine(progress) == "  1.3 s")
        progress.loopState = .waiting
        #expect(LatencyReport.liveLine(progress) == "  1.3 s  waiting for out_1 and in_1 to be connected…")
        progress.emissionIsArmed = true
        #expect(LatencyReport.liveLine(progress) == "  1.3 s  waiting for the signal to come back…")
        progress.loopState = .silence
        #expect(LatencyReport.liveLine(progress) == "  1.3 s  no signal: silence on in_1")
        progress.loopState = .locked
        progress.latestEstimateFrames = 480
        #expect(LatencyReport.liveLine(progress) == "  1.3 s  round trip 480.000 frames (10.000 ms)")
    }

    @Test func histogramBars() {
        #expect(LatencyReport.bar(0, most: 10) == "")
        #expect(LatencyReport.bar(10, most: 10) == String(repeating: "█", count: 32))
        #expect(LatencyReport.bar(1, most: 1000).count >= 1)
    }
}
