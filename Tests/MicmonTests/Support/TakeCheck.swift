import DSP
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

        /// Frames there, the signal found at the start, and every frame matching it: an empty
        /// take or one that never found the signal is not exact.
        var isExact: Bool { frameCount > 0 && firstSourceFrame != nil && mismatchedFrames == 0 }
    }

    struct WrongChannelCount: Error, CustomStringConvertible {
        let channelCount: Int
        var description: String { "the take has \(channelCount) channels, not \(TestSignal.channelCount)" }
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
        guard reader.channelCount == TestSignal.channelCount else {
            throw WrongChannelCount(channelCount: reader.channelCount)
        }
        let encoding = reader.encoding ?? .float
        let container = reader.container ?? .wav
        let match: ReferenceSignal.Match
        let frames: Int
        if encoding == .float {
            let samples = reader.readAllFloats()
            frames = samples.count / 2
            match = samples.withUnsafeBufferPointer { ReferenceSignal.match(interleaved: $0) }
        } else {
            let samples = reader.readAllInts()
            frames = samples.count / 2
            // The ramp is on the 16-bit grid, so its top 16 bits are exact at every PCM depth.
            let low = frames > 0 ? UInt64(Int(samples[0] >> 16) + 32768) : 0
            match = ReferenceSignal.match(
                frameCount: frames, rampLowBits: low, sample: { samples[2 * $0 + $1] },
                expected: { expectedInt($0, encoding: encoding, container: container) })
        }
        return Outcome(
            frameCount: frames, firstSourceFrame: match.startFrame,
            mismatchedFrames: match.mismatchedFrames, firstMismatch: match.firstMismatch)
    }
}
