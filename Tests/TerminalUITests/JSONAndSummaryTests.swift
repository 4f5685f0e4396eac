import DSP
import Foundation
import Testing

@testable import TerminalUI

func parse(_ line: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
    return try #require(object as? [String: Any])
}

let summary = SessionSummary(
    durationSeconds: 10, frames: 480_000, sampleRate: 48000,
    channels: [
        .init(name: "in_1", maxPeakDBFS: -3.2149, meanRMSDBFS: -15.4, clipCount: 0),
        .init(name: "in_2", maxPeakDBFS: 0, meanRMSDBFS: -.infinity, clipCount: 12),
    ],
    xruns: 1, framesDropped: 1536,
    drops: [.init(startFrame: 48000, length: 1024), .init(startFrame: 96_000, length: 512)],
    filePath: "/tmp/take.wav", exitReason: .durationReached)

@Suite struct JSONOutput {
    @Test func meterKnownOutput() throws {
        let line = JSONLines.meter(
            channels: [ChannelDisplay(name: "in_1", peakDBFS: -3.21, holdDBFS: -2.96, rmsDBFS: -12.14)],
            status: MeterStatus(elapsedSeconds: 1.25, sampleRate: 48000, framesRecorded: 48000))
        #expect(
            line
                == #"{"type":"meter","schema":1,"time":1.250,"channels":[{"name":"in_1","peak_dbfs":-3.2,"rms_dbfs":-12.1,"hold_dbfs":-3.0,"clips":0,"non_finite":0,"connected":true}],"xruns":0,"frames_recorded":48000,"frames_dropped":0,"sample_rate":48000,"recording":false,"file":null}"#
        )
        let object = try parse(line)
        #expect(object["type"] as? String == "meter")
        #expect(object["time"] as? Double == 1.25)
        #expect(object["file"] is NSNull)
        let channel = try #require((object["channels"] as? [[String: Any]])?.first)
        #expect(channel["rms_dbfs"] as? Double == -12.1)
        #expect(channel["connected"] as? Bool == true)
    }

    @Test func nonFiniteLevelsStayFiniteAndParse() throws {
        let line = JSONLines.meter(channels: three, status: recording)
        #expect(!line.contains("nan") && !line.contains("inf") && !line.contains("\n"))
        let object = try parse(line)
        let channels = try #require(object["channels"] as? [[String: Any]])
        #expect(channels.count == 3)
        #expect(channels[2]["peak_dbfs"] as? Double == -160)
        #expect(channels[2]["connected"] as? Bool == false)
        #expect(object["file"] as? String == "take.wav")
        let odd = ChannelDisplay(name: "x", peakDBFS: .nan, holdDBFS: -.infinity, rmsDBFS: .infinity)
        let parsed = try parse(JSONLines.meter(channels: [odd], status: metering))
        let c = try #require((parsed["channels"] as? [[String: Any]])?.first)
        #expect(c["peak_dbfs"] as? Double == -160 && c["hold_dbfs"] as? Double == -160)
        #expect((c["rms_dbfs"] as? Double).map { $0.isFinite } == true)
    }

    @Test(arguments: [
        "plain", "quote\"back\\slash", "line\nbreak\ttab\r\u{8}\u{C}", "ctl\u{0}\u{1}\u{1F}\u{7F}",
        "ünïcødé 🎤 日本", "sep\u{2028}\u{2029}", "/slash",
    ])
    func stringsRoundTrip(name: String) throws {
        let status = MeterStatus(elapsedSeconds: 0, sampleRate: 48000, isRecording: true, fileName: name)
        let line = JSONLines.meter(
            channels: [ChannelDisplay(name: name, peakDBFS: 0, holdDBFS: 0, rmsDBFS: 0)],
            status: status)
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 })
        let object = try parse(line)
        #expect(object["file"] as? String == name)
        #expect((object["channels"] as? [[String: Any]])?.first?["name"] as? String == name)
    }

    @Test func escapes() {
        #expect(JSON.quoted("a\"b\\c") == #""a\"b\\c""#)
        #expect(JSON.quoted("\n\r\t\u{8}\u{C}") == #""\u000a\u000d\u0009\u0008\u000c""#)
        #expect(JSON.quoted("\u{0}\u{1F}\u{7F}") == "\"\\u0000\\u001f\u{7F}\"")
        #expect(JSON.quoted("é/🎤\u{2028}") == "\"é/🎤\u{2028}\"")
    }
}

