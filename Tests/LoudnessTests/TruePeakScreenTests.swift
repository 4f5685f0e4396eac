// The screened true peak: the same value, bit for bit, as libebur128 oversampling every sample,
// over signals built to have inter-sample peaks, at every oversampling factor; the screen's model
// of the interpolator against the library's own impulse response; and that a smooth programme
// is mostly screened out.

import CEbur128
import Loudness
import Testing

@Suite struct TruePeakScreenTests {
    /// A deterministic generator (xorshift), so every run tests the same samples.
    struct Noise {
        var state: UInt64
        mutating func next() -> Float {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Float(Int64(bitPattern: state >> 11) - (1 << 52)) / Float(1 << 52)
        }
    }

    /// Interleaved test programmes for `channels` channels at `rate`, each a different trap for a
    /// screen: noise, a swelling tone, a near-Nyquist pattern with large inter-sample overs, lone
    /// impulses, silence then a burst, a clipped square wave.
    static func programmes(channels: Int, rate: Int) -> [(String, [Float])] {
        let frames = rate * 3
        var noise = Noise(state: 0x9E37_79B9_7F4A_7C15)
        func make(_ sample: (Int, Int) -> Float) -> [Float] {
            var out = [Float](repeating: 0, count: frames * channels)
            for frame in 0 ..< frames {
                for channel in 0 ..< channels { out[frame * channels + channel] = sample(frame, channel) }
            }
            return out
        }
        let twoPi = 2 * Float.pi
        return [
            ("noise", make { _, _ in 0.3 * noise.next() }),
            (
                "swelling tone",
                make { frame, channel in
                    let t = Float(frame) / Float(rate)
                    return (0.3 + 0.25 * sinf(twoPi * t / 1.3)) * sinf(twoPi * (440 + 110 * Float(channel)) * t)
                }
            ),
            (
                "near Nyquist",
                make { frame, channel in
                    // fs/4 at 45°: samples at ±0.707·A, the waveform's peak A between them.
                    let phase = Float(frame % 4) * Float.pi / 2 + Float.pi / 4 + Float(channel)
                    return 0.9 * sinf(phase) * (frame / (rate / 2) % 2 == 0 ? 1 : 0.5)
                }
            ),
            ("impulses", make { frame, channel in frame % (rate / 3 + 7 * channel) == 0 ? 0.8 : 0 }),
            (
                "silence then burst",
                make { frame, _ in frame < frames / 2 ? 0 : 0.95 * noise.next() }
            ),
            (
                "clipped square",
                make { frame, channel in (frame / (20 + channel)) % 2 == 0 ? 1 : -1 }
            ),
        ]
    }

    @Test(arguments: [44100, 48000, 96000, 192000])
    func screenedTruePeakEqualsEverySampleOversampled(rate: Int) throws {
        var sizes = Noise(state: 12345)
        for channels in [1, 2] {
            for (name, samples) in Self.programmes(channels: channels, rate: rate) {
                let roles: [LoudnessChannelRole] = channels == 1 ? [.left] : [.left, .right]
                let screened = try LoudnessMeter(roles: roles, sampleRate: rate)
                let full = try LoudnessMeter(roles: roles, sampleRate: rate, screensTruePeak: false)
                let frames = samples.count / channels
                var done = 0
                try samples.withUnsafeBufferPointer { buffer in
                    while done < frames {
                        // Uneven calls, from a few frames to several blocks.
                        let count = min(frames - done, 1 + Int(abs(sizes.next()) * 5000))
                        try screened.add(buffer.baseAddress! + done * channels, frameCount: count)
                        try full.add(buffer.baseAddress! + done * channels, frameCount: count)
                        done += count
                    }
                }
                for channel in 0 ..< channels {
                    #expect(
                        screened.truePeak(channel: channel) == full.truePeak(channel: channel),
                        "\(name), \(channels) ch at \(rate) Hz, channel \(channel)")
                    #expect(screened.samplePeak(channel: channel) == full.samplePeak(channel: channel))
                }
                #expect(screened.integratedLUFS == full.integratedLUFS)
            }
        }
    }

    /// The library's interpolator answers an impulse with its coefficients: each frame's highest
    /// output over the phases is the largest coefficient magnitude at that delay.
    @Test(arguments: [44100, 48000, 96000])
    func modelMatchesTheLibrarysImpulseResponse(rate: Int) throws {
        let screen = TruePeakScreen(sampleRate: rate)
        var state = ebur128_init(1, UInt(rate), Int32(bitPattern: EBUR128_MODE_TRUE_PEAK.rawValue))
        try #require(state != nil)
        defer { ebur128_destroy(&state) }
        for delay in 0 ..< screen.span {
            var frame: Float = delay == 0 ? 1 : 0
            #expect(ebur128_add_frames_float(state, &frame, 1) == 0)
            var measured = 0.0
            #expect(ebur128_prev_true_peak(state, 0, &measured) == 0)
            // The first frame's reading includes its sample peak (1).
            let largest = screen.coefficients.map { Double(Float(abs($0[delay]))) }.max() ?? 0
            let expected = delay == 0 ? max(largest, 1) : largest
            #expect(abs(measured - expected) <= 1e-7 * max(expected, 1), "delay \(delay) at \(rate) Hz")
        }
        #expect(screen.span == (rate < 96000 ? 13 : 25))
    }

    @Test func aSmoothProgrammeIsMostlyScreenedOut() throws {
        let rate = 48000
        let samples = Self.programmes(channels: 1, rate: rate)[1].1
        let meter = try LoudnessMeter(roles: [.left], sampleRate: rate)
        try samples.withUnsafeBufferPointer { try meter.add($0.baseAddress!, frameCount: samples.count) }
        #expect(meter.blocksScreened == (samples.count + 1023) / 1024)
        // The tone swells once in the first 1.3 s and twice more to the same height: only the
        // blocks near each new height are oversampled.
        #expect(meter.blocksMeasured * 4 < meter.blocksScreened)
    }
}
