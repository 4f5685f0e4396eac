import DSP
import Foundation
import Platform
import Testing

@testable import TerminalUI

/// Screen text compared with a committed file under Tests/TerminalUITests/Snapshots.
/// `MICMON_UPDATE_SNAPSHOTS=1` rewrites the files instead (review the diff before committing);
/// under `CI=true` rewriting is refused, as for the help snapshots.
enum ScreenSnapshot {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")

    static func check(_ text: String, file name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let url = folder.appendingPathComponent(name)
        let environment = ProcessInfo.processInfo.environment
        if environment["MICMON_UPDATE_SNAPSHOTS"] == "1" {
            guard environment["CI"] != "true" else {
                Issue.record(
                    "MICMON_UPDATE_SNAPSHOTS=1 is refused under CI=true: CI compares snapshots, it never writes them",
                    sourceLocation: sourceLocation)
                return
            }
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        let stored = try? String(contentsOf: url, encoding: .utf8)
        #expect(
            stored != nil, "no snapshot \(name); make it with MICMON_UPDATE_SNAPSHOTS=1", sourceLocation: sourceLocation
        )
        let advice: Comment =
            "\(name) differs from the output; if the change is meant, rerun with MICMON_UPDATE_SNAPSHOTS=1 and review the diff"
        #expect(stored == text, advice, sourceLocation: sourceLocation)
    }
}

/// A deterministic screen of `count` channels: levels spread over the scale, a clip on every
/// fifth channel, a non-finite sample on the seventh, in_4 disconnected, labels on the first two.
enum ScreenFixture {
    static func channels(_ count: Int) -> [ChannelDisplay] {
        (0 ..< count).map { index in
            let peak = -1.0 - Double(index * 7 % 58)
            var channel = ChannelDisplay(
                name: "in_\(index + 1)", peakDBFS: peak, holdDBFS: min(0, peak + 2), rmsDBFS: peak - 11,
                clipCount: index % 5 == 0 ? UInt64(index + 1) : 0, nonFiniteCount: index == 6 ? 2 : 0,
                isConnected: index != 3)
            if index == 0 { channel.label = "primary" }
            if index == 1 { channel.label = "reference" }
            return channel
        }
    }

    static func status(_ count: Int) -> MeterStatus {
        var status = MeterStatus(
            elapsedSeconds: 72.35, sampleRate: 48000, xruns: 0, framesRecorded: 3_472_800, isRecording: true,
            fileName: "take.wav")
        var programmes: [LoudnessDisplay.Programme] = []
        for index in 0 ..< count {
            let offset = Double(index)
            let integrated: Double = index == 2 ? -Double.infinity : -23.04 - offset
            let truePeak: Double = index == 0 ? -0.4 : -3.0 - offset
            programmes.append(
                LoudnessDisplay.Programme(
                    name: "in_\(index + 1)", momentaryLUFS: -20.5 - offset, shortTermLUFS: -21.25 - offset,
                    integratedLUFS: integrated, loudnessRangeLU: 4.2, truePeakDBTP: truePeak))
        }
        status.loudness =
            count == 0 ? nil : LoudnessDisplay(programmes: programmes, correlation: count >= 2 ? 0.93 : nil)
        return status
    }
}

@Suite("Meter screen")
struct MeterScreenTests {
    static let sizes = [(40, 20), (80, 24), (200, 50)]