@Suite struct NumberFormatting {
    @Test func fixedDecimals() {
        #expect(TextFormat.fixed(1.25, decimals: 3) == "1.250")
        #expect(TextFormat.fixed(-3.21, decimals: 1) == "-3.2")
        #expect(TextFormat.fixed(-2.96, decimals: 1) == "-3.0")
        #expect(TextFormat.fixed(-0.04, decimals: 1) == "0.0")
        #expect(TextFormat.fixed(-0.0, decimals: 2) == "0.00")
        #expect(TextFormat.fixed(0.05, decimals: 0) == "0")
        #expect(TextFormat.fixed(2.5, decimals: 0) == "3")
        #expect(TextFormat.fixed(-160, decimals: 1) == "-160.0")
        #expect(TextFormat.fixed(0.001, decimals: 3) == "0.001")
        #expect(TextFormat.fixed(12345.6789, decimals: 2) == "12345.68")
        #expect(TextFormat.fixed(.nan, decimals: 1) == "0.0")
        #expect(TextFormat.fixed(.infinity, decimals: 3) == "1000000000000000.000")
        #expect(TextFormat.decibels(-.infinity, decimals: 1) == "-160.0")
        #expect(TextFormat.decibels(-3000, decimals: 2) == "-160.00")
    }

    @Test func clock() {
        #expect(TextFormat.clock(0) == "00:00.0")
        #expect(TextFormat.clock(1.25) == "00:01.2")
        #expect(TextFormat.clock(59.99) == "00:59.9")
        #expect(TextFormat.clock(72.35) == "01:12.3")
        #expect(TextFormat.clock(3600) == "60:00.0")
        #expect(TextFormat.clock(6000.5) == "100:00.5")
        #expect(TextFormat.clock(-1) == "00:00.0")
        #expect(TextFormat.clock(.nan) == "00:00.0")
    }

    @Test func padding() {
        #expect(TextFormat.padRight("system:capture_1", 8) == "system:…")
        #expect(TextFormat.padRight("in", 4) == "in  ")
        #expect(TextFormat.pad("7", 3) == "  7")
        #expect(TextFormat.printable("a\u{1B}b\u{9B}c\u{7F}é") == "a?b?c?é")
    }
}

