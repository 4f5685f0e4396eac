import DSP
import Foundation
import Realtime
import SoundFile
import Testing

@testable import Engine

/// The kernels through the offline driver: no server, no threads, no sleeps. Each block is a
/// JACK period; what the kernel queues and outputs is collected and compared with what went in.
@Suite("Offline driver")
struct OfflineDriverTests {
    /// Frame i carries +(i+1) on channel 1 and −(i+1) on channel 2 (never silence), interleaved.
    static func ramp(frames: Int) -> [Float] {
        var samples = [Float](repeating: 0, count: 2 * frames)
        for i in 0 ..< frames {
            samples[2 * i] = Float(i + 1)
            samples[2 * i + 1] = -Float(i + 1)
        }
        return samples
    }

    /// A tone on channel 1 and a quieter, noisier copy on channel 2 (the two mics), interleaved.
    static func twoMics(frames: Int) -> [Float] {
        var samples = [Float](repeating: 0, count: 2 * frames)
        var state: UInt32 = 1
        for i in 0 ..< frames {
            state = state &* 1_664_525 &+ 1_013_904_223
            let noise = (Float(state >> 8) / Float(1 << 24) - 0.5) * 0.05
            let tone = 0.3 * Float(sin(2 * Double.pi * 440 * Double(i) / 48_000)) * (i / 12_000 % 2 == 0 ? 1 : 0)
            samples[2 * i] = tone + noise
            samples[2 * i + 1] = 0.4 * tone - noise
        }
        return samples
    }

    static func options(block: Int) -> OfflineCapture.Options {
        var options = OfflineCapture.Options()
        options.blockFrames = block
        // Test threads are shared with other tests: leave their floating-point mode alone.
        options.flushesDenormals = false
        return options
    }

    @Test("the take equals the input sample for sample, whatever the block size", arguments: [1, 7, 256, 4096])
    func takeEqualsInput(block: Int) {
        let input = Self.ramp(frames: 10_007)
        let capture = OfflineCapture(Self.options(block: block), suppressor: nil)
        capture.process(interleaved: input)
        #expect(capture.take.count == input.count)
        #expect(capture.take == input)
        #expect(capture.framesTaken == 10_007)
        #expect(capture.framesDropped == 0)
        #expect(capture.cycles == UInt64((10_007 + block - 1) / block))
        // The meters saw every frame: the peak is the last, largest sample.
        let readings = capture.readings()
        #expect(readings.count == 2)
        #expect(readings[0].peak == 10_007 && readings[1].peak == 10_007)
    }

    @Test("input given in pieces continues the same timeline")
    func piecesContinue() {
        let input = Self.ramp(frames: 1000)
        let capture = OfflineCapture(Self.options(block: 64), suppressor: nil)
        capture.process(interleaved: Array(input[0 ..< 2 * 640]))
        capture.process(interleaved: Array(input[(2 * 640)...]))
        #expect(capture.take == input)
    }

    @Test("a duration takes exactly that many frames, even mid-block")
    func frameLimitIsExact() {
        var options = Self.options(block: 7)
        options.frameLimit = 1000
        let capture = OfflineCapture(options, suppressor: nil)
        capture.process(interleaved: Self.ramp(frames: 2000))
        #expect(capture.framesTaken == 1000)
        #expect(capture.isComplete)
        #expect(capture.take == Self.ramp(frames: 1000))
    }

    @Test("the stop handshake: the first cycle after the request confirms it and takes nothing more")
    func stopHandshake() {
        let capture = OfflineCapture(Self.options(block: 64), suppressor: nil)
        capture.process(interleaved: Self.ramp(frames: 128))
        #expect(!capture.hasStopped)
        capture.requestStop()
        // Nothing runs until a cycle does: the request alone confirms nothing.
        #expect(!capture.hasStopped)
        capture.process(interleaved: Self.ramp(frames: 64))
        #expect(capture.hasStopped)
        #expect(capture.framesTaken == 128)
        #expect(capture.take == Self.ramp(frames: 128))
        // Cycles after the stop are still counted (the realtime thread runs until deactivated).
        capture.process(interleaved: Self.ramp(frames: 64))
        #expect(capture.cycles == 4)
        #expect(capture.framesTaken == 128)
    }

