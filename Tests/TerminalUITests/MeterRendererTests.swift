import DSP
import Testing

@testable import TerminalUI

/// `text` without ANSI SGR sequences.
func visible(_ text: String) -> String {
    var out = ""
    var inEscape = false
    for c in text {
        if inEscape {
            if c == "m" { inEscape = false }
        } else if c == "\u{1B}" {
            inEscape = true
        } else {
            out.append(c)
        }
    }
    return out
}

let recording = MeterStatus(
    elapsedSeconds: 72.35, sampleRate: 48000, xruns: 2, framesRecorded: 3_472_800,
    framesDropped: 0, isRecording: true, fileName: "take.wav")
let metering = MeterStatus(elapsedSeconds: 1.25, sampleRate: 44100)
let three = [
    ChannelDisplay(name: "in_1", peakDBFS: -12, holdDBFS: -6, rmsDBFS: -30),
    ChannelDisplay(name: "system:capture_2", peakDBFS: -40, holdDBFS: -30, rmsDBFS: -50, clipCount: 3),
    ChannelDisplay(name: "in_3", peakDBFS: -160, holdDBFS: -160, rmsDBFS: -160, isConnected: false),
]

@Suite struct MeterLines {
    @Test func knownLineAtWidth80() {
        let lines = MeterRenderer.lines(channels: [three[0]], status: metering, width: 80, color: false)
        // name 4 + space + bar 46 + numbers 17 (+ 12 reserved for CLIP) = 80.
        // RMS −30 → 23 cells, peak −12 → 37 cells, hold −6 → 41 cells: marker on cell 41.
        let bar =
            String(repeating: "█", count: 23) + String(repeating: "▒", count: 14)
            + "···" + "|" + String(repeating: "·", count: 5)
        #expect(
            lines == [
                "in_1 " + bar + "  -12.0  -30.0 dB",
                "00:01.2  not recording  xruns 0  dropped 0  44100 Hz",
            ])
    }

    @Test(arguments: [10, 20, 30, 45, 60, 80, 81, 120, 200])
    func linesFitTheWidth(width: Int) {
        for color in [false, true] {
            let lines = MeterRenderer.lines(channels: three, status: recording, width: width, color: color)
            #expect(lines.count == 4)
            for line in lines {
                #expect(visible(line).count <= width, "\(width): \(visible(line))")
                #expect(line.contains("\u{1B}") == (color && visible(line) != line))
            }
            if !color { #expect(lines.allSatisfy { !$0.contains("\u{1B}") }) }
        }
    }

    @Test func barsLineUpAndFillTheWidth() {
        let lines = MeterRenderer.lines(channels: three, status: recording, width: 100, color: false)
        // Names are padded to the longest (16), the CLIP field is reserved: " dB" ends at 88.
        for line in lines.dropLast() {
            let dB = line.range(of: " dB")!
            #expect(line.distance(from: line.startIndex, to: dB.upperBound) == 100 - 12)
        }
        #expect(lines[1].hasSuffix(" dB CLIP 3"))
        #expect(lines[0].hasPrefix("in_1             █"))
        #expect(lines[2].hasSuffix("     --     -- dB"))  // disconnected
        #expect(!lines[2].contains("█") && !lines[2].contains("|"))
    }

    @Test func colourZonesAndMarkers() {
        let loud = ChannelDisplay(name: "in_1", peakDBFS: -1, holdDBFS: -0.5, rmsDBFS: -3, clipCount: 123_456)
        let line = MeterRenderer.lines(channels: [loud], status: metering, width: 80, color: true)[0]
        #expect(line.contains("\u{1B}[0;32m█"))  // green
        #expect(line.contains("\u{1B}[0;33m█"))  // yellow
        #expect(line.contains("\u{1B}[0;31m█"))  // red
        #expect(line.contains("\u{1B}[0;1;31m|"))  // hold in the red zone, bold
        #expect(line.contains("\u{1B}[0;1;31mCLIP 99999+\u{1B}[0m"))
        #expect(line.hasSuffix("\u{1B}[0m"))
        // The zones change where the scale says: −18 dBFS is cell 32.2 of 46, −6 is 41.4.
        let plain = visible(line)
        #expect(plain.hasPrefix("in_1 " + String(repeating: "█", count: 44) + "▒|"))
        let quiet = MeterRenderer.lines(channels: [three[0]], status: metering, width: 80, color: true)[0]
        #expect(!quiet.contains("\u{1B}[0;31m") && quiet.contains("\u{1B}[0;1;33m|"))  // hold at −6 → yellow cell
    }

    @Test func statusLine() {
        let lines = MeterRenderer.lines(channels: [], status: recording, width: 80, color: false)
        #expect(lines == ["01:12.3  REC 3472800 frames  xruns 2  dropped 0  48000 Hz  take.wav"])
        let colored = MeterRenderer.lines(channels: [], status: recording, width: 80, color: true)[0]
        #expect(
            colored
                == "01:12.3  \u{1B}[0;1;31mREC\u{1B}[0m 3472800 frames  \u{1B}[0;33mxruns 2\u{1B}[0m  dropped 0  48000 Hz  take.wav"
        )
        let cut = MeterRenderer.lines(channels: [], status: recording, width: 12, color: true)[0]
        #expect(cut == "01:12.3  \u{1B}[0;1;31mREC\u{1B}[0m")
    }

    @Test func levelToCells() {
        #expect(MeterRenderer.cells(-60, bar: 40) == 0)
        #expect(MeterRenderer.cells(-160, bar: 40) == 0)
        #expect(MeterRenderer.cells(-.infinity, bar: 40) == 0)
        #expect(MeterRenderer.cells(.nan, bar: 40) == 0)
        #expect(MeterRenderer.cells(-30, bar: 40) == 20)
        #expect(MeterRenderer.cells(0, bar: 40) == 40)
        #expect(MeterRenderer.cells(6, bar: 40) == 40)
    }

    @Test func plainLineKnownOutputs() {
        #expect(
            MeterRenderer.plainLine(channels: three, status: recording)
                == "01:12.3 | in_1 peak -12.0 rms -30.0 dBFS | system:capture_2 peak -40.0 rms -50.0 dBFS clips 3"
                + " | in_3 disconnected | xruns 2 | dropped 0 | rec take.wav 3472800 frames")
        let silent = ChannelDisplay(name: "a\u{1B}[2Jb", peakDBFS: -.infinity, holdDBFS: .nan, rmsDBFS: -200)
        #expect(
            MeterRenderer.plainLine(channels: [silent], status: metering)
                == "00:01.2 | a?[2Jb peak -160.0 rms -160.0 dBFS | xruns 0 | dropped 0 | not recording")
    }

    @Test func displayFromReading() {
        let reading = MeterReading(
            peak: 0.5, hold: 1, meanSquare: 0.5, maxPeak: 1, clipCount: 2,
            sumOfSquares: 0, frameCount: 0)
        let d = ChannelDisplay(name: "x", reading: reading)
        #expect(abs(d.peakDBFS - -6.0206) < 1e-4 && d.holdDBFS == 0 && abs(d.rmsDBFS - -3.0103) < 1e-4)
        #expect(d.clipCount == 2 && d.isConnected)
    }
}