    @Test(
        "the screen at 40, 80 and 200 columns with 2, 8 and 32 channels matches its snapshot",
        arguments: [40, 80, 200], [2, 8, 32])
    func snapshot(width: Int, channelCount: Int) throws {
        let height = Self.sizes.first { $0.0 == width }!.1
        let lines = MeterScreen.lines(
            channels: ScreenFixture.channels(channelCount), status: ScreenFixture.status(channelCount), width: width,
            height: height, color: false)
        for line in lines { #expect(line.count <= width, "\(line)") }
        #expect(lines.count <= height - 1)
        try ScreenSnapshot.check(
            lines.joined(separator: "\n") + "\n", file: "screen-\(width)x\(height)-\(channelCount)ch.txt")
    }

    @Test("every snapshot file belongs to a size")
    func noStaleSnapshots() throws {
        var expected: Set<String> = []
        for (width, height) in Self.sizes {
            for count in [2, 8, 32] { expected.insert("screen-\(width)x\(height)-\(count)ch.txt") }
        }
        let present = Set(try FileManager.default.contentsOfDirectory(atPath: ScreenSnapshot.folder.path))
        #expect(present == expected)
    }

    @Test("lines fit any size, with and without colour, and never fill the last row", arguments: [1, 2, 3, 5, 9, 33])
    func fits(channelCount: Int) {
        for width in [8, 12, 20, 39, 40, 49, 50, 79, 80, 81, 120, 200, 333] {
            for height in [nil, 1, 2, 3, 4, 6, 10, 20, 24, 60] as [Int?] {
                for color in [false, true] {
                    let lines = MeterScreen.lines(
                        channels: ScreenFixture.channels(channelCount), status: ScreenFixture.status(channelCount),
                        width: width, height: height, color: color)
                    for line in lines { #expect(visible(line).count <= width, "\(width)x\(height ?? 0): \(line)") }
                    if let height { #expect(lines.count <= max(0, height - 1)) }
                    if !color { #expect(lines.allSatisfy { !$0.contains("\u{1B}") }) }
                }
            }
        }
    }

    @Test("labels name the bars; the port name shows without one; control characters are escaped")
    func labels() {
        var channels = ScreenFixture.channels(3)
        channels[2].label = "mic\u{1B}[2J"
        let lines = MeterScreen.lines(
            channels: channels, status: ScreenFixture.status(0), width: 80, height: nil, color: false)
        #expect(lines[0].hasPrefix("primary   "))
        #expect(lines[1].hasPrefix("reference "))
        #expect(lines[2].hasPrefix("mic?[2J   "))
        #expect(!lines.joined().contains("\u{1B}"))
        let plain = MeterRenderer.plainLine(channels: channels, status: ScreenFixture.status(0))
        #expect(plain.contains("| in_1 (primary) peak -1.0 rms -12.0 dBFS clips 1 |"))
        #expect(plain.contains("in_3 (mic?[2J) peak"))
    }

    @Test("the scale's labels sit under the bar cells of their levels")
    func scale() {
        // 80 columns, names of 9 ("reference"): the bar is 80 − 9 − 1 − 17 − 12 = 41 cells.
        let lines = MeterScreen.lines(
            channels: ScreenFixture.channels(2), status: ScreenFixture.status(0), width: 80, height: nil,
            color: false)
        let scale = lines[2]
        #expect(scale.hasPrefix(String(repeating: " ", count: 10) + "-60"))
        #expect(scale.hasSuffix("0   peak    rms"))
        // Each tick label is centred on the boundary of the cells below and above its level.
        let bar = 41
        let text = Array(scale.dropFirst(10).prefix(bar))
        for level in [-50, -40, -30, -20, -10] {
            let label = Array(String(level))
            let tick = Double(level + 60) / 60 * Double(bar)
            let start = Int((tick - Double(label.count) / 2).rounded())
            #expect(Array(text[start ..< start + label.count]) == label, "\(level)")
        }
        #expect(MeterScreen.scaleText(bar: 12) == "-60  -30   0")
        #expect(MeterScreen.scaleText(bar: 8) == "-60    0")
        #expect(MeterScreen.scaleText(bar: 0) == "")
    }

    @Test("the loudness line drops its least needed fields first, keeping I and TP")
    func loudnessFields() {
        let programme = ScreenFixture.status(1).loudness!.programmes[0]
        let wide = MeterScreen.loudnessLine(programme, correlation: -0.5, nameWidth: 4, width: 200)
            .rendered(color: false, columns: 200)
        #expect(wide == "in_1 M -20.5  S -21.3  I -23.0 LUFS  LRA  4.2 LU  TP  -0.4 dBTP  corr -0.50")
        let narrow = MeterScreen.loudnessLine(programme, correlation: -0.5, nameWidth: 4, width: 40)
            .rendered(color: false, columns: 40)
        #expect(narrow == "in_1 I -23.0 LUFS  TP  -0.4 dBTP")
        let coloured = MeterScreen.loudnessLine(programme, correlation: -0.5, nameWidth: 4, width: 200)
            .rendered(color: true, columns: 200)
        #expect(coloured.contains("\u{1B}[0;1;31mTP  -0.4 dBTP"))  // above −1 dBTP
        #expect(coloured.contains("\u{1B}[0;33mcorr -0.50"))
        var unmeasured = programme
        unmeasured.integratedLUFS = -.infinity
        unmeasured.loudnessRangeLU = .nan
        let dashes = MeterScreen.loudnessLine(unmeasured, correlation: nil, nameWidth: 4, width: 200)
            .rendered(color: false, columns: 200)
        #expect(dashes.contains("I    -- LUFS  LRA   -- LU"))
    }

    @Test("no loudness, no loudness line; a programme of a labelled channel shows the label")
    func loudnessPresence() {
        let without = MeterScreen.lines(
            channels: ScreenFixture.channels(2), status: ScreenFixture.status(0), width: 80, height: 24,
            color: false)
        #expect(without.count == 4)
        #expect(!without.joined().contains("LUFS"))
        let with = MeterScreen.lines(
            channels: ScreenFixture.channels(2), status: ScreenFixture.status(2), width: 80, height: 24,
            color: false)
        #expect(with.count == 6)
        #expect(with[3].hasPrefix("primary   M -20.5"))
        #expect(with[3].hasSuffix("corr +0.93"))
        #expect(with[4].hasPrefix("reference M -21.5"))
    }

    @Test("short or narrow: one line per channel in columns; what cannot be shown is counted")
    func compact() {
        #expect(MeterScreen.layout(channelCount: 2, programmeCount: 2, width: 80, height: 24) == .full)
        #expect(
            MeterScreen.layout(channelCount: 2, programmeCount: 2, width: 40, height: 24)
                == .compact(
                    columns: 1, rows: 2, shown: 2))
        #expect(
            MeterScreen.layout(channelCount: 8, programmeCount: 8, width: 80, height: 10)
                == .compact(
                    columns: 2, rows: 4, shown: 8))
        #expect(MeterScreen.layout(channelCount: 32, programmeCount: 0, width: 200, height: 50) == .full)
        // 20 rows: 19 drawable, 3 for status, loudness and scale: 16 per column, 2 columns.
        #expect(
            MeterScreen.layout(channelCount: 32, programmeCount: 32, width: 80, height: 20)
                == .compact(
                    columns: 2, rows: 16, shown: 32))
        // 40 columns hold one column of 16: 15 channels and the count of the other 17.
        #expect(
            MeterScreen.layout(channelCount: 32, programmeCount: 32, width: 40, height: 20)
                == .compact(
                    columns: 1, rows: 16, shown: 15))
        let lines = MeterScreen.lines(
            channels: ScreenFixture.channels(32), status: ScreenFixture.status(32), width: 40, height: 20,
            color: false)
        #expect(lines[15].hasPrefix("+17 more, 4 clip"))  // in_16, in_21, in_26, in_31
        #expect(lines.last! == "01:12.3 REC xruns 0 dropped 0 take.wav")
        #expect(lines.count == 19)
    }

