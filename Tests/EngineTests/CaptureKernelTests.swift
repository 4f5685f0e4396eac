import DSP
import Foundation
import Realtime
import SoundFile
import Testing

@testable import Engine

/// The capture kernel and the writer thread without a server: periods go in, a file comes out.
/// A full ring drops whole periods, and the writer fills them with silence in place.
@Suite("Capture kernel and writer")
final class CaptureKernelTests {
    /// Take files the tests made (`scratchPath`), removed at the end.
    var scratchPaths: [String] = []
    let channelCount = 2
    let period = 64
    let counters = UnsafeMutablePointer<CaptureCounters>.allocate(capacity: 1)
    let inputs = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 2)
    let ports = UnsafeMutablePointer<OpaquePointer>.allocate(capacity: 2)
    let meters = UnsafeMutablePointer<ChannelMeter>.allocate(capacity: 2)
    let mailbox = LatestValueMailbox(count: 2, initial: ChannelMeter())
    let left = UnsafeMutablePointer<Float>.allocate(capacity: 64)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: 64)
    let samples = SPSCRing<Float>(capacity: 256 * 2)  // 4 periods
    let drops = SPSCRing<DropEvent>(capacity: 8)
    let serverGaps = SPSCRing<DropEvent>(capacity: 2)
    let missedGaps = SPSCRing<DropEvent>(capacity: 4)
    let uncertainGaps = SPSCRing<DropEvent>(capacity: 4)
    /// The session core's memory (a timing ring of 4), as a session would make it.
    let memory = SessionMemory(sampleRate: 48000, timingCapacity: 4)
    var state: UnsafeMutablePointer<SessionState> { memory.state }
    var kernel: CaptureKernel
    var sourceFrame = 0

    init() {
        counters.initialize(to: CaptureCounters())
        meters.initialize(repeating: ChannelMeter(), count: 2)
        inputs.initialize(repeating: UnsafePointer(left), count: 2)
        kernel = Self.makeKernel(
            ports: ports, inputs: inputs, meters: meters, mailbox: mailbox, samples: samples,
            drops: drops, serverGaps: serverGaps, missedGaps: missedGaps, uncertainGaps: uncertainGaps,
            counters: counters, memory: memory, frameLimit: .max)
    }

    static func makeKernel(
        ports: UnsafeMutablePointer<OpaquePointer>, inputs: UnsafeMutablePointer<UnsafePointer<Float>>,
        meters: UnsafeMutablePointer<ChannelMeter>, mailbox: LatestValueMailbox<ChannelMeter>,
        samples: SPSCRing<Float>, drops: SPSCRing<DropEvent>, serverGaps: SPSCRing<DropEvent> = SPSCRing(capacity: 4),
        missedGaps: SPSCRing<DropEvent> = SPSCRing(capacity: 4),
        uncertainGaps: SPSCRing<DropEvent> = SPSCRing(capacity: 4),
        counters: UnsafeMutablePointer<CaptureCounters>,
        memory: SessionMemory, frameLimit: UInt64
    ) -> CaptureKernel {
        var kernel = CaptureKernel(
            link: memory.link(client: OpaquePointer(bitPattern: 0x10)!, readsSystemClock: false),
            channelCount: 2, ports: ports, inputs: inputs, meters: meters,
            meterCoefficients: MeterCoefficients(sampleRate: 48000), meterMailbox: mailbox.writer,
            samples: samples.producer, drops: drops.producer, serverGaps: serverGaps.producer,
            missedGaps: missedGaps.producer, uncertainGaps: uncertainGaps.producer, counters: counters,
            frameLimit: frameLimit, monitor: nil,
            meterCount: 2, recordSources: inputs, recordedChannelCount: 2, suppressor: nil)
        kernel.isTaking = true
        return kernel
    }

    /// A take file's path, removed when the test ends.
    func scratchPath() -> String {
        let path = NSTemporaryDirectory() + "micmon-kernel-\(UUID().uuidString).wav"
        scratchPaths.append(path)
        return path
    }

    deinit {
        for path in scratchPaths { try? FileManager.default.removeItem(atPath: path) }
        counters.deinitialize(count: 1)
        counters.deallocate()
        inputs.deallocate()
        ports.deallocate()
        meters.deallocate()
        left.deallocate()
        right.deallocate()
        idle.deallocate()
        idleInputs.deallocate()
        otherLeft.deallocate()
        otherRight.deallocate()
    }

    /// Source frame i carries +(i+1) on channel 1 and −(i+1) on channel 2: never silence.
    func runPeriod() {
        for i in 0 ..< period {
            left[i] = Float(sourceFrame + i + 1)
            right[i] = -Float(sourceFrame + i + 1)
        }
        inputs[0] = UnsafePointer(left)
        inputs[1] = UnsafePointer(right)
        kernel.process(frameCount: period)
        sourceFrame += period
    }

    func makeWriter(_ path: String) throws -> TakeWriter {
        let file = try SoundFileWriter(
            path: path, format: AudioFileFormat(container: .wav, encoding: .float),
            sampleRate: 48000, channelCount: 2)
        return TakeWriter(
            file: file, samples: samples.consumer, drops: drops.consumer, counters: counters,
            channelCount: 2, wakeInterval: .milliseconds(2))
    }

    func taken() -> UInt64 { counters.pointee.framesTaken.load(ordering: .relaxed) }

    func readBack(_ path: String) throws -> [Float] { try SoundFileReader(path: path).readAllFloats() }

    /// A take of two steady cycles of 64 frames (source 0 and 64 at counters 1000 and 1064),
    /// then `cycles` (given the writer, to wait on between them); waits until `frames` are written
    /// and returns the writer's drops and the file's samples (interleaved, two channels).
    func takeAfterTwoSteadyCycles(
        frames count: UInt64, _ cycles: (TakeWriter) -> Void
    ) throws -> (drops: [DropEvent], frames: [Float]) {
        let path = scratchPath()
        let writer = try makeWriter(path)
        writer.start()
        cycle(at: 1000, source: 0)
        cycle(at: 1064, source: 64)
        waitForWriter(writer, frames: 128)
        cycles(writer)
        waitForWriter(writer, frames: count)
        let result = writer.finish()
        return (result.drops, try readBack(path))
    }

    /// Checks the first channel of interleaved stereo `frames`, up to `count` frames, against
    /// `expected(frame)`; records the first mismatch only.
    func expectFirstChannel(
        _ frames: [Float], upTo count: Int, sourceLocation: SourceLocation = #_sourceLocation,
        _ expected: (Int) -> Float
    ) {
        for frame in 0 ..< min(count, frames.count / 2) where frames[2 * frame] != expected(frame) {
            Issue.record(
                "frame \(frame): \(frames[2 * frame]); expected \(expected(frame))", sourceLocation: sourceLocation)
            break
        }
    }

    @Test("a full ring drops whole periods; the file keeps its timeline with silence there")
    func dropsBecomeSilenceInPlace() throws {
        let path = scratchPath()
        let writer = try makeWriter(path)
        for _ in 0 ..< 6 { runPeriod() }  // 4 fit, 2 are dropped (writer not running yet)
        let framesDroppedNow = counters.pointee.framesDropped.load(ordering: .relaxed)
        #expect(framesDroppedNow == 128)
        writer.start()
        let deadline = Date().addingTimeInterval(10)
        while writer.framesWritten.load(ordering: .relaxed) < 256 && Date() < deadline { usleep(1000) }
        runPeriod()  // fits: reports the pending drop first
        runPeriod()
        let result = writer.finish()
        #expect(result.failure == nil)
        #expect(result.drops == [DropEvent(startFrame: 256, frameCount: 128)])
        #expect(result.framesWritten == 512)

        let frames = try readBack(path)
        #expect(frames.count == 512 * 2)
        for frame in 0 ..< 512 {
            let expected: Float = (256 ..< 384).contains(frame) ? 0 : Float(frame + 1)
            if frames[2 * frame] != expected || frames[2 * frame + 1] != -expected {
                Issue.record("frame \(frame): \(frames[2 * frame]), \(frames[2 * frame + 1]); expected ±\(expected)")
                break
            }
        }
    }

    @Test("while the take runs, the header catches up with the frames written (what a kill -9 leaves)")
    func headerFollowsTheTake() throws {
        let path = scratchPath()
        let file = try SoundFileWriter(
            path: path, format: AudioFileFormat(container: .wav, encoding: .float),
            sampleRate: 48000, channelCount: 2)
        let writer = TakeWriter(
            file: file, samples: samples.consumer, drops: drops.consumer, counters: counters,
            channelCount: 2, wakeInterval: .milliseconds(2), headerInterval: .milliseconds(20))
        for _ in 0 ..< 4 { runPeriod() }
        writer.start()
        // The file is still open for writing: only the header makes these frames visible.
        var readable: Int64 = 0
        let deadline = Date().addingTimeInterval(10)
        while readable < 256 && Date() < deadline {
            usleep(5000)
            readable = (try? SoundFileReader(path: path))?.frameCount ?? 0
        }
        #expect(readable == 256)
        let frames = try readBack(path)
        #expect(frames.count == 256 * 2)
        #expect(frames.first == 1 && frames.last == -256)
        let result = writer.finish()
        #expect(result.framesWritten == 256)
    }

    @Test("a sample-rate change raises the flag that ends the take; the same rate does not")
    func sampleRateChangeEndsTheTake() {
        let context = UnsafeMutableRawPointer(state)
        // The JACK notification for the rate the session was prepared for (48 kHz): nothing to do.
        #expect(sessionSampleRate(48000, context) == 0)
        let afterSameRate = state.pointee.sampleRateChanged.load(ordering: .acquiring)
        #expect(!afterSameRate)
        // Another rate: the session sees the flag, stops, and reports it as a rate change (exit 78).
        #expect(sessionSampleRate(44100, context) == 0)
        let afterNewRate = state.pointee.sampleRateChanged.load(ordering: .acquiring)
        #expect(afterNewRate)
    }

    @Test("a cycle that reads another rate at its start ends the take itself, taking nothing of it")
    func cycleAtAnotherRateTakesNothing() {
        runPeriod()
        let takenBefore = taken()
        #expect(takenBefore == UInt64(period))
        // The rate the session was prepared for, read at a cycle's start: nothing changes.
        kernel.link.noteSampleRate(48000)
        runPeriod()
        #expect(taken() == 2 * UInt64(period))
        // PipeWire's libjack may run a cycle at the new rate before the sample-rate callback:
        // the glue's read at the cycle start raises the flag, and that cycle is not taken.
        kernel.link.noteSampleRate(44100)
        runPeriod()
        let raised = state.pointee.sampleRateChanged.load(ordering: .acquiring)
        #expect(raised)
        #expect(state.pointee.changedSampleRate.load(ordering: .relaxed) == 44100)
        #expect(taken() == 2 * UInt64(period))
    }

    @Test("a drop at the end of the take is written as trailing silence")
    func trailingDropIsFilled() throws {
        let path = scratchPath()
        let writer = try makeWriter(path)
        for _ in 0 ..< 5 { runPeriod() }  // the 5th does not fit
        writer.start()
        let result = writer.finish()
        #expect(result.drops == [DropEvent(startFrame: 256, frameCount: 64)])
        let frames = try readBack(path)
        #expect(frames.count == 320 * 2)
        #expect(frames[2 * 255] == 256)
        #expect(frames[(2 * 256)...].allSatisfy { $0 == 0 })
    }

    @Test("a duration takes exactly that many frames, even mid-period")
    func frameLimitIsExact() {
        kernel = Self.makeKernel(
            ports: ports, inputs: inputs, meters: meters, mailbox: mailbox, samples: samples,
            drops: drops, counters: counters, memory: memory, frameLimit: 100)
        runPeriod()
        let completeEarly = counters.pointee.isComplete.load(ordering: .relaxed)
        #expect(!completeEarly)
        runPeriod()
        runPeriod()
        let complete = counters.pointee.isComplete.load(ordering: .relaxed)
        #expect(complete)
        #expect(taken() == 100)
        #expect(samples.consumer.availableToRead() == 200)
        #expect(meters[0].frameCount == 100)
    }

    @Test("the first armed cycle is skipped, then every cycle is taken")
    func armingSkipsOneCycle() {
        kernel.isTaking = false
        runPeriod()
        #expect(taken() == 0)
        counters.pointee.isArmed.store(true, ordering: .relaxed)
        runPeriod()
        #expect(taken() == 0)
        runPeriod()
        #expect(taken() == 64)
        let cyclesNow = state.pointee.cycles.load(ordering: .relaxed)
        #expect(cyclesNow == 3)
    }

    @Test("cycle timings reach the statistics; a full timing ring counts what it missed")
    func timingsAreRecorded() {
        let statistics = CallbackStatistics(timings: memory.timingRing.consumer)
        // Cycle started at 1000 µs, callback entered at 1100, left at 1130; period 667 µs.
        for cycle in 0 ..< 6 {
            let start = UInt64(1000 + 667 * cycle)
            kernel.link.recordTiming(
                cycleStart: start, periodUsecs: 666.7, entered: start + 100, left: start + 130, frames: 32)
        }
        let missed = state.pointee.timingsMissed.load(ordering: .relaxed)
        #expect(missed == 2)  // the ring holds 4
        statistics.drain()
        let summary = statistics.summary(cyclesMissed: missed)
        #expect(summary.cycles == 4)
        #expect(summary.lateness.p50 == 100 && summary.lateness.max == 100)
        #expect(summary.execution.p99 == 30 && summary.execution.mean == 30)
        #expect(summary.periodFrames == 32)
        #expect(abs(summary.dspLoadPercent - 30 / 666.7 * 100) < 1e-3)
        // A server that cannot tell the cycle start gives lateness 0, not a wrapped number.
        kernel.link.recordTiming(cycleStart: 0, periodUsecs: 0, entered: 5000, left: 5010, frames: 32)
        statistics.drain()
        #expect(statistics.lateness.maximum == 100)
    }

    @Test("an overrun (late + ran > period) is listed with its cycle start")
    func overrunsAreListed() {
        let statistics = CallbackStatistics(timings: memory.timingRing.consumer)
        kernel.link.recordTiming(cycleStart: 1000, periodUsecs: 667, entered: 1600, left: 1700, frames: 32)
        kernel.link.recordTiming(cycleStart: 2000, periodUsecs: 667, entered: 2010, left: 2020, frames: 32)
        statistics.drain()
        #expect(statistics.overrunCycleStarts == [1000])
    }

    /// One cycle at server frame counter `counter`, its inputs carrying the source's frames from
    /// `source` on (+(i+1) on channel 1, −(i+1) on channel 2), with the driver's stamp.
    /// One cycle as the glue runs it off PipeWire: the period staged, then the counter read again
    /// before and after the copy (`counterBeforeCopy`, `counterAfterCopy`: the same counter unless
    /// given) settles its commit.
    /// `sourceAtEnd`: the source's frame whose period is in the input buffers by the cycle's end
    /// (the source wrote its next period into them while this cycle ran late). `tornLeft`: the
    /// left input from frame `from` on holds the period from `source` on instead (a copy torn
    /// within one input). `clippedLeftFrom`: the left input is 1 (clipped) from that frame on.
    func cycle(
        at counter: UInt32, source: Int, frames: Int = 64, driverStamp: Float = 0, counterBeforeCopy: UInt32? = nil,
        counterAfterCopy: UInt32? = nil, sourceAtEnd: Int? = nil, sourceOnRight: Int? = nil, silentRight: Bool = false,
        tornLeft: (from: Int, source: Int)? = nil, clippedLeftFrom: Int? = nil
    ) {
        func fill(_ source: Int, right rightSource: Int? = nil) {
            for i in 0 ..< frames {
                left[i] = Float(source + i + 1)
                right[i] = silentRight ? 0 : -Float((rightSource ?? source) + i + 1)
                if let tornLeft, i >= tornLeft.from { left[i] = Float(tornLeft.source + i + 1) }
                if let clippedLeftFrom, i >= clippedLeftFrom { left[i] = 1 }
            }
        }
        fill(source, right: sourceOnRight)
        inputs[0] = UnsafePointer(left)
        inputs[1] = UnsafePointer(right)
        kernel.process(
            frameCount: frames, cycleStartFrame: counter, knowsCycleFrame: true, driverStamp: driverStamp,
            defersCommit: true)
        if let sourceAtEnd { fill(sourceAtEnd) }
        if kernel.stagedFrames > 0 || kernel.timeline.isHolding {
            kernel.finishCycle(
                counterBeforeCopy: counterBeforeCopy ?? counter,
                counterAfterCopy: counterAfterCopy ?? counterBeforeCopy ?? counter, knowsCounter: true)
        }
    }

    /// Waits (up to 5 s) until the writer has written everything committed so far.
    func waitForWriter(_ writer: TakeWriter, frames: UInt64) {
        let deadline = Date().addingTimeInterval(5)
        while writer.framesWritten.load(ordering: .relaxed) < frames && Date() < deadline { usleep(1000) }
    }

    /// micmon's own loss: the server's counter ran a period past micmon (the source went on) and
    /// did not give it back, so the take holds silence exactly there and counts it dropped; a
    /// late counter read (+2N then +0, the data contiguous) is jitter: nothing inserted, no gap.
    @Test("the counter running past micmon is silence in place, counted; a +2N/+0 read is jitter, not a gap")
    func missedFramesAreSilenceInPlace() throws {
        let path = scratchPath()
        let writer = try makeWriter(path)
        writer.start()
        cycle(at: 1000, source: 0)
        cycle(at: 1064, source: 64)
        cycle(at: 1192, source: 192)  // micmon missed counter 1128: source frames 128 ..< 192
        cycle(at: 1256, source: 256)
        waitForWriter(writer, frames: 128)
        cycle(at: 1320, source: 320)  // not given back within two cycles: a loss, placed at 128
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 64)
        waitForWriter(writer, frames: 384)
        cycle(at: 1448, source: 384)  // read the next cycle's counter late ...
        cycle(at: 1448, source: 448)  // ... and given back at once: jitter
        cycle(at: 1512, source: 512)
        let result = writer.finish()
        #expect(counters.pointee.missedGaps.load(ordering: .relaxed) == 1)
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 64)
        #expect(counters.pointee.framesDropped.load(ordering: .relaxed) == 64)
        #expect(counters.pointee.timelineJitter.load(ordering: .relaxed) == 1)
        #expect(counters.pointee.serverGaps.load(ordering: .relaxed) == 0)
        #expect(taken() == 576)
        #expect(result.drops == [DropEvent(startFrame: 128, frameCount: 64)])
        let logged = missedGaps.consumer.readableSlices()
        #expect(logged.count == 1 && logged[0] == DropEvent(startFrame: 128, frameCount: 64))
        let frames = try readBack(path)
        #expect(frames.count == 576 * 2)
        for frame in 0 ..< 576 {
            let expected: Float = (128 ..< 192).contains(frame) ? 0 : Float(frame + 1)
            if frames[2 * frame] != expected || frames[2 * frame + 1] != -expected {
                Issue.record("frame \(frame): \(frames[2 * frame]); expected ±\(expected)")
                break
            }
        }
    }

    /// An asynchronous jackd2 now and then wakes micmon so late that the counter it reads is the
    /// next cycle's and so are the data (its source had already run again); the cycle after
    /// reads that position again with the very same samples. The period between was lost:
    /// silence in place before the held period, the repeat discarded, no jitter. Before, it was
    /// jitter: the file held the next period twice and reported nothing.
    @Test(
        "jackd2: +2N with the next period's data, then +0 with the same samples, is a loss of N, the repeat discarded")
    func repeatedPeriodIsALoss() throws {
        try expectReadAheadLosesOnePeriod {
            cycle(at: 1192, source: 192)  // late: the next counter, the next period (128 ..< 192 lost)
        }
    }

    /// Two cycles of 64 frames, then `lateCycle` (which takes the period at 192 where 128 was
    /// due), then the same samples at counter 1192 and the next period: the period at 128 is
    /// lost (silence, one drop, one late cycle), the repeat discarded, no jitter.
    private func expectReadAheadLosesOnePeriod(_ lateCycle: () -> Void) throws {
        let take = try takeAfterTwoSteadyCycles(frames: 320) { _ in
            lateCycle()
            cycle(at: 1192, source: 192)  // the same samples at the next position
            cycle(at: 1256, source: 256)
        }
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 64)
        #expect(counters.pointee.timelineJitter.load(ordering: .relaxed) == 0)
        #expect(counters.pointee.lateCycles.load(ordering: .relaxed) == 1)
        #expect(taken() == 320)
        #expect(take.drops == [DropEvent(startFrame: 128, frameCount: 64)])
        expectFrames(take.frames, count: 320, silent: 128 ..< 192)
    }

    /// JACK may change the buffer size before the first cycle and at any cycle after: the kernel
    /// takes each cycle's own frame count (its memory is made for the largest period), so a take
    /// whose periods are 32, 64, 16 and 64 frames from its first cycle on is exact, with no gap,
    /// jitter or loss judged across the changes.
    @Test("the period may change before the first cycle and at any cycle: every frame in place, nothing judged")
    func periodChangesFromTheFirstCycle() throws {
        let path = scratchPath()
        let writer = try makeWriter(path)
        writer.start()
        var counter: UInt32 = 5000
        for frames in [32, 64, 16, 64, 64] {
            cycle(at: counter, source: sourceFrame, frames: frames)
            sourceFrame += frames
            counter &+= UInt32(frames)
        }
        waitForWriter(writer, frames: 240)
        let result = writer.finish()
        #expect(taken() == 240)
        #expect(result.drops.isEmpty)
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 0)
        #expect(counters.pointee.timelineJitter.load(ordering: .relaxed) == 0)
        #expect(counters.pointee.serverGaps.load(ordering: .relaxed) == 0)
        try expectFile(path, frames: 240, silent: 0 ..< 0)
    }

    /// The same on a jackd2 -S at 32 frames under load (`micmon-bench --only soak`): the late
    /// cycle read the counter one period ahead (+2N) and the source's period two ahead, and the
    /// next cycle (+N) brought that period again. Both periods between are lost; the held
    /// samples belong to the repeat's position. Before, the held samples sat a period early and
    /// the repeat after them, one loss of a period reported.
    @Test("jackd2: +2N reading the period two ahead, then +N with the same samples, is a loss of 2N")
    func repeatAfterAnAdvanceIsALoss() throws {
        let take = try takeAfterTwoSteadyCycles(frames: 384) { _ in
            cycle(at: 1192, source: 256)  // the counter one period on, the data two (128 ..< 256 lost)
            cycle(at: 1256, source: 256)  // the same samples again
            cycle(at: 1320, source: 320)
        }
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 128)
        #expect(counters.pointee.timelineJitter.load(ordering: .relaxed) == 0)
        #expect(taken() == 384)
        #expect(take.drops == [DropEvent(startFrame: 128, frameCount: 128)])
        expectFrames(take.frames, count: 384, silent: 128 ..< 256)
    }

    /// jackd -S at 32 frames under load (`micmon-bench --only soak`, traced): the server began
    /// the next cycle while micmon was still reading, at a steady counter, and the source wrote
    /// its next period into micmon's inputs meanwhile; the next cycle brought that period again.
    /// The counter read after the inputs shows the move: the period is held, and the repeat makes
    /// it the next one's, so the cycle's own period is lost, placed before it. Before, the take
    /// held the next period a period early and then again, nothing reported.
    @Test("jackd2: a counter that moved on while the cycle read, then the same samples, loses the cycle's own period")
    func counterMovedThenRepeatIsALoss() throws {
        try expectReadAheadLosesOnePeriod {
            cycle(at: 1128, source: 192, counterBeforeCopy: 1192)  // steady counter, the next period's samples
            #expect(kernel.timeline.isHolding)
        }
    }

    /// The same move of the counter while the cycle read its own period (a client resumed just
    /// before the next cycle's start, as on an async jackd2): the next cycle gives the move back
    /// with the next period's samples. Jitter: the take is exact, nothing lost.
    @Test("jackd2: a counter that moved on while the cycle read its own period, then given back, is jitter")
    func counterMovedThenGivenBackIsJitter() throws {
        try expectLateCycleIsJitter {
            cycle(at: 1128, source: 128, counterBeforeCopy: 1192)
        }
    }

    /// Two cycles of 64 frames, then `lateCycle` (which takes its own period at 128 while the
    /// counter moves on), then the next periods in place: jitter, the take exact, nothing lost.
    private func expectLateCycleIsJitter(_ lateCycle: () -> Void) throws {
        let take = try takeAfterTwoSteadyCycles(frames: 320) { _ in
            lateCycle()
            cycle(at: 1192, source: 192)
            cycle(at: 1256, source: 256)
        }
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 0)
        #expect(counters.pointee.timelineJitter.load(ordering: .relaxed) == 1)
        #expect(taken() == 320)
        #expect(take.drops.isEmpty)
        expectFrames(take.frames, count: 320, silent: 0 ..< 0)
    }

    /// The same move, while the source wrote its next period into the very input buffers after
    /// the cycle had taken its own (a late cycle on an asynchronous jackd2, whose source runs
    /// beside it): the next cycle's samples are those the buffers held at the cycle's end, and
    /// they are not a repeat of the period taken. Jitter, the take exact. Before, the held
    /// period's fingerprint was of the buffers at the cycle's end: the next cycle "repeated" it,
    /// the take lost its next period unreported and held silence, reported as a loss, a period
    /// early.
    @Test("jackd2: a period overwritten in the buffers after the late cycle took it is no repeat")
    func overwrittenAfterTheCopyIsNoRepeat() throws {
        try expectLateCycleIsJitter {
            cycle(at: 1128, source: 128, counterBeforeCopy: 1192, sourceAtEnd: 192)
            #expect(kernel.timeline.isHolding)
        }
    }

    /// micmon stopped inside a cycle after it copied its period (SIGSTOP, a preempted thread):
    /// the counter read after the copy has run on by the stop, and the source has written later
    /// periods into the buffers. The copy is the cycle's own period, committed in place; the
    /// stop is a loss after it. Before, the period was held and the loss placed before it: the
    /// period stood a stop late.
    @Test("jackd2: a cycle stopped after its copy keeps its own period; the stop is lost after it")
    func stopAfterTheCopyKeepsTheCyclesPeriod() throws {
        let take = try takeAfterTwoSteadyCycles(frames: 1024) { _ in
            cycle(at: 1128, source: 128, counterAfterCopy: 1768, sourceAtEnd: 704)
            #expect(!kernel.timeline.isHolding)
            cycle(at: 1832, source: 832)
            cycle(at: 1896, source: 896)
            cycle(at: 1960, source: 960)
        }
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 640)
        #expect(take.drops == [DropEvent(startFrame: 192, frameCount: 640)])
        expectFrames(take.frames, count: 1024, silent: 192 ..< 832)
    }

    /// The counter moved on during the copy while the buffers still hold what was copied: the
    /// copy may be a later period than the cycle's (the thread stopped just before it), so it is
    /// held, and a repeat in the next cycle makes the cycle's own period a loss, as for a move
    /// before the copy.
    @Test("jackd2: a counter that moved during the copy, the buffers unchanged, holds the period")
    func movedDuringTheCopyHolds() throws {
        try expectReadAheadLosesOnePeriod {
            cycle(at: 1128, source: 192, counterAfterCopy: 1192)
            #expect(kernel.timeline.isHolding)
        }
    }

    /// The fingerprint of a period's copy in the ring is that of the same samples in the input
    /// buffers: whole, split by the ring's wrap, and all in the second piece; only the inputs
    /// count (the clean channel after them does not).
    @Test("a period's fingerprint from its interleaved copy equals the inputs' fingerprint, wrapped or not")
    func ringFingerprintMatchesTheInputs() throws {
        for i in 0 ..< period {
            left[i] = Float(i) * 0.25 - 3
            right[i] = i == 5 ? .nan : -Float(i * i)
        }
        inputs[0] = UnsafePointer(left)
        inputs[1] = UnsafePointer(right)
        let live = kernel.inputsFingerprint(frameCount: period)
        let stride = 3  // in_1, in_2, clean
        let copy = UnsafeMutableBufferPointer<Float>.allocate(capacity: period * stride)
        defer { copy.deallocate() }
        for i in 0 ..< period {
            copy[i * stride] = left[i]
            copy[i * stride + 1] = right[i]
            copy[i * stride + 2] = 1000 + Float(i)
        }
        for split in [period, 17, 0] {
            let first = UnsafeMutableBufferPointer(rebasing: copy[0 ..< split * stride])
            let second = UnsafeMutableBufferPointer(rebasing: copy[split * stride ..< period * stride])
            let ring = CaptureKernel.periodFingerprint(
                first: first, second: second, frames: period, stride: stride, inputCount: 2)
            #expect(ring.hash == live.hash && ring.varies == live.varies, "split at \(split)")
        }
        copy[7 * stride + 1] = 0.5
        let changed = CaptureKernel.periodFingerprint(
            first: copy, second: UnsafeMutableBufferPointer(start: nil, count: 0), frames: period, stride: stride,
            inputCount: 2)
        #expect(changed.hash != live.hash)
    }

    /// micmon back from a stop (the counter 640 frames on), and the next cycle 64 frames further
    /// on again: two excesses pending at once, settled together as micmon's loss. Each goes where
    /// it appeared: the stop's before the first period taken after it, the later one after that
    /// period. Before, both went where the first appeared, and the period between stood 64
    /// frames late.
    @Test("jackd2: a second excess while the first is held is placed after the period between them")
    func laterExcessIsPlacedWhereItAppeared() throws {
        let take = try takeAfterTwoSteadyCycles(frames: 1088) { writer in
            cycle(at: 1768, source: 768)  // back from the stop: 640 frames on
            cycle(at: 1896, source: 896)  // 64 more: the cycle at 1832 missed as well
            cycle(at: 1960, source: 960)
            waitForWriter(writer, frames: 960)
            cycle(at: 2024, source: 1024)
        }
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 704)
        #expect(counters.pointee.missedGaps.load(ordering: .relaxed) == 2)
        #expect(
            take.drops == [DropEvent(startFrame: 128, frameCount: 640), DropEvent(startFrame: 832, frameCount: 64)])
        #expect(taken() == 1088)
        #expect(take.frames.count == 1088 * 2)
        expectFirstChannel(take.frames, upTo: 1088) { [128 ..< 768, 832 ..< 896].anyContains($0) ? 0 : Float($0 + 1) }
    }

    /// jackd -S at 32 frames after a host stall (`micmon-bench --only soak`, traced): a cycle came
    /// back with an excess and its own period (held), the next with a further excess, and while
    /// it copied, the source wrote the period after it (the counter moved on); the cycle after
    /// that brought the same samples again. The repeat shows the last held period to be the
    /// repeating cycle's: the second excess and that cycle's own period were lost just before
    /// it, the first excess where it appeared, before the first held period. Before, all of it
    /// went where the first appeared, and the first held period stood three periods late.
    @Test("jackd2: a repeat of the last of two held periods places the loss since its cycle just before it")
    func repeatOfTheLastHeldPeriodPlacesItsLossBeforeIt() throws {
        let take = try takeAfterTwoSteadyCycles(frames: 576) { _ in
            cycle(at: 1192, source: 192)  // 1128 missed; its own period, held
            cycle(at: 1384, source: 448, counterAfterCopy: 1448)  // 1256, 1320 missed; read 1448's period
            cycle(at: 1448, source: 448)  // the same samples again: 1384's own period was lost
            cycle(at: 1512, source: 512)
        }
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 256)
        #expect(counters.pointee.missedGaps.load(ordering: .relaxed) == 2)
        #expect(
            take.drops == [DropEvent(startFrame: 128, frameCount: 64), DropEvent(startFrame: 256, frameCount: 192)])
        #expect(taken() == 576)
        #expect(take.frames.count == 576 * 2)
        expectFirstChannel(take.frames, upTo: 576) { [128 ..< 192, 256 ..< 448].anyContains($0) ? 0 : Float($0 + 1) }
    }

    /// jackd -S at 32 frames after a host stall (`micmon-bench --only soak`, traced): a cycle
    /// entered a period late (+2N) ran beside its source, which was writing the next period into
    /// the same buffers, so the copy held that period on some channels and the cycle's own on
    /// the others; the next cycle (+0) brought the next period whole. The torn copy is that
    /// period in part: its own period is lost, placed before it, and the whole next period goes
    /// where the torn copy stood. Before, the +0 read as a give-back: jitter, the torn period in
    /// the file, nothing reported.
    @Test("jackd2: a held copy torn between two periods is the next one's in part: its own is lost")
    func tornHeldCopyIsALoss() throws {
        try expectReadAheadLosesOnePeriod {
            cycle(at: 1192, source: 192, sourceOnRight: 128)  // +2N: left the next period, right its own
        }
    }

    /// A tear within one input (`micmon-bench --only soak --soak-rate 192000 --soak-channels 16`,
    /// traced): the late cycle (+2N) copied its own period, but the source wrote the next period
    /// into input 0 while it was copied, so the copy's input 0 holds the next period from frame
    /// 16 on; every other input is the cycle's own. The next cycle (+0) brings the next period.
    /// Those frames of the cycle's own period are gone from the buffers: it is lost, in place,
    /// and the next period whole where the copy stood. Before, the +0 read as a give-back and
    /// the file held the torn samples, nothing reported.
    @Test("jackd2: a held copy torn within one input is the next period's in part: its own is lost")
    func tornWithinAnInputIsALoss() throws {
        try expectReadAheadLosesOnePeriod {
            cycle(at: 1192, source: 128, tornLeft: (from: 48, source: 192))  // +2N: the left's last 16 the next
        }
    }

    /// A run of equal samples that do not vary (clipping at full scale at the same places of
    /// two periods) says nothing of a tear: the +0 after +2N is a give-back, the take exact.
    @Test("jackd2: the same clipped run in two periods is no tear")
    func clippedRunIsNoTear() throws {
        let take = try takeAfterTwoSteadyCycles(frames: 320) { _ in
            cycle(at: 1192, source: 128, clippedLeftFrom: 32)  // late: the counter one period on, its own period
            cycle(at: 1192, source: 192, clippedLeftFrom: 32)  // +0: given back
            cycle(at: 1256, source: 256)
        }
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 0)
        #expect(counters.pointee.timelineJitter.load(ordering: .relaxed) == 1)
        #expect(take.drops.isEmpty)
        expectFirstChannel(take.frames, upTo: 320) { (128 ..< 256).contains($0) && $0 % 64 >= 32 ? 1 : Float($0 + 1) }
    }

    /// The same tear at a steady counter: the server began the next cycle during the copy (the
    /// counter read after it moved on), and the source wrote its next period meanwhile, so the
    /// copy holds it on some channels; by the cycle's end the buffers hold it whole. The copy is
    /// held, and the next cycle's partial repeat makes the cycle's own period a loss, in place.
    /// Before, the copy differed from the buffers at the end, so it was committed as the cycle's
    /// own: a period of two halves, nothing reported.
    @Test("jackd2: a copy torn while the counter moved on is held, and the next period's repeat makes it a loss")
    func tornCopyAtASteadyCounterIsALoss() throws {
        try expectReadAheadLosesOnePeriod {
            cycle(at: 1128, source: 192, counterAfterCopy: 1192, sourceAtEnd: 192, sourceOnRight: 128)
        }
    }

    /// A held copy that matches the next cycle's inputs only on a channel whose samples never
    /// vary (silence) says nothing of a tear: the +0 after +2N, with the varying channel its own
    /// period, is a give-back (jitter), the take exact.
    @Test("jackd2: a held copy that matches the next period only where the samples do not vary is no tear")
    func constantChannelIsNoTear() throws {
        let path = scratchPath()
        let writer = try makeWriter(path)
        writer.start()
        cycle(at: 1000, source: 0, silentRight: true)
        cycle(at: 1064, source: 64, silentRight: true)
        waitForWriter(writer, frames: 128)
        cycle(at: 1192, source: 128, silentRight: true)  // late: the counter one period on, its own period
        cycle(at: 1192, source: 192, silentRight: true)  // +0: given back
        cycle(at: 1256, source: 256, silentRight: true)
        waitForWriter(writer, frames: 320)
        let result = writer.finish()
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 0)
        #expect(counters.pointee.timelineJitter.load(ordering: .relaxed) == 1)
        #expect(result.drops.isEmpty)
        let frames = try readBack(path)
        #expect(frames.count == 320 * 2)
        expectFirstChannel(frames, upTo: 320) { Float($0 + 1) }
    }

    /// An excess in each of three cycles in a row: the confirmation window settles the first two
    /// on the third, whose own excess then starts a hold of its own, so no hold ever carries more
    /// than one later excess. Each loss goes where it appeared, and the take keeps the server's
    /// clock throughout.
    @Test("jackd2: three excesses in a row are three losses, each where it appeared")
    func threeExcessesInARowArePlacedEach() throws {
        let take = try takeAfterTwoSteadyCycles(frames: 704) { writer in
            cycle(at: 1192, source: 192)
            cycle(at: 1320, source: 320)
            cycle(at: 1448, source: 448)  // the first two settle; this one's excess is a new hold
            waitForWriter(writer, frames: 384)
            cycle(at: 1512, source: 512)
            cycle(at: 1576, source: 576)
            waitForWriter(writer, frames: 640)
            cycle(at: 1640, source: 640)
        }
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 192)
        #expect(counters.pointee.missedGaps.load(ordering: .relaxed) == 3)
        #expect(
            take.drops == [
                DropEvent(startFrame: 128, frameCount: 64), DropEvent(startFrame: 256, frameCount: 64),
                DropEvent(startFrame: 384, frameCount: 64),
            ])
        #expect(take.frames.count == 704 * 2)
        expectFirstChannel(take.frames, upTo: 704) {
            [128 ..< 192, 256 ..< 320, 384 ..< 448].anyContains($0) ? 0 : Float($0 + 1)
        }
    }

    /// Staged periods reach the writer only once the cycle's end commits them.
    @Test("a staged period is committed by the cycle's end, not before")
    func stagedPeriodWaitsForTheCycleEnd() throws {
        for i in 0 ..< period {
            left[i] = Float(i + 1)
            right[i] = -Float(i + 1)
        }
        inputs[0] = UnsafePointer(left)
        inputs[1] = UnsafePointer(right)
        kernel.process(frameCount: period, cycleStartFrame: 1000, knowsCycleFrame: true, defersCommit: true)
        #expect(kernel.stagedFrames == period)
        #expect(samples.consumer.availableToRead() == 0)
        kernel.finishCycle(counterBeforeCopy: 1000, counterAfterCopy: 1000, knowsCounter: true)
        #expect(kernel.stagedFrames == 0)
        #expect(samples.consumer.availableToRead() == period * 2)
        // A cycle whose end is missed: the next cycle commits what it staged.
        kernel.process(frameCount: period, cycleStartFrame: 1064, knowsCycleFrame: true, defersCommit: true)
        kernel.process(frameCount: period, cycleStartFrame: 1128, knowsCycleFrame: true, defersCommit: true)
        #expect(samples.consumer.availableToRead() == period * 4)
    }

    /// Every period of a silent port is the same: a +2N/+0 pair of silence stays jitter.
    @Test("jackd2: a +2N/+0 pair of digital silence is jitter (the samples cannot tell a repeat)")
    func silentRepeatIsJitter() throws {
        for counter: UInt32 in [1000, 1064, 1192, 1192, 1256] {
            left.update(repeating: 0, count: period)
            right.update(repeating: 0, count: period)
            inputs[0] = UnsafePointer(left)
            inputs[1] = UnsafePointer(right)
            kernel.process(frameCount: period, cycleStartFrame: counter, knowsCycleFrame: true)
        }
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 0)
        #expect(counters.pointee.timelineJitter.load(ordering: .relaxed) == 1)
        #expect(taken() == 320)
    }

    /// A graph-wide gap: the counter jumped when the driver itself reported being late (its
    /// stamp changed) by as much as the jump (1.4 ms: 64 frames), so every client lost those
    /// cycles and the source rendered nothing for them: counted and logged, nothing inserted,
    /// not a drop.
    @Test("a jump the driver's own xrun accounts for is a graph-wide server gap: logged, nothing inserted")
    func driverXrunIsGraphWide() throws {
        let path = scratchPath()
        let writer = try makeWriter(path)
        writer.start()
        cycle(at: 1000, source: 0)
        cycle(at: 1064, source: 64)
        cycle(at: 1192, source: 128, driverStamp: 1400)  // the driver was late: a period lost for all
        cycle(at: 1256, source: 192, driverStamp: 1400)
        waitForWriter(writer, frames: 128)
        cycle(at: 1320, source: 256, driverStamp: 1400)
        let result = writer.finish()
        #expect(counters.pointee.serverGaps.load(ordering: .relaxed) == 1)
        #expect(counters.pointee.framesSkippedByServer.load(ordering: .relaxed) == 64)
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 0)
        #expect(counters.pointee.framesDropped.load(ordering: .relaxed) == 0)
        #expect(result.drops.isEmpty)
        let gaps = serverGaps.consumer.readableSlices()
        #expect(gaps.count == 1 && gaps[0] == DropEvent(startFrame: 128, frameCount: 64))
        let frames = try readBack(path)
        #expect(frames.count == 320 * 2)
        for frame in 0 ..< 320 where frames[2 * frame] != Float(frame + 1) {
            Issue.record("frame \(frame): \(frames[2 * frame])")
            break
        }
    }

    /// A take that stops while the judge holds an excess settles it on the stop cycle: the
    /// held periods reach the file, after the loss's silence.
    @Test("stopping while an excess is held settles it: held frames are written after the silence")
    func stopSettlesWhatIsHeld() throws {
        let path = scratchPath()
        let writer = try makeWriter(path)
        writer.start()
        cycle(at: 1000, source: 0)
        cycle(at: 1064, source: 64)
        cycle(at: 1192, source: 192)  // held
        state.pointee.stopRequested.store(true, ordering: .releasing)
        cycle(at: 1256, source: 256)  // the stop cycle: judged, settled, nothing more taken
        let stopped = state.pointee.hasStopped.load(ordering: .acquiring)
        #expect(stopped)
        let result = writer.finish()
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 64)
        #expect(result.drops == [DropEvent(startFrame: 128, frameCount: 64)])
        let frames = try readBack(path)
        #expect(frames.count == 256 * 2)
        expectFirstChannel(frames, upTo: 256) { (128 ..< 192).contains($0) ? 0 : Float($0 + 1) }
    }
    /// PipeWire's counter jumps while the graph re-clocks for a new rate: an excess held when the
    /// rate changes is not judged. Before, the stop settled it as micmon's loss: 3200 frames of
    /// silence inserted at the end of a take whose witness lacked one period there.
    @Test("an excess held when the rate changes is uncertain, nothing inserted; the held period is written")
    func rateChangeReleasesTheHoldUnjudged() throws {
        let path = scratchPath()
        let writer = try makeWriter(path)
        writer.start()
        cycle(at: 1000, source: 0)
        cycle(at: 1064, source: 64)
        cycle(at: 1192, source: 192)  // held: the counter ran a period ahead
        kernel.link.noteSampleRate(44100)
        cycle(at: 90_000, source: 256)  // the first cycle at the new rate: nothing taken
        state.pointee.stopRequested.store(true, ordering: .releasing)
        cycle(at: 90_128, source: 320)
        let result = writer.finish()
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 0)
        #expect(counters.pointee.framesDropped.load(ordering: .relaxed) == 0)
        #expect(result.drops.isEmpty)
        #expect(counters.pointee.uncertainGaps.load(ordering: .relaxed) == 1)
        #expect(counters.pointee.framesUncertain.load(ordering: .relaxed) == 64)
        let logged = uncertainGaps.consumer.readableSlices()
        #expect(logged.count == 1 && logged[0] == DropEvent(startFrame: 128, frameCount: 64))
        let frames = try readBack(path)
        #expect(frames.count == 192 * 2)
        expectFirstChannel(frames, upTo: 192) { Float($0 < 128 ? $0 + 1 : $0 + 64 + 1) }
    }

    /// PipeWire's idle buffers (one per input) and a second pair of period buffers: its nodes
    /// alternate two buffers by period.
    let idle = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 64)
    let idleInputs = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 2)
    let otherLeft = UnsafeMutablePointer<Float>.allocate(capacity: 64)
    let otherRight = UnsafeMutablePointer<Float>.allocate(capacity: 64)

    /// Makes the kernel PipeWire's: its inputs' idle buffers are known.
    func usePipeWireIdleBuffers() {
        idle.initialize(repeating: 0, count: 2 * 64)
        idleInputs[0] = UnsafePointer(idle)
        idleInputs[1] = UnsafePointer(idle + 64)
        kernel.idleInputs = idleInputs
    }

    /// One cycle on PipeWire: `source` in the period buffer of `buffer` (0 or 1), or nil for the
    /// port's idle buffer (no data reached it).
    func pipeWireCycle(at counter: UInt32, source: Int?, buffer: Int = 0) {
        if let source {
            let (l, r) = buffer == 0 ? (left, right) : (otherLeft, otherRight)
            for i in 0 ..< period {
                l[i] = Float(source + i + 1)
                r[i] = -Float(source + i + 1)
            }
            inputs[0] = UnsafePointer(l)
            inputs[1] = UnsafePointer(r)
        } else {
            inputs[0] = idleInputs[0]
            inputs[1] = idleInputs[1]
        }
        kernel.process(frameCount: period, cycleStartFrame: counter, knowsCycleFrame: true)
    }

    /// Checks that the file holds source frame f + 1 at frame f except silence in `silent`.
    func expectFile(_ path: String, frames count: Int, silent: Range<Int>) throws {
        expectFrames(try readBack(path), count: count, silent: silent)
    }

    /// `expectFile` of samples already read back.
    func expectFrames(_ frames: [Float], count: Int, silent: Range<Int>) {
        #expect(frames.count == count * 2)
        for frame in 0 ..< min(count, frames.count / 2) {
            let expected: Float = silent.contains(frame) ? 0 : Float(frame + 1)
            if frames[2 * frame] != expected || frames[2 * frame + 1] != -expected {
                Issue.record("frame \(frame): \(frames[2 * frame]); expected ±\(expected)")
                break
            }
        }
    }

    /// A cycle that got PipeWire's idle buffer on every input at a steady counter: its period
    /// never reached micmon (its previous cycle ran into the next one). The silence is in place;
    /// it is counted as missed and logged there, nothing dropped. Before, it was taken as data,
    /// reported nowhere, exit 0.
    @Test("PipeWire: a cycle with only idle buffers at a steady counter is missed, in place")
    func emptyCycleIsMissedInPlace() throws {
        usePipeWireIdleBuffers()
        let path = scratchPath()
        let writer = try makeWriter(path)
        writer.start()
        pipeWireCycle(at: 1000, source: 0)
        pipeWireCycle(at: 1064, source: 64, buffer: 1)
        pipeWireCycle(at: 1128, source: nil)  // source frames 128 ..< 192 never came
        pipeWireCycle(at: 1192, source: 192, buffer: 1)
        waitForWriter(writer, frames: 256)
        let result = writer.finish()
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 64)
        #expect(counters.pointee.missedGaps.load(ordering: .relaxed) == 1)
        #expect(counters.pointee.framesDropped.load(ordering: .relaxed) == 0)
        #expect(result.drops.isEmpty)
        let logged = missedGaps.consumer.readableSlices()
        #expect(logged.count == 1 && logged[0] == DropEvent(startFrame: 128, frameCount: 64))
        try expectFile(path, frames: 256, silent: 128 ..< 192)
    }

    /// One PipeWire cycle whose inputs are a buffer with data (not the idle one) holding digital
    /// silence, at `counter`.
    func pipeWireSilentCycle(at counter: UInt32, buffer: Int = 0) {
        let (l, r) = buffer == 0 ? (left, right) : (otherLeft, otherRight)
        for i in 0 ..< period {
            l[i] = 0
            r[i] = i == period - 1 ? -0.0 : 0
        }
        inputs[0] = UnsafePointer(l)
        inputs[1] = UnsafePointer(r)
        kernel.process(frameCount: period, cycleStartFrame: counter, knowsCycleFrame: true)
    }

    /// Under load PipeWire gave micmon a period of digital silence from a buffer with data at a
    /// steady counter where a witness on the same port got the sound (docs/timeline.md, "A silent
    /// period"): a short run of such periods between sound is reported as uncertain, in place,
    /// and nothing is counted missed, dropped or moved.
    @Test("PipeWire: a period or two of digital silence between sound is uncertain, in place")
    func silentPeriodsBetweenSoundAreUncertain() throws {
        usePipeWireIdleBuffers()
        let path = scratchPath()
        let writer = try makeWriter(path)
        writer.start()
        pipeWireCycle(at: 1000, source: 0)
        pipeWireCycle(at: 1064, source: 64, buffer: 1)
        pipeWireSilentCycle(at: 1128)
        pipeWireSilentCycle(at: 1192, buffer: 1)
        waitForWriter(writer, frames: 256)
        // The take is still silent at its end: not yet uncertain.
        #expect(counters.pointee.uncertainGaps.load(ordering: .relaxed) == 0)
        pipeWireCycle(at: 1256, source: 256)
        waitForWriter(writer, frames: 320)
        let result = writer.finish()
        #expect(counters.pointee.uncertainGaps.load(ordering: .relaxed) == 1)
        #expect(counters.pointee.framesUncertain.load(ordering: .relaxed) == 128)
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 0)
        #expect(counters.pointee.framesDropped.load(ordering: .relaxed) == 0)
        #expect(result.drops.isEmpty)
        let logged = uncertainGaps.consumer.readableSlices()
        #expect(logged.count == 1 && logged[0] == DropEvent(startFrame: 128, frameCount: 128))
        try expectFile(path, frames: 320, silent: 128 ..< 256)
    }

    /// What is not the fault: silence longer than `silentRunLimit` cycles (a source that paused),
    /// silence from the take's start, and silence off PipeWire (no idle buffers known).
    @Test("digital silence that is the source's is not uncertain: long, from the start, or off PipeWire")
    func sourceSilenceIsNotUncertain() {
        // Off PipeWire: the rule does not run.
        runPeriod()
        for _ in 0 ..< 2 {
            for i in 0 ..< period {
                left[i] = 0
                right[i] = 0
            }
            kernel.process(frameCount: period)
        }
        runPeriod()
        #expect(counters.pointee.uncertainGaps.load(ordering: .relaxed) == 0)
        usePipeWireIdleBuffers()
        var counter: UInt32 = 5000
        func next() -> UInt32 {
            counter += UInt32(period)
            return counter
        }
        // From the take's start on PipeWire: silence first, then sound.
        pipeWireSilentCycle(at: next())
        pipeWireCycle(at: next(), source: 64)
        // A pause longer than the limit, then sound again.
        for cycle in 0 ... CaptureKernel.silentRunLimit { pipeWireSilentCycle(at: next(), buffer: cycle % 2) }
        pipeWireCycle(at: next(), source: 128)
        #expect(counters.pointee.uncertainGaps.load(ordering: .relaxed) == 0)
        // At the limit it is still uncertain.
        for cycle in 0 ..< CaptureKernel.silentRunLimit { pipeWireSilentCycle(at: next(), buffer: cycle % 2) }
        pipeWireCycle(at: next(), source: 192)
        #expect(counters.pointee.uncertainGaps.load(ordering: .relaxed) == 1)
        #expect(
            counters.pointee.framesUncertain.load(ordering: .relaxed) == UInt64(CaptureKernel.silentRunLimit * period))
    }

    /// A loss the timeline settles inside a run of empty cycles (a late cycle there: the counter
    /// ran a period ahead and the cycle got nothing) is one stretch of silence with the run's:
    /// one entry in the log spanning both, the frames counted once each. Before, the run and the
    /// loss were two overlapping entries (128 + 128 and 192 + 64), the run's short of the stretch.
    @Test("PipeWire: a loss settled inside an empty run is logged with the run, as one stretch")
    func lossInsideAnEmptyRunIsOneStretch() throws {
        usePipeWireIdleBuffers()
        let path = scratchPath()
        let writer = try makeWriter(path)
        writer.start()
        pipeWireCycle(at: 1000, source: 0)
        pipeWireCycle(at: 1064, source: 64, buffer: 1)
        waitForWriter(writer, frames: 128)  // the ring holds 4 periods
        pipeWireCycle(at: 1128, source: nil)  // empty: source frames 128 ..< 192 never came
        pipeWireCycle(at: 1256, source: nil)  // a period ahead, and empty: 192 ..< 256 lost too
        pipeWireCycle(at: 1320, source: 320)
        waitForWriter(writer, frames: 384)
        let result = writer.finish()
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 192)
        #expect(counters.pointee.missedGaps.load(ordering: .relaxed) == 1)
        #expect(counters.pointee.framesDropped.load(ordering: .relaxed) == 64)
        #expect(result.drops == [DropEvent(startFrame: 192, frameCount: 64)])
        let logged = missedGaps.consumer.readableSlices()
        #expect(logged.count == 1 && logged[0] == DropEvent(startFrame: 128, frameCount: 192))
        try expectFile(path, frames: 384, silent: 128 ..< 320)
    }

    /// A take armed once its sources are connected, whose first cycles are empty (PipeWire brings
    /// a link up after `jack_connect` returns): those periods are missed, from frame 0.
    @Test("PipeWire: a take that begins with empty cycles counts them missed from frame 0")
    func emptyStartIsMissed() {
        usePipeWireIdleBuffers()
        kernel.isTaking = false
        counters.pointee.isArmed.store(true, ordering: .relaxed)
        pipeWireCycle(at: 936, source: nil)  // sees the arm: the take begins with the next cycle
        pipeWireCycle(at: 1000, source: nil)
        pipeWireCycle(at: 1064, source: nil)
        pipeWireCycle(at: 1128, source: 128)
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 128)
        let logged = missedGaps.consumer.readableSlices()
        #expect(logged.count == 1 && logged[0] == DropEvent(startFrame: 0, frameCount: 128))
    }

    /// An input with no data at all (never connected, or its source left) is no loss: no period
    /// came before it.
    @Test("PipeWire: idle buffers for longer than the limit (no source) are no loss, at the start or later")
    func idleWithoutDataIsNoLoss() throws {
        usePipeWireIdleBuffers()
        var counter: UInt32 = 1000
        for _ in 0 ... CaptureKernel.emptyRunLimit {
            pipeWireCycle(at: counter, source: nil)
            counter += 64
        }
        pipeWireCycle(at: counter, source: 192)
        counter += 64
        for _ in 0 ... CaptureKernel.emptyRunLimit {
            pipeWireCycle(at: counter, source: nil)
            counter += 64
        }
        pipeWireCycle(at: counter, source: 0)
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 0)
        #expect(counters.pointee.missedGaps.load(ordering: .relaxed) == 0)
    }

    /// A late cycle on PipeWire reads the next cycle's counter (+2N) and is called again for the
    /// same position with nothing (+0). The nodes alternate two buffers by period: when the late
    /// cycle's buffer is the one of two cycles before, it held its own period and the period lost
    /// is the repeat's (the silence goes after it; before, it went before it, the period one
    /// period late); with the last cycle's buffer it held the next period and the loss is its own
    /// position's, before what it holds.
    @Test(
        "PipeWire: a late cycle's buffer tells whether the loss goes after it (its own period) or before it (the next)",
        arguments: [(buffer: 1, holds: 192, lost: 256), (buffer: 0, holds: 256, lost: 192)])
    func lateCyclePlacesTheLossByItsBuffer(buffer: Int, holds: Int, lost: Int) throws {
        usePipeWireIdleBuffers()
        let path = scratchPath()
        let writer = try makeWriter(path)
        writer.start()
        pipeWireCycle(at: 1000, source: 0, buffer: 0)
        pipeWireCycle(at: 1064, source: 64, buffer: 1)
        pipeWireCycle(at: 1128, source: 128, buffer: 0)
        waitForWriter(writer, frames: 192)  // the ring holds 4 periods
        pipeWireCycle(at: 1256, source: holds, buffer: buffer)  // late: the next counter
        pipeWireCycle(at: 1256, source: nil)  // the repeat: 64 source frames were lost
        pipeWireCycle(at: 1320, source: 320, buffer: 1)
        waitForWriter(writer, frames: 384)
        let result = writer.finish()
        #expect(counters.pointee.framesMissed.load(ordering: .relaxed) == 64)
        #expect(counters.pointee.lateCycles.load(ordering: .relaxed) == 1)
        #expect(result.drops == [DropEvent(startFrame: UInt64(lost), frameCount: 64)])
        try expectFile(path, frames: 384, silent: lost ..< lost + 64)
    }
}

extension Array where Element == Range<Int> {
    /// Whether any of the ranges holds `value`.
    func anyContains(_ value: Int) -> Bool { contains { $0.contains(value) } }
}
