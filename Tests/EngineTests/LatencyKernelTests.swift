import DSP
import Jack
import Realtime
import Testing

@testable import Engine

/// The latency kernel without a server: cycles are run by hand on one buffer that serves as
/// both out_1 and in_1, as libjack does on a software loop.
@Suite("Latency kernel")
final class LatencyKernelTests {
    let signal = MeasurementSignal()
    let table: UnsafeMutablePointer<Float>
    let returns = SPSCRing<Float>(capacity: 4096)
    let gaps = SPSCRing<DropEvent>(capacity: 4)
    /// The session core's memory (a timing ring of 8), as a session would make it.
    let memory = SessionMemory(sampleRate: 48000, timingCapacity: 8)
    var state: UnsafeMutablePointer<SessionState> { memory.state }
    let counters: UnsafeMutablePointer<LatencyCounters>
    let buffer: UnsafeMutablePointer<Float>
    var kernel: LatencyKernel

    init() {
        table = .allocate(capacity: signal.period)
        table.initialize(from: signal.samples, count: signal.period)
        counters = .allocate(capacity: 1)
        counters.initialize(to: LatencyCounters())
        buffer = .allocate(capacity: 1024)
        buffer.initialize(repeating: 0, count: 1024)
        let handle = OpaquePointer(bitPattern: 0x10)!
        kernel = LatencyKernel(
            output: buffer, input: UnsafePointer(buffer), table: table, period: signal.period,
            measures: true, returns: returns, gaps: gaps, counters: counters,
            link: memory.link(client: handle, readsSystemClock: false))
    }

    deinit {
        table.deallocate()
        counters.deinitialize(count: 1)
        counters.deallocate()
        buffer.deallocate()
    }

    /// One cycle of `frames` frames, the buffer serving as in_1 and then out_1 (a software loop).
    func cycle(_ frames: Int = 256, at usecs: UInt64 = 5000) {
        kernel.input = UnsafePointer(buffer)
        kernel.output = buffer
        kernel.process(frameCount: frames, cycleStartUsecs: usecs)
    }

    /// What the session does for a software loop: the loop is closed, then the run starts.
    func arm() {
        counters.pointee.emissionArmed.store(true, ordering: .releasing)
        counters.pointee.isArmed.store(true, ordering: .releasing)
    }

    func drainReturns() -> [Float] {
        let slices = returns.consumer.readableSlices()
        let samples = Array(slices.first) + Array(slices.second)
        returns.consumer.commitRead(count: slices.count)
        return samples
    }

    @Test("silent until armed; the measurement starts one cycle after the arm is seen")
    func startsAfterArming() {
        buffer.update(repeating: 0.25, count: 256)
        cycle()
        #expect((0 ..< 256).allSatisfy { buffer[$0] == 0 })
        #expect(returns.consumer.availableToRead() == 0)
        counters.pointee.emissionArmed.store(true, ordering: .releasing)
        counters.pointee.isArmed.store(true, ordering: .releasing)
        cycle(at: 6000)
        #expect((0 ..< 256).allSatisfy { buffer[$0] == 0 })
        #expect(counters.pointee.firstCycleUsecs.load(ordering: .relaxed) == 0)
        cycle(at: 7000)
        #expect((0 ..< 256).allSatisfy { buffer[$0] == signal.samples[$0] })
        #expect(counters.pointee.firstCycleUsecs.load(ordering: .relaxed) == 7000)
        #expect(counters.pointee.framesRun.load(ordering: .relaxed) == 256)
        #expect(state.pointee.cycles.load(ordering: .relaxed) == 3)
    }