    @Test("a full ring drops whole periods, counts them, and logs them at their place once a period fits")
    func dropAccounting() {
        var options = Self.options(block: 64)
        options.ringFrames = 256
        options.drainsRing = false
        let capture = OfflineCapture(options, suppressor: nil)
        let input = Self.ramp(frames: 7 * 64)
        capture.process(interleaved: Array(input[0 ..< 2 * 6 * 64]))  // 4 fit, 2 do not
        #expect(capture.framesDropped == 128)
        #expect(capture.framesTaken == 6 * 64)
        #expect(capture.framesQueued == 256)
        // The drop is pending until a period fits: nothing logged yet.
        #expect(capture.drops().isEmpty)
        capture.drainRing()
        capture.process(interleaved: Array(input[(2 * 6 * 64)...]))
        #expect(capture.drops() == [DropEvent(startFrame: 256, frameCount: 128)])
        #expect(capture.framesDropped == 128)
        #expect(capture.framesTaken == 7 * 64)
        capture.drainRing()
        // What the ring delivered: the first four periods, then the seventh (the writer puts the
        // dropped two back as silence, at frame 256).
        #expect(capture.take == Array(input[0 ..< 2 * 256]) + Array(input[(2 * 6 * 64)...]))
    }

    @Test("monitoring: each output is its input times the gain, in the same cycle")
    func monitorOutputs() {
        var options = Self.options(block: 7)
        options.monitorGain = 0.5
        let capture = OfflineCapture(options, suppressor: nil)
        let input = Self.ramp(frames: 100)
        capture.process(interleaved: input)
        #expect(capture.monitorOutputs.count == 2)
        #expect(capture.monitorOutputs[0] == (0 ..< 100).map { 0.5 * input[2 * $0] })
        #expect(capture.monitorOutputs[1] == (0 ..< 100).map { 0.5 * input[2 * $0 + 1] })
    }

    @Test("denoising offline: the clean channel does not depend on the block size and is the suppressor's own output")
    func denoiseIsBlockSizeIndependent() throws {
        let frames = 48_000 + 77
        let input = Self.twoMics(frames: frames)
        var takes: [[Float]] = []
        for block in [7, 256, 4096] {
            var options = Self.options(block: block)
            options.denoises = true
            options.recordedChannels = .all
            let capture = try OfflineCapture(options)
            capture.process(interleaved: input)
            #expect(capture.recordedChannelCount == 3)
            #expect(capture.take.count == 3 * frames)
            takes.append(capture.take)
        }
        #expect(takes[0] == takes[1])
        #expect(takes[0] == takes[2])
        // The inputs are recorded untouched beside the clean channel.
        let take = takes[0]
        let firstInput: [Float] = (0 ..< frames).map { take[3 * $0] }
        let secondInput: [Float] = (0 ..< frames).map { take[3 * $0 + 1] }
        let primaryIn: [Float] = (0 ..< frames).map { input[2 * $0] }
        let referenceIn: [Float] = (0 ..< frames).map { input[2 * $0 + 1] }
        #expect(firstInput == primaryIn && secondInput == referenceIn)
        // The clean channel equals the suppressor run over the whole file at once.
        let primary = primaryIn
        let reference = referenceIn
        let suppressor = try NoiseSuppressor(sampleRate: 48_000)
        var clean = [Float](repeating: 0, count: frames)
        suppressor.process(primary: primary, reference: reference, clean: &clean, frameCount: frames)
        let offline: [Float] = (0 ..< frames).map { take[3 * $0 + 2] }
        #expect(offline == clean)
        #expect(clean.contains { $0 != 0 })
    }

    @Test("OfflineDenoise writes the clean channel of a file, the same for any block size")
    func denoiseFiles() throws {
        let folder = NSTemporaryDirectory() + "micmon-offline-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let frames = 20_000
        let input = Self.twoMics(frames: frames)
        let inputPath = folder + "/in.wav"
        let format = AudioFileFormat(container: .wav, encoding: .float)
        let inputWriter = try SoundFileWriter(path: inputPath, format: format, sampleRate: 48_000, channelCount: 2)
        try input.withUnsafeBufferPointer { try inputWriter.write(interleaved: $0) }
        try inputWriter.close()

        var outputs: [[Float]] = []
        for block in [1, 4096] {
            let outputPath = folder + "/out-\(block).wav"
            let reader = try SoundFileReader(path: inputPath)
            let writer = try SoundFileWriter(path: outputPath, format: format, sampleRate: 48_000, channelCount: 1)
            let result = OfflineDenoise.run(
                reader: reader, writer: writer, blockFrames: block,
                suppressor: try NoiseSuppressor(sampleRate: 48_000))
            reader.close()
            try writer.close()
            #expect(result.framesRead == Int64(frames))
            #expect(result.writeError == nil)
            outputs.append(try SoundFileReader(path: outputPath).readAllFloats())
        }
        #expect(outputs[0].count == frames)
        #expect(outputs[0] == outputs[1])
        #expect(outputs[0].contains { $0 != 0 })
    }