@Suite struct Summary {
    @Test func textKnownOutput() {
        #expect(
            SummaryFormatter.text(summary) == """
                Session summary
                  ended:     duration reached
                  file:      /tmp/take.wav
                  duration:  10.000 s, 480000 frames at 48000 Hz
                  channel  max peak dBFS  mean RMS dBFS     clips
                  in_1             -3.21         -15.40         0
                  in_2              0.00        -160.00        12
                  xruns:     1
                  dropped:   1536 frames in 2 gaps
                    at 1.000 s (frame 48000): 1024 frames (21.3 ms)
                    at 2.000 s (frame 96000): 512 frames (10.7 ms)
                """)
    }

    @Test func textWithoutFileOrDrops() {
        let clean = SessionSummary(
            durationSeconds: 2.5, frames: 110_250, sampleRate: 44100,
            channels: [.init(name: "a", maxPeakDBFS: -6, meanRMSDBFS: -20, clipCount: 0)],
            exitReason: .interrupted)
        #expect(
            SummaryFormatter.text(clean) == """
                Session summary
                  ended:     interrupted (SIGINT)
                  file:      (none)
                  duration:  2.500 s, 110250 frames at 44100 Hz
                  channel  max peak dBFS  mean RMS dBFS     clips
                  a                -6.00         -20.00         0
                  xruns:     0
                  dropped:   0 frames
                """)
    }

    @Test func manyDropsAreCountedInText() {
        var many = summary
        many.drops = (0 ..< 25).map { .init(startFrame: UInt64($0) * 4800, length: 256) }
        many.framesDropped = 25 * 256
        let lines = SummaryFormatter.text(many).split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("    at ") }.count == SummaryFormatter.listedDrops)
        #expect(lines.last == "    … and 15 more")
        let json = SummaryFormatter.json(many)
        #expect(json.components(separatedBy: "start_frame").count == 26)
    }

    @Test func jsonKnownOutput() throws {
        let line = SummaryFormatter.json(summary)
        #expect(
            line
                == #"{"type":"summary","schema":1,"reason":"duration reached","file":"/tmp/take.wav","duration_s":10.000,"frames":480000,"sample_rate":48000,"channels":[{"name":"in_1","max_peak_dbfs":-3.21,"mean_rms_dbfs":-15.40,"clips":0,"non_finite":0},{"name":"in_2","max_peak_dbfs":0.00,"mean_rms_dbfs":-160.00,"clips":12,"non_finite":0}],"non_finite_replaced":0,"xruns":1,"frames_dropped":1536,"drops":[{"start_frame":48000,"length":1024,"start_s":1.000,"length_ms":21.3},{"start_frame":96000,"length":512,"start_s":2.000,"length_ms":10.7}],"server_gap_count":0,"frames_skipped_by_server":0,"server_gaps":[],"xrun_callbacks":0,"missed_gap_count":0,"frames_missed":0,"missed_gaps":[],"timeline_jitter":0}"#
        )
        let object = try parse(line)
        #expect(object["frames_dropped"] as? Int == 1536)
        let drops = try #require(object["drops"] as? [[String: Any]])
        #expect(drops[1]["start_s"] as? Double == 2)
    }

    /// The callback's timing: a text line, and an object in the JSON with the execution mean
    /// (what a per-cycle cost comparison reads) as well as the tails.
    @Test func callbackTimingInTextAndJSON() throws {
        var timed = summary
        timed.callbackTiming = .init(
            latenessP99: 41, latenessMax: 120, executionMean: 1.2345, executionP99: 3,
            executionMax: 17, periodUsecs: 666.7)
        let lines = SummaryFormatter.text(timed).split(separator: "\n")
        #expect(
            lines.contains("  callback:  late p99 41 / max 120 µs, ran mean 1.23 / p99 3 / max 17 µs (period 667 µs)"))
        let object = try parse(SummaryFormatter.json(timed))
        let timing = try #require(object["callback_us"] as? [String: Any])
        #expect(timing["execution_mean"] as? Double == 1.235 || timing["execution_mean"] as? Double == 1.234)
        #expect(timing["execution_p99"] as? Double == 3 && timing["lateness_max"] as? Double == 120)
        #expect(timing["period"] as? Double == 666.7)
    }

    /// A triggered run's length is its files' frames; the time it spent armed is said apart (text
    /// and JSON); a run without a trigger says nothing of it.
    @Test func triggeredRunSaysItsArmedTime() throws {
        var triggered = summary
        triggered.frames = 72000
        triggered.durationSeconds = 1.5
        triggered.framesArmed = 408000
        let lines = SummaryFormatter.text(triggered).split(separator: "\n").map(String.init)
        #expect(lines.contains("  duration:  1.500 s, 72000 frames at 48000 Hz in the files"), "\(lines)")
        #expect(lines.contains("  armed:     8.500 s, 408000 frames waiting for the trigger (in no file)"), "\(lines)")
        let json = SummaryFormatter.json(triggered)
        #expect(json.contains(#""frames":72000,"frames_armed":408000,"armed_s":8.500,"sample_rate":48000"#), "\(json)")
        #expect(!SummaryFormatter.text(summary).contains("armed"))
        #expect(!SummaryFormatter.json(summary).contains("armed"))
    }

    /// Graph-wide server gaps are listed apart from drops, and do not count as dropped frames.
    @Test func serverGapsApartFromDrops() throws {
        var gapped = summary
        gapped.drops = []
        gapped.framesDropped = 0
        gapped.serverGapCount = 12
        gapped.framesSkippedByServer = 480
        gapped.serverGaps =
            [.init(startFrame: 48000, length: 64)]
            + (1 ..< 12).map { .init(startFrame: 48000 + UInt64($0) * 4800, length: 32) }
        let lines = SummaryFormatter.text(gapped).split(separator: "\n").map(String.init)
        #expect(lines.contains("  dropped:   0 frames"))
        #expect(
            lines.contains(
                "  server gaps: 12, 480 frames (the whole graph lost them: the driver was late; nothing inserted)"))
        #expect(lines.contains("    at 1.000 s (frame 48000): 64 frames (1.3 ms)"))
        #expect(lines.last == "    … and 2 more")
        let object = try parse(SummaryFormatter.json(gapped))
        #expect(object["frames_dropped"] as? Int == 0)
        #expect(object["server_gap_count"] as? Int == 12)
        #expect(object["frames_skipped_by_server"] as? Int == 480)
        let gaps = try #require(object["server_gaps"] as? [[String: Any]])
        #expect(gaps.count == 12 && gaps[0]["length"] as? Int == 64 && gaps[0]["start_s"] as? Double == 1)
    }

    /// micmon's own timeline losses are listed with their places, say that JACK cannot tell who
    /// else lost them, and are part of the dropped frames; jitter and xrun events have lines of
    /// their own; the JSON carries each.
    @Test func missedFramesJitterAndXrunEvents() throws {
        var missed = summary
        missed.drops = [.init(startFrame: 96000, length: 288000)]
        missed.framesDropped = 288000
        missed.missedGapCount = 1
        missed.framesMissed = 288000
        missed.missedGaps = [.init(startFrame: 96000, length: 288000)]
        missed.timelineJitter = 3
        missed.xruns = 2
        missed.xrunCallbacks = 16
        let lines = SummaryFormatter.text(missed).split(separator: "\n").map(String.init)
        #expect(lines.contains("  xruns:     2 events (16 callbacks)"))
        #expect(
            lines.contains(
                "  missed:    288000 frames in 1 gap, silence in place (the server ran them without micmon; JACK cannot tell whether other clients got them)"
            ))
        #expect(lines.contains("    at 2.000 s (frame 96000): 288000 frames (6000.0 ms)"))
        #expect(lines.contains("  jitter:    3 late counter reads, nothing lost"))
        let object = try parse(SummaryFormatter.json(missed))
        #expect(object["frames_missed"] as? Int == 288000 && object["missed_gap_count"] as? Int == 1)
        #expect(object["xruns"] as? Int == 2 && object["xrun_callbacks"] as? Int == 16)
        #expect(object["timeline_jitter"] as? Int == 3)
        let gaps = try #require(object["missed_gaps"] as? [[String: Any]])
        #expect(gaps.count == 1 && gaps[0]["start_frame"] as? Int == 96000)
    }

    /// PipeWire's short runs of digital silence between sound: a line of their own with their
    /// places, and three JSON keys only when there are any.
    @Test func uncertainSilenceIsListedApart() throws {
        let plain = try parse(SummaryFormatter.json(summary))
        #expect(plain["uncertain_gap_count"] == nil && plain["frames_uncertain"] == nil)
        #expect(!SummaryFormatter.text(summary).contains("unsure:"))
        var unsure = summary
        unsure.uncertainGapCount = 1
        unsure.framesUncertain = 256
        unsure.uncertainGaps = [.init(startFrame: 48000, length: 256)]
        let lines = SummaryFormatter.text(unsure).split(separator: "\n").map(String.init)
        #expect(
            lines.contains(
                "  unsure:    256 frames in 1 run of digital silence between sound (the graph may have given micmon silence where the source had sound; JACK cannot tell)"
            ))
        #expect(lines.contains("    at 1.000 s (frame 48000): 256 frames (5.3 ms)"))
        let object = try parse(SummaryFormatter.json(unsure))
        #expect(object["uncertain_gap_count"] as? Int == 1 && object["frames_uncertain"] as? Int == 256)
        let gaps = try #require(object["uncertain_gaps"] as? [[String: Any]])
        #expect(gaps.count == 1 && gaps[0]["start_frame"] as? Int == 48000 && gaps[0]["length"] as? Int == 256)
        // Nothing more is counted dropped or missed for them.
        #expect(object["frames_dropped"] as? Int == plain["frames_dropped"] as? Int)
        #expect(object["frames_missed"] as? Int == plain["frames_missed"] as? Int)
    }

    @Test func unknownRateAndOddTextStillParse() throws {
        var odd = summary
        odd.sampleRate = 0
        odd.filePath = nil
        odd.exitReason = .readFailed("server \"gone\"\n")
        let object = try parse(SummaryFormatter.json(odd))
        #expect(object["reason"] as? String == "server \"gone\"\n")
        #expect(object["file"] is NSNull)
        #expect((object["drops"] as? [[String: Any]])?.first?["start_s"] as? Double == 0)
        #expect(!SummaryFormatter.text(odd).contains("\n\n"))  // the newline in the reason is made printable
    }

    @Test func channelFromReading() {
        let reading = MeterReading(
            peak: 0, hold: 0, meanSquare: 0, maxPeak: 0.5, clipCount: 1,
            sumOfSquares: 48000 * 0.25, frameCount: 48000)
        let c = SessionSummary.Channel(name: "in_1", reading: reading)
        #expect(abs(c.maxPeakDBFS - -6.0206) < 1e-4 && abs(c.meanRMSDBFS - -6.0206) < 1e-4 && c.clipCount == 1)
    }
}
