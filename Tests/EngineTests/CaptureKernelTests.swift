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
    let samples = SPSCRing<Float>(capacity: 256 * 2)   // 4 periods
    let drops = SPSCRing<DropEvent>(capacity: 8)
    var kernel: CaptureKernel
    var sourceFrame = 0

    init() {
        counters.initialize(to: CaptureCounters())
        meters.initialize(repeating: ChannelMeter(), count: 2)
        inputs.initialize(repeating: UnsafePointer(left), count: 2)
        kernel = CaptureKernel(channelCount: 2, ports: ports, inputs: inputs, meters: meters,
                               meterCoefficients: MeterCoefficients(sampleRate: 48000), meterMailbox: mailbox.writer,
                               samples: samples.producer, drops: drops.producer, counters: counters, frameLimit: .max)
        kernel.isTaking = true
    }

    deinit {
        counters.deinitialize(count: 1)
        counters.deallocate()
        inputs.deallocate(); ports.deallocate(); meters.deallocate(); left.deallocate(); right.deallocate()
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
        let file = try SoundFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .float),
                                       sampleRate: 48000, channelCount: 2)
        return TakeWriter(file: file, samples: samples.consumer, drops: drops.consumer, counters: counters,
                          channelCount: 2, wakeInterval: .milliseconds(2))
    }

    func taken() -> UInt64 { counters.pointee.framesTaken.load(ordering: .relaxed) }

    func readBack(_ path: String) throws -> [Float] { try SoundFileReader(path: path).readAllFloats() }

    @Test("a full ring drops whole periods; the file keeps its timeline with silence there")
    func dropsBecomeSilenceInPlace() throws {
        let path = NSTemporaryDirectory() + "micmon-kernel-\(UUID().uuidString).wav"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try makeWriter(path)
        for _ in 0 ..< 6 { runPeriod() }          // 4 fit, 2 are dropped (writer not running yet)
        let framesDroppedNow = counters.pointee.framesDropped.load(ordering: .relaxed)
        #expect(framesDroppedNow == 128)
        writer.start()
        let deadline = Date().addingTimeInterval(10)
        while writer.framesWritten.load(ordering: .relaxed) < 256 && Date() < deadline { usleep(1000) }
        runPeriod()                                // fits: reports the pending drop first
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

    @Test("a drop at the end of the take is written as trailing silence")
    func trailingDropIsFilled() throws {
        let path = NSTemporaryDirectory() + "micmon-kernel-\(UUID().uuidString).wav"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try makeWriter(path)
        for _ in 0 ..< 5 { runPeriod() }          // the 5th does not fit
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
        kernel = CaptureKernel(channelCount: 2, ports: ports, inputs: inputs, meters: meters,
                               meterCoefficients: MeterCoefficients(sampleRate: 48000), meterMailbox: mailbox.writer,
                               samples: samples.producer, drops: drops.producer, counters: counters, frameLimit: 100)
        kernel.isTaking = true
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
        let cyclesNow = counters.pointee.cycles.load(ordering: .relaxed)
        #expect(cyclesNow == 3)
    }
}