    @Test("no channels: the status line alone, in either layout")
    func noChannels() {
        for width in [40, 80] {
            let lines = MeterScreen.lines(
                channels: [], status: ScreenFixture.status(0), width: width, height: 24, color: false)
            #expect(lines.count == 2)  // the scale, then the status
            #expect(lines.last!.hasPrefix("01:12.3 "))
            #expect(!lines.contains(""))
        }
    }

    @Test("clips stay shown until reset, then count from the reset; totals stay in the model")
    func clipLatch() {
        var latch = ClipLatch()
        var channels = ScreenFixture.channels(2)
        #expect(latch.shown(channels) == channels)
        latch.resetClips(channels)
        #expect(latch.shown(channels).map(\.clipCount) == [0, 0])
        let line = MeterScreen.lines(
            channels: latch.shown(channels), status: ScreenFixture.status(0), width: 80, height: nil, color: false)[0]
        #expect(!line.contains("CLIP"))
        channels[0].clipCount += 4
        channels[1].nonFiniteCount += 1
        channels[1].clipCount += 1
        let shown = latch.shown(channels)
        #expect(shown.map(\.clipCount) == [4, 1])
        #expect(shown.map(\.nonFiniteCount) == [0, 1])
        #expect(channels[0].clipCount == 5)  // the session's total is untouched
        // A channel the latch has not seen shows its count; one below the baseline (a new
        // session's meters) is shown as it is.
        latch.resetClips(channels)  // in_1 at 5 clips, in_2 at 1
        var three = ScreenFixture.channels(3)  // in_1 at 1 (below its baseline), in_2 at 0
        three[1].clipCount = 1
        three[2].clipCount = 3
        let more = latch.shown(three)
        #expect(more.map(\.clipCount) == [1, 0, 3])
    }