    @Test("on a shared buffer the return is read before the output is written: one period of delay")
    func softwareLoopIsOnePeriod() {
        arm()
        cycle()
        for _ in 0 ..< 12 { cycle() }
        let returned = drainReturns()
        #expect(returned.count == 12 * 256)
        #expect(returned[0 ..< 256].allSatisfy { $0 == 0 })
        for m in 256 ..< returned.count { #expect(returned[m] == signal.value(at: m - 256)) }
        // On through the estimator (the ring holds 4096 frames, so drain as the session does).
        let estimator = DelayEstimator(signal: signal, maximumDelayFrames: 48000)
        var found = returned.withUnsafeBufferPointer { estimator.append($0) }
        for _ in 0 ..< 4 {
            for _ in 0 ..< 12 { cycle() }
            found += drainReturns().withUnsafeBufferPointer { estimator.append($0) }
        }
        #expect(found.count >= 2)
        #expect(found.allSatisfy { $0.delayFrames == 256 })
    }

    @Test("a full return ring becomes one gap, logged before the next period that fits")
    func fullRingLogsAGap() {
        arm()
        cycle()
        for _ in 0 ..< 16 { cycle() }  // 4096 frames: the ring is full
        cycle()
        cycle()  // two periods lost, merged
        #expect(counters.pointee.returnFramesLost.load(ordering: .relaxed) == 512)
        #expect(gaps.consumer.availableToRead() == 0)
        _ = drainReturns()
        cycle()
        let gap = gaps.consumer.readableSlices(count: 1)?.first[0]
        #expect(gap == DropEvent(startFrame: 4096, frameCount: 512))
        #expect(drainReturns().count == 256)
        #expect(counters.pointee.framesRun.load(ordering: .relaxed) == 4096 + 512 + 256)
        #expect(kernel.framesEmitted == 4096 + 512 + 256)
    }

    /// PipeWire hands in_1 its idle buffer when no period reached it (the last cycle ran into the
    /// next one): that silence is no return of the signal, so it is a gap the estimator skips.
    /// Before, it was fed to the estimator as the return, and a window holding it measured
    /// 256.0010 frames through a node of exactly 256 (seen under load).
    @Test("PipeWire: a return that is the port's idle buffer after data is a gap, not silence returned")
    func idleReturnIsAGap() {
        let idle = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        idle.initialize(repeating: 0, count: 256)
        defer { idle.deallocate() }
        kernel.idleInput = UnsafePointer(idle)
        arm()
        cycle()
        cycle()
        cycle()
        kernel.input = UnsafePointer(idle)  // no period reached in_1
        kernel.output = buffer
        kernel.process(frameCount: 256, cycleStartUsecs: 5000)
        cycle()
        #expect(counters.pointee.returnFramesLost.load(ordering: .relaxed) == 256)
        let gap = gaps.consumer.readableSlices(count: 1)?.first[0]
        #expect(gap == DropEvent(startFrame: 512, frameCount: 256))
        #expect(drainReturns().count == 3 * 256)
    }

    /// On PipeWire a late cycle shows on the counter as a repeat (+0 after +2N) or, when the
    /// graph ran cycles without micmon, as an excess alone: either way a period of the signal
    /// never reached the output, and the estimator must skip the windows that return it. Before,
    /// only a repeat was logged, and under load one window measured 256.0040 frames through a
    /// node of exactly 256.
    @Test("PipeWire: a counter repeat or excess is a disturbance of the signal at the emission position")
    func counterStepsOtherThanThePeriodAreDisturbances() {
        kernel.lateRepeatIsRead = true
        arm()
        var frame: UInt32 = 1000
        func step(_ advance: UInt32) {
            frame &+= advance
            kernel.input = UnsafePointer(buffer)
            kernel.output = buffer
            kernel.process(frameCount: 256, cycleStartUsecs: 5000, cycleStartFrame: frame, knowsCycleFrame: true)
        }
        step(0)
        step(256)
        step(256)
        #expect(gaps.consumer.availableToRead() == 0)
        step(768)  // two cycles ran without micmon: an excess with no repeat after it
        step(256)
        step(512)  // a late cycle ...
        step(0)  // ... and the repeat after it
        step(256)
        let events = gaps.consumer.readableSlices(count: 3).map { Array($0.first) + Array($0.second) } ?? []
        #expect(
            events == [
                DropEvent(startFrame: 512, frameCount: 0), DropEvent(startFrame: 1024, frameCount: 0),
                DropEvent(startFrame: 1280, frameCount: 0),
            ])
        // On jackd2 (no late-repeat rule) the counter's steps are the timeline judge's, not this.
        kernel.lateRepeatIsRead = false
        gaps.consumer.commitRead(count: events.count)
        step(1024)
        #expect(gaps.consumer.availableToRead() == 0)
    }

