import DSP
import Realtime
import Testing

@testable import Engine

/// `play` and `monitor` never send a NaN or ±∞ to JACK: each goes out as 0 and is counted;
/// every finite sample (1e30 included) goes out as it would have. Through the offline driver.
@Suite("Non-finite samples never reach the outputs")
struct NonFiniteOutputTests {
    /// Stereo frames with a NaN, +∞, −∞ and 1e30 among a ramp, interleaved.
    static func poisoned(frames: Int) -> [Float] {
        var samples = OfflineDriverTests.ramp(frames: frames).map { $0 / Float(frames) }
        samples[6] = .nan
        samples[7] = .infinity
        samples[13] = -.infinity
        samples[20] = 1e30
        samples[21] = .signalingNaN
        return samples
    }

    @Test("play: NaN and ±∞ go out as 0 and are counted; 1e30 and every finite sample go out with the gains")
    func playback() {
        let memory = SessionMemory(sampleRate: 48_000)
        let ring = SPSCRing<Float>(capacity: 128)
        let counters = memory.make(PlaybackCounters())
        let mailbox = LatestValueMailbox(count: 2, initial: ChannelMeter())
        let placeholder = memory.make(repeating: Float(0), count: 1)
        let standIn = OpaquePointer(bitPattern: 0x1)!
        let gains = PanLaw(volume: 0.5, pan: 0, sourceChannels: 2)
        let kernel = PlaybackKernel(
            link: memory.link(client: standIn, readsSystemClock: false),
            ports: memory.make(repeating: standIn, count: 2), outputs: memory.make(repeating: placeholder, count: 2),
            frames: ring.consumer, gains: gains, meters: memory.make(repeating: ChannelMeter(), count: 2),
            meterCoefficients: MeterCoefficients(sampleRate: 48_000), meterMailbox: mailbox.writer, counters: counters)
        let stereo = Self.poisoned(frames: 32)
        _ = stereo.withUnsafeBufferPointer { ring.producer.push($0) }
        counters.pointee.isArmed.store(true, ordering: .relaxed)
        let driver = OfflineDriver(kernel: kernel, memory: memory, blockFrames: 8)
        var left: [Float] = []
        var right: [Float] = []
        driver.runSilent(blocks: 5) { outputs, frames in
            left.append(contentsOf: UnsafeBufferPointer(start: outputs[0], count: frames))
            right.append(contentsOf: UnsafeBufferPointer(start: outputs[1], count: frames))
        }
        // The first armed cycle is silence, then the 32 frames.
        let played = Array(zip(left, right).dropFirst(8).prefix(32))
        #expect(left.allSatisfy(\.isFinite) && right.allSatisfy(\.isFinite), "a non-finite sample reached an output")
        for (frame, (l, r)) in played.enumerated() {
            let wantLeft = stereo[2 * frame] * gains.left
            let wantRight = stereo[2 * frame + 1] * gains.right
            #expect(l == (wantLeft.isFinite ? wantLeft : 0), "left, frame \(frame)")
            #expect(r == (wantRight.isFinite ? wantRight : 0), "right, frame \(frame)")
        }
        #expect(played[10].0 == 1e30 * gains.left)
        #expect(counters.pointee.nonFiniteReplaced.load(ordering: .relaxed) == 4)
        #expect(counters.pointee.framesPlayed.load(ordering: .relaxed) == 32)
        // The meters saw no non-finite sample: what they meter is what went out.
        #expect(mailbox.readLatest().0.map(\.nonFiniteCount) == [0, 0])
    }

    @Test("monitor: NaN and ±∞ go out as 0 and are counted; the meters of the inputs count them apart")
    func monitor() {
        var options = OfflineDriverTests.options(block: 8)
        options.monitorGain = 0.5
        let capture = OfflineCapture(options, suppressor: nil)
        let input = Self.poisoned(frames: 32)
        capture.process(interleaved: input)
        let outputs = capture.monitorOutputs
        #expect(outputs.count == 2)
        for channel in 0 ..< 2 {
            let want = (0 ..< 32).map { frame -> Float in
                let x = 0.5 * input[2 * frame + channel]
                return x.isFinite ? x : 0
            }
            #expect(outputs[channel] == want, "out_\(channel + 1)")
        }
        #expect(capture.monitorNonFiniteReplaced == 4)
        // The take keeps every sample as it came (micmon never changes a recorded sample).
        #expect(capture.take.map(\.bitPattern) == input.map(\.bitPattern))
        #expect(capture.readings().map(\.nonFiniteCount) == [1, 3])
    }
}