    @Test("the playback kernel offline: the ring's frames on the outputs with the gains, silence once it runs dry")
    func playbackKernel() {
        let memory = SessionMemory(sampleRate: 48_000)
        let ring = SPSCRing<Float>(capacity: 64)
        let counters = memory.make(PlaybackCounters())
        let mailbox = LatestValueMailbox(count: 2, initial: ChannelMeter())
        let placeholder = memory.make(repeating: Float(0), count: 1)
        let standIn = OpaquePointer(bitPattern: 0x1)!
        let kernel = PlaybackKernel(
            link: memory.link(client: standIn, readsSystemClock: false),
            ports: memory.make(repeating: standIn, count: 2), outputs: memory.make(repeating: placeholder, count: 2),
            frames: ring.consumer, gains: PanLaw(volume: 0.5, pan: 0, sourceChannels: 2),
            meters: memory.make(repeating: ChannelMeter(), count: 2),
            meterCoefficients: MeterCoefficients(sampleRate: 48_000), meterMailbox: mailbox.writer, counters: counters)
        let stereo = Self.ramp(frames: 20)
        _ = stereo.withUnsafeBufferPointer { ring.producer.push($0) }
        counters.pointee.isArmed.store(true, ordering: .relaxed)
        let driver = OfflineDriver(kernel: kernel, memory: memory, blockFrames: 8)
        var left: [Float] = []
        var right: [Float] = []
        driver.runSilent(blocks: 4) { outputs, frames in
            left.append(contentsOf: UnsafeBufferPointer(start: outputs[0], count: frames))
            right.append(contentsOf: UnsafeBufferPointer(start: outputs[1], count: frames))
        }
        let gains = PanLaw(volume: 0.5, pan: 0, sourceChannels: 2)
        // The first armed cycle plays silence (its connections may not be made yet), then the file.
        let silence: [Float] = Array(repeating: 0, count: 8)
        let tail: [Float] = Array(repeating: 0, count: 4)
        let expectedLeft: [Float] = (0 ..< 20).map { Float($0 + 1) * gains.left }
        let expectedRight: [Float] = (0 ..< 20).map { -Float($0 + 1) * gains.right }
        #expect(left == silence + expectedLeft + tail)
        #expect(right == silence + expectedRight + tail)
        #expect(counters.pointee.framesPlayed.load(ordering: .relaxed) == 20)
    }

    @Test("the main thread's half of the handshake: confirmed by a cycle, given up when the server is gone")
    func awaitStop() {
        let confirmed = OfflineCapture(Self.options(block: 64), suppressor: nil)
        confirmed.requestStop()
        confirmed.process(interleaved: Self.ramp(frames: 64))
        #expect(confirmed.memoryForTests.awaitStop(timeout: 60))

        // No cycle runs and the server is gone: no wait for a confirmation that cannot come.
        let abandoned = OfflineCapture(Self.options(block: 64), suppressor: nil)
        abandoned.requestStop()
        abandoned.memoryForTests.state.pointee.serverIsGone.store(true, ordering: .releasing)
        #expect(!abandoned.memoryForTests.awaitStop(timeout: 60))
        #expect(!abandoned.hasStopped)

        // No cycle runs (a stalled server): the wait ends unconfirmed, and the session then
        // deactivates the client.
        let stalled = OfflineCapture(Self.options(block: 64), suppressor: nil)
        stalled.requestStop()
        #expect(!stalled.memoryForTests.awaitStop(timeout: 0))
    }
}

/// The analysis ring receives exactly the take: copied from the capture ring's slots when
/// recording (the two rings wrapping at different places), interleaved afresh when metering.
@Suite struct AnalysisRingTests {
    @Test(arguments: [(256, 1000, 777), (64, 8192, 8192), (100, 333, 1000)])
    func analysisRingHoldsTheTake(block: Int, ringFrames: Int, analysisFrames: Int) {
        var options = OfflineCapture.Options()
        options.blockFrames = block
        options.ringFrames = ringFrames
        options.analysisRingFrames = analysisFrames
        let capture = try! OfflineCapture(options)
        let input: [Float] = (0 ..< (2 * 48000)).map { Float($0 % 4099) / 4099 - 0.5 }
        capture.process(interleaved: input)
        #expect(capture.take == input)
        #expect(capture.analysisTake == input)
    }
}
