/// A deterministic two-channel test signal, defined for every frame index `n`, for checking
/// recordings sample for sample (tests, benchmarks). Channel 1 is a counter ramp on the 16-bit
/// grid (k/32768, so it survives every PCM depth exactly and gives `n mod 65536` back); channel 2
/// a hash of `n` (PRBS-like) on the 24-bit grid (k/2²³). Both are exact in float.
public enum ReferenceSignal {
    public static let channelCount = 2

    /// The sample of `channel` (0 or 1) at source frame `n`. Any thread; realtime-safe.
    @inlinable @inline(__always)
    public static func value(channel: Int, frame n: UInt64) -> Float {
        if channel == 0 {
            return Float(Int(n & 0xFFFF) - 32768) / 32768
        }
        var x = n &+ 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        x ^= x >> 31
        return Float(Int(x & 0xFF_FFFF) - 0x80_0000) / 0x80_0000
    }

    /// The low 16 bits of the source frame whose channel-1 sample is `rampSample`.
    @inlinable
    public static func frameLowBits(rampSample: Float) -> UInt64 {
        UInt64(max(0, min(65535, Int(rampSample * 32768) + 32768)))
    }

    /// Fills `count` frames of both channels starting at source frame `start`. Realtime-safe.
    @inlinable
    public static func render(
        into first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>, count: Int,
        startFrame start: UInt64
    ) {
        var i = 0
        while i < count {
            first[i] = value(channel: 0, frame: start &+ UInt64(i))
            second[i] = value(channel: 1, frame: start &+ UInt64(i))
            i += 1
        }
    }

    /// Where interleaved stereo frames sit in the signal, and how well they match it.
    public struct Match: Equatable, Sendable {
        /// The source frame of the first frame, when the first frames match somewhere.
        public var startFrame: UInt64?
        /// Frames that differ from the signal from `startFrame` on (all of them when not found).
        public var mismatchedFrames: Int
        /// The first differing frame.
        public var firstMismatch: Int?
    }

    /// Finds where `frameCount` interleaved stereo frames start in the signal and counts the
    /// frames that differ, with `sample(frame, channel)` reading the recording and
    /// `expected(value)` mapping a signal value to what the recording should hold (identity for
    /// float; a quantizer for PCM). Not for the realtime thread.
    public static func match<Sample: Equatable>(
        frameCount: Int, rampLowBits: UInt64, sample: (Int, Int) -> Sample,
        expected: (Float) -> Sample
    ) -> Match {
        guard frameCount > 0 else { return Match(startFrame: nil, mismatchedFrames: 0, firstMismatch: nil) }
        func matches(_ i: Int, _ n: UInt64) -> Bool {
            sample(i, 0) == expected(value(channel: 0, frame: n))
                && sample(i, 1) == expected(value(channel: 1, frame: n))
        }
        // Channel 1 gives the low 16 bits of the source frame; channel 2 (a hash of the whole
        // index) pins down the rest.
        var start: UInt64?
        for high in UInt64(0) ..< 4_000_000 {
            let n = rampLowBits + high << 16
            if (0 ..< min(frameCount, 8)).allSatisfy({ matches($0, n + UInt64($0)) }) {
                start = n
                break
            }
        }
        guard let start else { return Match(startFrame: nil, mismatchedFrames: frameCount, firstMismatch: 0) }
        var mismatched = 0
        var first: Int?
        for i in 0 ..< frameCount where !matches(i, start + UInt64(i)) {
            mismatched += 1
            if first == nil { first = i }
        }
        return Match(startFrame: start, mismatchedFrames: mismatched, firstMismatch: first)
    }

    /// `match` for float recordings: they must hold the signal bit for bit.
    public static func match(interleaved samples: UnsafeBufferPointer<Float>) -> Match {
        let frames = samples.count / 2
        let low = frames > 0 ? frameLowBits(rampSample: samples[0]) : 0
        return match(frameCount: frames, rampLowBits: low, sample: { samples[2 * $0 + $1] }, expected: { $0 })
    }
}