    @Test("a resized terminal is cleared and drawn from the top; otherwise the drawing is overwritten")
    func redrawOnResize() {
        var drawing = ScreenDrawing()
        let first = drawing.redraw(["a", "b"], columns: 80, rows: 24)
        #expect(first == "\r\u{1B}[2Ka\n\r\u{1B}[2Kb\n\u{1B}[J")
        let same = drawing.redraw(["c"], columns: 80, rows: 24)
        #expect(same == "\u{1B}[2A\r\u{1B}[2Kc\n\u{1B}[J")
        let narrower = drawing.redraw(["d"], columns: 40, rows: 24)
        #expect(narrower == "\u{1B}[H\u{1B}[2J\r\u{1B}[2Kd\n\u{1B}[J")
        let shorter = drawing.redraw(["e"], columns: 40, rows: 10)
        #expect(shorter.hasPrefix("\u{1B}[H\u{1B}[2J"))
        drawing.forgetDrawing()
        #expect(drawing.redraw(["f"], columns: 80, rows: 24) == "\r\u{1B}[2Kf\n\u{1B}[J")
    }

    @Test("the window's size; where it does not say, COLUMNS and LINES; else 80 columns and no row limit")
    func screenSize() {
        let window = TerminalSize(columns: 120, rows: 30)
        #expect(Terminal.screenSize(window: window, environment: [:]) == (120, 30))
        // A stale COLUMNS exported by a shell never pins a window that can say its size.
        #expect(Terminal.screenSize(window: window, environment: ["COLUMNS": "40", "LINES": "12"]) == (120, 30))
        #expect(Terminal.screenSize(window: nil, environment: ["COLUMNS": "40", "LINES": "12"]) == (40, 12))
        #expect(Terminal.screenSize(window: nil, environment: ["LINES": "x"]) == (80, nil))
        #expect(Terminal.screenSize(window: nil, environment: ["COLUMNS": "0"]) == (80, nil))
    }

    @Test("JSON names a labelled channel's label after connected, and nothing more without one")
    func jsonLabel() {
        let channels = ScreenFixture.channels(3)
        let text = JSONLines.meter(channels: channels, status: MeterStatus(elapsedSeconds: 1, sampleRate: 48000))
        #expect(text.contains("\"name\":\"in_1\",") && text.contains("\"connected\":true,\"label\":\"primary\"}"))
        #expect(text.contains("\"connected\":true,\"label\":\"reference\"}"))
        #expect(
            text.contains(
                "\"name\":\"in_3\",\"peak_dbfs\":-15.0,\"rms_dbfs\":-26.0,\"hold_dbfs\":-13.0,"
                    + "\"clips\":0,\"non_finite\":0,\"connected\":true}"))
    }
}
