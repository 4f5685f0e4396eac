import DSP
import Foundation
import Testing

@testable import TerminalUI

/// The summary at 64 channels: one table row per channel, no line wider than
/// `SummaryFormatter.lineWidth` (the per-channel lists wrap), and JSON that parses with every
/// channel in order.
@Suite struct ManyChannelSummary {
    static let count = 64

    static func sixtyFour() -> SessionSummary {
        var s = SessionSummary(
            durationSeconds: 10, frames: 480_000, sampleRate: 48000,
            channels: (1 ... count).map {
                .init(
                    name: "in_\($0)", maxPeakDBFS: -Double($0) / 3, meanRMSDBFS: -20 - Double($0) / 7,
                    clipCount: UInt64($0 % 3), nonFiniteCount: UInt64($0))
            },
            xruns: 0, framesDropped: 0, drops: [], filePath: "/tmp/take.wav", exitReason: .durationReached)
        s.ballistics = BallisticsDisplay(
            type: .vu,
            channels: (1 ... count).map { .init(name: "in_\($0)", reading: -7, maxReading: -Double($0) / 10) })
        return s
    }

    @Test("64 channels: one row each, every line within the width, the lists wrapped and complete")
    func textStaysReadable() {
        let text = SummaryFormatter.text(Self.sixtyFour())
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let wide = lines.filter { $0.count > SummaryFormatter.lineWidth }
        #expect(wide.isEmpty, "lines over \(SummaryFormatter.lineWidth) columns: \(wide)")
        for k in 1 ... Self.count {
            let rows = lines.filter { $0.hasPrefix("  in_\(k) ") }
            #expect(rows.count == 1, "in_\(k): \(rows.count) table rows")
            // Listed once among the non-finite counts and once among the meter's highest readings.
            #expect(text.components(separatedBy: "in_\(k) \(k)").count == 2, "in_\(k)'s non-finite count")
        }
        #expect(text.contains("in_64 -6.4 VU"), "the last channel's meter reading")
    }

    @Test("64 channels: the JSON parses and holds every channel in order")
    func jsonParses() throws {
        let line = SummaryFormatter.json(Self.sixtyFour())
        #expect(!line.contains("\n"))
        let object = try parse(line)
        let channels = try #require(object["channels"] as? [[String: Any]])
        #expect(channels.count == Self.count)
        #expect(channels.map { $0["name"] as? String } == (1 ... Self.count).map { "in_\($0)" })
        #expect(channels.last?["non_finite"] as? Int == Self.count)
    }

    @Test("two channels keep their one-line lists")
    func twoChannelsUnchanged() {
        var s = Self.sixtyFour()
        s.channels = Array(s.channels.prefix(2))
        let meters = s.ballistics.map { Array($0.channels.prefix(2)) } ?? []
        s.ballistics?.channels = meters
        let text = SummaryFormatter.text(s)
        #expect(
            text.contains(
                "  non-finite: in_1 1, in_2 2 samples (NaN or ±∞, metered as silence; counted in clips)"))
        #expect(text.contains("  meter:     vu (0 = -14 dBFS), highest in_1 -0.1, in_2 -0.2 VU"))
    }
}