    @Test("PipeWire: a cycle entered a period or more after its start is a disturbance, even at the period's step")
    func lateEntryIsADisturbance() {
        kernel.lateRepeatIsRead = true
        arm()
        var frame: UInt32 = 1000
        var start: UInt64 = 100_000
        func step(enteredAfter lateness: UInt64) {
            frame &+= 256
            start &+= 5333
            kernel.input = UnsafePointer(buffer)
            kernel.output = buffer
            kernel.process(
                frameCount: 256, cycleStartUsecs: start, cycleStartFrame: frame, knowsCycleFrame: true,
                enteredUsecs: start + lateness, periodUsecs: 5333)
        }
        step(enteredAfter: 100)  // the arm is seen: the signal starts with the next cycle
        step(enteredAfter: 5332)  // late, but within the period: emits frames 0 ..< 256
        #expect(gaps.consumer.availableToRead() == 0)
        step(enteredAfter: 5333)  // the graph has read this cycle's output already
        step(enteredAfter: 200)
        step(enteredAfter: 8000)
        let events = gaps.consumer.readableSlices(count: 2).map { Array($0.first) + Array($0.second) } ?? []
        #expect(events == [DropEvent(startFrame: 256, frameCount: 0), DropEvent(startFrame: 768, frameCount: 0)])
        // On jackd2 the rule does not apply: a late cycle there is the xrun and timeline reports'.
        kernel.lateRepeatIsRead = false
        gaps.consumer.commitRead(count: events.count)
        step(enteredAfter: 9000)
        #expect(gaps.consumer.availableToRead() == 0)
    }

    @Test("a loop closed later: the timeline runs at once, the signal starts a cycle after the loop is armed")
    func emissionWaitsForTheLoop() {
        counters.pointee.isArmed.store(true, ordering: .releasing)
        cycle()
        cycle(at: 6000)
        cycle(at: 7000)
        #expect(counters.pointee.framesRun.load(ordering: .relaxed) == 512)
        #expect(returns.consumer.availableToRead() == 0)
        counters.pointee.emissionArmed.store(true, ordering: .releasing)
        cycle(at: 8000)
        #expect((0 ..< 256).allSatisfy { buffer[$0] == 0 })
        #expect(counters.pointee.firstCycleUsecs.load(ordering: .relaxed) == 0)
        cycle(at: 9000)
        #expect((0 ..< 256).allSatisfy { buffer[$0] == signal.samples[$0] })
        #expect(counters.pointee.firstCycleUsecs.load(ordering: .relaxed) == 9000)
        #expect(returns.consumer.availableToRead() == 256)
        #expect(counters.pointee.framesRun.load(ordering: .relaxed) == 1024)
    }

    @Test("a stop request silences the output and is confirmed")
    func stopSilences() {
        arm()
        cycle()
        cycle()
        state.pointee.stopRequested.store(true, ordering: .releasing)
        cycle()
        #expect((0 ..< 256).allSatisfy { buffer[$0] == 0 })
        let stopped = state.pointee.hasStopped.load(ordering: .acquiring)
        #expect(stopped)
        #expect(counters.pointee.framesRun.load(ordering: .relaxed) == 256)
    }

