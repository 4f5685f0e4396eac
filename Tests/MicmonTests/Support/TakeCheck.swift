import Glibc
import SoundFile

/// Checks a recorded take against `TestSignal`, sample for sample.
enum TakeCheck {
    struct Outcome {
        let frameCount: Int
        /// The source's frame index of the take's first frame.
        let firstSourceFrame: UInt64?
        /// Frames whose samples differ from the signal (0 for a perfect take).
        let mismatchedFrames: Int
        let firstMismatch: Int?
    }

    /// What libsndfile stores for `x` at this encoding, read back with `sf_readf_int`
    /// (left-aligned). With clipping on, its PCM writers scale by 2³¹, round to nearest, clip,
    /// and keep the top `bits` bits (an arithmetic shift, so 16- and 24-bit values are floored);
    /// its FLAC writer scales by 2^(bits−1) and rounds to nearest.
    static func expectedInt(_ x: Float, encoding: SampleEncoding, container: ContainerFormat) -> Int32 {
        let dropped = 32 - encoding.bitDepth
        if container == .flac {
            let scale = Double(Int64(1) << (encoding.bitDepth - 1))
            let rounded = (Double(x) * scale).rounded(.toNearestOrEven)
            let clipped = Int32(min(max(rounded, -scale), scale - 1))
            return clipped << dropped
        }
        let scaled = (Double(x) * 2_147_483_648).rounded(.toNearestOrEven)
        let full = Int32(min(max(scaled, -2_147_483_648), 2_147_483_647))
        return (full >> dropped) << dropped
    }

    static func verify(path: String) throws -> Outcome {
        let reader = try SoundFileReader(path: path)
        precondition(reader.channelCount == TestSignal.channelCount, "take has \(reader.channelCount) channels")
        let encoding = reader.encoding ?? .float
        let container = reader.container ?? .wav
        let frames: Int
        let rampLowBits: UInt64        // channel 1 of frame 0 gives the source frame's low 16 bits
        let matches: (Int, UInt64) -> Bool   // (take frame, source frame)
        if encoding == .float {
            let samples = reader.readAllFloats()
            frames = samples.count / 2
            rampLowBits = frames > 0 ? UInt64(max(0, min(65535, Int(samples[0] * 32768) + 32768))) : 0
            matches = { i, n in
                samples[2 * i] == TestSignal.value(channel: 0, frame: n) && samples[2 * i + 1] == TestSignal.value(channel: 1, frame: n)
            }
        } else {
            let samples = reader.readAllInts()
            frames = samples.count / 2
            // The ramp is on the 16-bit grid, so its top 16 bits are exact at every PCM depth.
            rampLowBits = frames > 0 ? UInt64(Int(samples[0] >> 16) + 32768) : 0
            matches = { i, n in
                samples[2 * i] == expectedInt(TestSignal.value(channel: 0, frame: n), encoding: encoding, container: container)
                    && samples[2 * i + 1] == expectedInt(TestSignal.value(channel: 1, frame: n), encoding: encoding, container: container)
            }
        }
        guard frames > 0 else { return Outcome(frameCount: 0, firstSourceFrame: nil, mismatchedFrames: 0, firstMismatch: nil) }
        // Channel 2 (a hash of the whole index) pins down the high bits.
        var start: UInt64?
        for high in UInt64(0) ..< 4_000_000 {
            let n = rampLowBits + high << 16
            if (0 ..< min(frames, 8)).allSatisfy({ matches($0, n + UInt64($0)) }) { start = n; break }
        }
        guard let start else { return Outcome(frameCount: frames, firstSourceFrame: nil, mismatchedFrames: frames, firstMismatch: 0) }
        var mismatched = 0
        var first: Int?
        for i in 0 ..< frames where !matches(i, start + UInt64(i)) {
            mismatched += 1
            if first == nil { first = i }
        }
        return Outcome(frameCount: frames, firstSourceFrame: start, mismatchedFrames: mismatched, firstMismatch: first)
    }
}
