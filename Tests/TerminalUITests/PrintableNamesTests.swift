import Testing

@testable import TerminalUI

/// Issue 23: raw ESC and newlines from file, server and port names never reach the terminal.
@Suite("Names in human-readable text are printable")
struct PrintableNamesTests {
    static let hostile = "a\u{1B}]0;pwned\u{07}\n\u{1B}[2J\u{9B}b"

    static func rawControls(_ text: String) -> [Unicode.Scalar] {
        text.unicodeScalars.filter { $0 != "\n" && ($0.value < 0x20 || (0x7F ... 0x9F).contains($0.value)) }
    }

    @Test("TextFormat.printable turns C0, DEL and C1 into ?")
    func printable() {
        #expect(TextFormat.printable(Self.hostile) == "a?]0;pwned???[2J?b")
        #expect(TextFormat.printable("système:capture_1 [ok]") == "système:capture_1 [ok]")
    }

    @Test("the latency text report shows server and port names escaped")
    func latencyReport() {
        var figures = latencyFigures
        figures.serverName = Self.hostile
        figures.roundTrip?.sendPort = Self.hostile
        figures.roundTrip?.returnPort = Self.hostile
        figures.roundTrip?.captureLatencyPort = Self.hostile
        figures.roundTrip?.playbackLatencyPort = Self.hostile
        let text = LatencyReport.text(figures, reason: .durationReached)
        #expect(Self.rawControls(text).isEmpty, "\(text.debugDescription)")
        #expect(text.contains("a?]0;pwned???[2J?b"))
    }

    @Test("messages with a path escape it")
    func messages() {
        for line in [
            Messages.cannotWrite(Self.hostile, "x"), Messages.cannotPlay(Self.hostile, "x"),
            Messages.serverBack(continuingInto: Self.hostile), Messages.waitingForServer(Self.hostile),
        ] {
            #expect(Self.rawControls(line).isEmpty && !line.contains("\n"), "\(line.debugDescription)")
        }
    }
}