@Suite struct TerminalDetection {
    @Test func colourRules() {
        let term = ["TERM": "xterm-256color"]
        #expect(Terminal.colorEnabled(isTTY: true, environment: term))
        #expect(!Terminal.colorEnabled(isTTY: false, environment: term))
        #expect(!Terminal.colorEnabled(isTTY: true, environment: ["TERM": "xterm", "NO_COLOR": "1"]))
        #expect(Terminal.colorEnabled(isTTY: true, environment: ["TERM": "xterm", "NO_COLOR": ""]))
        #expect(!Terminal.colorEnabled(isTTY: true, environment: ["TERM": "dumb"]))
        #expect(!Terminal.colorEnabled(isTTY: true, environment: [:]))
    }

    @Test func columns() {
        #expect(Terminal.columns(environment: ["COLUMNS": "132"]) == 132)
        #expect(Terminal.columns(environment: ["COLUMNS": "0"]) == 80)
        #expect(Terminal.columns(environment: ["COLUMNS": "wide"]) == 80)
        #expect(Terminal.columns(environment: [:]) == 80)
    }

    @Test func detectDoesNotCrash() {
        let info = Terminal.detect(fileDescriptor: -1)  // not a descriptor: not a terminal
        #expect(!info.isTTY && !info.color && info.columns > 0)
    }
}