    @Test("without a loop the output stays silent and nothing is queued, but the timeline runs")
    func timingOnly() {
        kernel = LatencyKernel(
            output: buffer, input: UnsafePointer(buffer), table: table, period: signal.period,
            measures: false, returns: returns, gaps: gaps, counters: counters,
            link: memory.link(client: OpaquePointer(bitPattern: 0x10)!, readsSystemClock: false))
        counters.pointee.isArmed.store(true, ordering: .releasing)
        buffer.update(repeating: 0.5, count: 256)
        cycle()
        cycle()
        cycle()
        #expect((0 ..< 256).allSatisfy { buffer[$0] == 0 })
        #expect(returns.consumer.availableToRead() == 0)
        #expect(counters.pointee.framesRun.load(ordering: .relaxed) == 512)
    }

    @Test("cycle timings go through the shared recorder; a full ring counts the misses")
    func timingsAreRecorded() {
        for cycle in 0 ..< 10 {
            let start = UInt64(1000 + 1000 * cycle)
            kernel.link.recordTiming(
                cycleStart: start, periodUsecs: 5333, entered: start + 40, left: start + 60, frames: 256)
        }
        #expect(state.pointee.timingsMissed.load(ordering: .relaxed) == 2)
        let statistics = CallbackStatistics(timings: memory.timingRing.consumer)
        statistics.drain()
        let summary = statistics.summary(cyclesMissed: 2)
        #expect(summary.cycles == 8)
        #expect(summary.lateness.max == 40 && summary.execution.p50 == 20)
    }

    // MARK: Port checks

    static let inputs = ["system:playback_1", "system:playback_2", "rec:in_1"]
    static let outputs = ["system:capture_1", "system:capture_2", "player:out_1"]

    @Test("--send and --return take exact names or the first match of a pattern")
    func resolvesPorts() throws {
        #expect(
            try LatencySession.resolvePort(
                "system:playback_2", option: "--send", wanted: .input, inputPorts: Self.inputs,
                outputPorts: Self.outputs) == "system:playback_2")
        #expect(
            try LatencySession.resolvePort(
                "system:playback_*", option: "--send", wanted: .input, inputPorts: Self.inputs,
                outputPorts: Self.outputs) == "system:playback_1")
        #expect(
            try LatencySession.resolvePort(
                "player:*", option: "--return", wanted: .output, inputPorts: Self.inputs, outputPorts: Self.outputs)
                == "player:out_1")
    }

    @Test(
        "an unknown port, or one that points the wrong way, is a usage error that says why",
        arguments: [
            (
                "nosuch:port", "--send", PortDirection.input,
                "--send: no JACK port named 'nosuch:port'; input ports: system:playback_1"
            ),
            (
                "system:capture_1", "--send", .input,
                "--send needs an input port (a destination such as system:playback_1); 'system:capture_1' is an output port"
            ),
            (
                "rec:in_1", "--return", .output,
                "--return needs an output port (a source such as system:capture_1); 'rec:in_1' is an input port"
            ),
            (
                "nosuch:*", "--return", .output,
                "--return: no JACK port named 'nosuch:*'; output ports: system:capture_1"
            ),
        ])
    func refusesPorts(_ request: String, _ option: String, _ wanted: PortDirection, _ message: String) {
        do {
            _ = try LatencySession.resolvePort(
                request, option: option, wanted: wanted, inputPorts: Self.inputs, outputPorts: Self.outputs)
            Issue.record("\(request) was accepted")
        } catch {
            guard case .badPort(let text) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(text.hasPrefix(message), "\(text)")
            #expect(!text.contains("\n"))
        }
    }
}

extension LatencyKernel {
    /// A kernel over test memory (the port handles are never dereferenced without the glue).
    init(
        output: UnsafeMutablePointer<Float>, input: UnsafePointer<Float>, table: UnsafeMutablePointer<Float>,
        period: Int,
        measures: Bool, returns: SPSCRing<Float>, gaps: SPSCRing<DropEvent>,
        counters: UnsafeMutablePointer<LatencyCounters>,
        link: SessionLink
    ) {
        self.init(
            link: link, outputPort: link.client, inputPort: link.client, output: output, input: input,
            signal: UnsafePointer(table), signalPeriod: period, measures: measures, returns: returns.producer,
            gaps: gaps.producer, counters: counters)
    }
}
