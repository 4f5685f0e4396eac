import DSP
import Testing

@testable import TerminalUI

/// NaN and ±∞ samples read as silence in the levels, so their count is shown apart: in the
/// meter lines (bars, plain, JSON) and in the summaries (text, JSON).
@Suite struct NonFiniteDisplayTests {
    static let reading = MeterReading(
        peak: 0.5, hold: 0.5, meanSquare: 0.25, maxPeak: 0.5, clipCount: 7, sumOfSquares: 1, frameCount: 4,
        nonFiniteCount: 3)

    @Test func meterLinesShowTheCount() throws {
        let channel = ChannelDisplay(name: "in_1", reading: Self.reading)
        #expect(channel.nonFiniteCount == 3)
        let status = MeterStatus(elapsedSeconds: 1, sampleRate: 48000)
        let bars = MeterRenderer.lines(channels: [channel], status: status, width: 80, color: false)
        #expect(bars[0].hasSuffix(" NAN 3"), "\(bars[0])")
        let plain = MeterRenderer.plainLine(channels: [channel], status: status)
        #expect(plain.contains("in_1 peak -6.0 rms -6.0 dBFS clips 7 non-finite 3 |"), "\(plain)")
        let object = try parse(JSONLines.meter(channels: [channel], status: status))
        let channels = try #require(object["channels"] as? [[String: Any]])
        #expect(channels[0]["non_finite"] as? Int == 3)
        #expect(channels[0]["clips"] as? Int == 7)
    }

    @Test func summariesShowTheCounts() throws {
        var s = SessionSummary(
            durationSeconds: 1, frames: 48000, sampleRate: 48000,
            channels: [.init(name: "in_1", reading: Self.reading), .init(name: "in_2", reading: MeterReading())],
            exitReason: .durationReached)
        s.nonFiniteReplaced = 5
        let text = SummaryFormatter.text(s)
        #expect(text.contains("\n  non-finite: in_1 3 samples (NaN or ±∞, metered as silence; counted in clips)\n"))
        #expect(text.contains("\n  monitor:   5 non-finite samples sent as 0\n"))
        let object = try parse(SummaryFormatter.json(s))
        let channels = try #require(object["channels"] as? [[String: Any]])
        #expect(channels.map { $0["non_finite"] as? Int } == [3, 0])
        #expect(object["non_finite_replaced"] as? Int == 5)

        let play = PlaybackReport.Summary(
            reason: .endOfFile, framesPlayed: 10, sampleRate: 48000, framesStarved: 0, xruns: 0, nonFiniteReplaced: 4)
        #expect(PlaybackReport.text(play).hasSuffix("\n  non-finite: 4 samples (NaN or ±∞) sent as 0"))
        #expect(try parse(PlaybackReport.json(play))["non_finite_replaced"] as? Int == 4)
    }

    @Test func aTakeThroughAnIntermediateNamesItWhenKept() throws {
        var s = SessionSummary(
            durationSeconds: 1, frames: 48000, sampleRate: 48000, channels: [], filePath: "t.flac",
            exitReason: .durationReached)
        #expect(try parse(SummaryFormatter.json(s))["partial"] == nil)
        #expect(!SummaryFormatter.text(s).contains("partial"))
        s.partialPath = "t.flac.partial.w64"
        #expect(try parse(SummaryFormatter.json(s))["partial"] as? String == "t.flac.partial.w64")
        #expect(SummaryFormatter.text(s).contains("\n  partial:   t.flac.partial.w64 (holds the take"))
    }
}
