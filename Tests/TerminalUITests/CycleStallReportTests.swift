import Foundation
import Testing

@testable import TerminalUI

@Suite("Cycle stall report")
struct CycleStallReportTests {
    @Test("a stall is one event line and one stderr line that says whether micmon waits")
    func stallEvent() throws {
        let event = CycleStallEvent(kind: .cyclesStopped, seconds: 1.7449, secondsWithoutCycle: 4.04)
        let object = try parse(event.json)
        #expect(object["type"] as? String == "event")
        #expect(object["event"] as? String == "cycles_stopped")
        #expect((object["time"] as? NSNumber)?.doubleValue == 1.744)
        #expect((object["seconds_without_cycle"] as? NSNumber)?.doubleValue == 4.0)
        #expect(event.text(waits: false).hasPrefix("[1.744 s] no process cycle for 4.0 s"))
        #expect(event.text(waits: false).hasSuffix("; ending the take"))
        #expect(event.text(waits: true).contains("waiting for cycles to resume"))
        let back = CycleStallEvent(kind: .cyclesResumed, seconds: 1.7449, secondsWithoutCycle: 6.31)
        #expect(try parse(back.json)["event"] as? String == "cycles_resumed")
        #expect(back.text(waits: true) == "[1.744 s] process cycles resumed after 6.3 s without one")
    }

    @Test("the summary gives the frames missing only when there are some")
    func framesMissing() throws {
        var short = summary
        #expect(try parse(SummaryFormatter.json(short))["frames_missing"] == nil)
        #expect(!SummaryFormatter.text(short).contains("missing:"))
        short.framesMissing = 96_000
        short.exitReason = .cyclesStopped
        let object = try parse(SummaryFormatter.json(short))
        #expect((object["frames_missing"] as? NSNumber)?.intValue == 96_000)
        #expect(object["reason"] as? String == StopReason.cyclesStopped.text)
        #expect(SummaryFormatter.text(short).contains("  missing:   96000 frames (2.000 s) of the duration asked for"))
    }
}
