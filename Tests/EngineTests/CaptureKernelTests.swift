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
            drops: drops, serverGaps: serverGaps, counters: counters, memory: memory, frameLimit: .max)
    }

    static func makeKernel(
        ports: UnsafeMutablePointer<OpaquePointer>, inputs: UnsafeMutablePointer<UnsafePointer<Float>>,
        meters: UnsafeMutablePointer<ChannelMeter>, mailbox: LatestValueMailbox<ChannelMeter>,
        samples: SPSCRing<Float>, drops: SPSCRing<DropEvent>, serverGaps: SPSCRing<DropEvent> = SPSCRing(capacity: 4),
        counters: UnsafeMutablePointer<CaptureCounters>,
        memory: SessionMemory, frameLimit: UInt64
    ) -> CaptureKernel {
        var kernel = CaptureKernel(
            link: memory.link(client: OpaquePointer(bitPattern: 0x10)!, readsSystemClock: false),
            channelCount: 2, ports: ports, inputs: inputs, meters: meters,
            meterCoefficients: MeterCoefficients(sampleRate: 48000), meterMailbox: mailbox.writer,
            samples: samples.producer, drops: drops.producer, serverGaps: serverGaps.producer, counters: counters,
            frameLimit: frameLimit, monitor: nil,
            meterCount: 2, recordSources: inputs, recordedChannelCount: 2, suppressor: nil)
        kernel.isTaking = true
        return kernel
    }

    deinit {
        counters.deinitialize(count: 1)
        counters.deallocate()
        inputs.deallocate()
        ports.deallocate()
        meters.deallocate()
        left.deallocate()
        right.deallocate()
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

    @Test("a full ring drops whole periods; the file keeps its timeline with silence there")
    func dropsBecomeSilenceInPlace() throws {
        let path = NSTemporaryDirectory() + "micmon-kernel-\(UUID().uuidString).wav"
        defer { try? FileManager.default.removeItem(atPath: path) }
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
        let path = NSTemporaryDirectory() + "micmon-kernel-\(UUID().uuidString).wav"
        defer { try? FileManager.default.removeItem(atPath: path) }
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
        // Another rate: the session sees the flag, stops, and reports it (exit 69).
        #expect(sessionSampleRate(44100, context) == 0)
        let afterNewRate = state.pointee.sampleRateChanged.load(ordering: .acquiring)
        #expect(afterNewRate)
    }

    @Test("a drop at the end of the take is written as trailing silence")
    func trailingDropIsFilled() throws {
        let path = NSTemporaryDirectory() + "micmon-kernel-\(UUID().uuidString).wav"
        defer { try? FileManager.default.removeItem(atPath: path) }
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

    /// A frame-counter jump between two cycles is a gap in the server's timeline, not a loss of
    /// micmon's: on a dummy server such cycles ran for no client (the source rendered nothing
    /// for them) or the callback read the next cycle's counter late (the soak's traces, see
    /// Benchmarks/MicmonSoak). The take holds exactly what the graph delivered.
    @Test("a server gap (frame counter jumped) is counted and logged; the take goes on with nothing inserted")
    func serverGapIsLoggedNotFilled() throws {
        let path = NSTemporaryDirectory() + "micmon-kernel-\(UUID().uuidString).wav"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try makeWriter(path)
        writer.start()
        func cycle(at frame: UInt32, frames: Int = 64) {
            for i in 0 ..< frames {
                left[i] = Float(sourceFrame + i + 1)
                right[i] = -Float(sourceFrame + i + 1)
            }
            inputs[0] = UnsafePointer(left)
            inputs[1] = UnsafePointer(right)
            kernel.process(frameCount: frames, cycleStartFrame: frame, knowsCycleFrame: true)
            sourceFrame += frames
        }
        /// The ring holds four periods: let the writer catch up.
        func waitForWriter() {
            let deadline = Date().addingTimeInterval(5)
            while writer.framesWritten.load(ordering: .relaxed) < taken() && Date() < deadline { usleep(1000) }
        }
        cycle(at: 1000)
        cycle(at: 1064)
        cycle(at: 1192)  // the counter skipped one period (1128)
        cycle(at: 1256)
        waitForWriter()
        cycle(at: 1448)  // and two more (1320, 1384)
        cycle(at: 1480, frames: 32)  // a period change: the counter is not judged across it
        cycle(at: 1512, frames: 32)
        #expect(counters.pointee.serverGaps.load(ordering: .relaxed) == 2)
        #expect(counters.pointee.framesSkippedByServer.load(ordering: .relaxed) == 192)
        #expect(counters.pointee.framesDropped.load(ordering: .relaxed) == 0)
        #expect(taken() == 384)
        let gaps = serverGaps.consumer.readableSlices()
        #expect(
            gaps.count == 2 && gaps[0] == DropEvent(startFrame: 128, frameCount: 64)
                && gaps[1] == DropEvent(startFrame: 256, frameCount: 128))
        // A third gap finds the log full (it holds 2): counted all the same.
        cycle(at: 1600, frames: 32)
        #expect(counters.pointee.serverGaps.load(ordering: .relaxed) == 3)
        #expect(counters.pointee.framesSkippedByServer.load(ordering: .relaxed) == 248)
        let result = writer.finish()
        #expect(result.drops.isEmpty)
        let frames = try readBack(path)
        #expect(frames.count == 416 * 2)
        for frame in 0 ..< 416 {
            #expect(
                frames[2 * frame] == Float(frame + 1) && frames[2 * frame + 1] == -Float(frame + 1), "frame \(frame)")
            if frames[2 * frame] != Float(frame + 1) { break }
        }
    }
}
