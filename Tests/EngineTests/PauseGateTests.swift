import Testing

@testable import Engine

/// The writer's pause and resume piece: which take frames of each run reach the file.
@Suite("PauseGate")
struct PauseGateTests {
    /// Runs `runs` (take-frame counts, back to back from 0) through the gate and returns the take
    /// frames written, in order, and the events.
    private func written(_ gate: inout PauseGate, runs: [UInt64]) -> ([UInt64], [TakeEvent]) {
        var frames: [UInt64] = []
        var events: [TakeEvent] = []
        var start: UInt64 = 0
        for count in runs {
            events += gate.admit(takeFrame: start, count: count) { offset, length in
                frames += (start + offset ..< start + offset + length).map { $0 }
            }
            start += count
        }
        return (frames, events)
    }

    @Test("a pause and a resume inside one run leave out exactly the frames between them")
    func pauseInsideRun() {
        var gate = PauseGate()
        gate.add(TakeRequest(.pause, at: 10))
        gate.add(TakeRequest(.resume, at: 25))
        let (frames, events) = written(&gate, runs: [40])
        #expect(frames == Array(0 ..< 10) + Array(25 ..< 40))
        #expect(events == [TakeEvent(.pause, at: 10), TakeEvent(.resume, at: 25)])
        #expect(gate.framesPaused == 15)
    }

    @Test("requests across runs, a late request applies at the first frame not yet written")
    func acrossRuns() {
        var gate = PauseGate()
        gate.add(TakeRequest(.pause, at: 7))
        var (frames, events) = written(&gate, runs: [5, 5])  // 0..<10: pause at 7
        #expect(frames == Array(0 ..< 7))
        // A resume posted for frame 3 (already passed) applies at 10, where the next run begins.
        gate.add(TakeRequest(.resume, at: 3))
        var more: [UInt64] = []
        events += gate.admit(takeFrame: 10, count: 4) { offset, length in
            more += (10 + offset ..< 10 + offset + length).map { $0 }
        }
        frames += more
        #expect(frames == Array(0 ..< 7) + Array(10 ..< 14))
        #expect(events == [TakeEvent(.pause, at: 7), TakeEvent(.resume, at: 10)])
    }

    @Test("a pause when paused and a resume when writing change nothing")
    func redundantRequests() {
        var gate = PauseGate()
        gate.add(TakeRequest(.resume, at: 2))
        gate.add(TakeRequest(.pause, at: 4))
        gate.add(TakeRequest(.pause, at: 6))
        let (frames, events) = written(&gate, runs: [10])
        #expect(frames == Array(0 ..< 4))
        #expect(events == [TakeEvent(.pause, at: 4)])
        #expect(gate.isPaused)
    }

    @Test("a take that begins paused writes nothing until the resume; marks and splits are not the gate's")
    func startsPaused() {
        var gate = PauseGate()
        gate.add(TakeRequest(.pause, at: 0))
        gate.add(TakeRequest(.mark, at: 1))
        gate.add(TakeRequest(.split, at: 2))
        gate.add(TakeRequest(.resume, at: 300))
        let (frames, events) = written(&gate, runs: [256, 256])
        #expect(frames == Array(300 ..< 512))
        #expect(events.map(\.kind) == [.pause, .resume])
        #expect(gate.flush(upTo: 512).isEmpty)
    }

    @Test("a pause at the take's end is still put on record")
    func pauseAtEnd() {
        var gate = PauseGate()
        _ = written(&gate, runs: [8])
        gate.add(TakeRequest(.pause, at: 8))
        #expect(gate.flush(upTo: 8) == [TakeEvent(.pause, at: 8)])
    }
}
