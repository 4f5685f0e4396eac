import Foundation
import Testing

@testable import DSP

/// The round-trip estimator on synthetic returns of the measurement signal: a known delay
/// (integer, or fractional through a windowed-sinc filter), gain, polarity and noise, fed in
/// 256-frame periods as JACK would deliver them.
@Suite("Delay estimator")
struct DelayEstimatorTests {
    static let signal = MeasurementSignal()
    static let sampleRate = 48000.0

    /// The emitted timeline: silence before frame 0, then the periodic signal.
    static func emitted(_ frame: Int) -> Double {
        frame < 0 ? 0 : Double(signal.value(at: frame))
    }

    /// A deterministic Gaussian source (SplitMix64 + Box–Muller).
    struct Noise {
        var state: UInt64
        mutating func next() -> Double {
            func uniform() -> Double {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                z ^= z >> 31
                return (Double(z >> 11) + 0.5) / 9_007_199_254_740_992
            }
            return (-2 * log(uniform())).squareRoot() * cos(2 * .pi * uniform())
        }
    }

    /// The taps of a windowed-sinc (Blackman, ±32 taps) fractional delay of `delay` frames, as
    /// (first tap's delay, taps), normalized to unit gain at DC.
    static func fractionalDelayFilter(_ delay: Double, halfLength: Int = 32) -> (Int, [Double]) {
        let whole = Int(delay.rounded(.down))
        let first = whole - halfLength + 1
        var taps: [Double] = []
        for j in first ... whole + halfLength {
            let t = Double(j) - delay
            let sinc = t == 0 ? 1 : sin(.pi * t) / (.pi * t)
            let x = t / Double(halfLength)
            let window = abs(x) >= 1 ? 0 : 0.42 + 0.5 * cos(.pi * x) + 0.08 * cos(2 * .pi * x)
            taps.append(sinc * window)
        }
        let sum = taps.reduce(0, +)
        return (first, taps.map { $0 / sum })
    }

    /// `frames` returned frames: the emitted signal delayed by `delay` (exactly when it is an
    /// integer, else through the fractional-delay filter), times `gain`, plus noise at `snr` dB
    /// below the returned signal's RMS.
    static func returned(delay: Double, gain: Double = 1, frames: Int, snr: Double? = nil, seed: UInt64 = 1) -> [Float]
    {
        var out = [Float](repeating: 0, count: frames)
        if delay == delay.rounded() {
            let d = Int(delay)
            for m in 0 ..< frames { out[m] = Float(gain * emitted(m - d)) }
        } else {
            let (first, taps) = fractionalDelayFilter(delay)
            for m in 0 ..< frames {
                var sum = 0.0
                for (index, tap) in taps.enumerated() { sum += tap * emitted(m - first - index) }
                out[m] = Float(gain * sum)
            }
        }
        if let snr {
            let signalRMS =
                (signal.samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(signal.period)).squareRoot()
                * abs(gain)
            let sigma = signalRMS * pow(10, -snr / 20)
            var noise = Noise(state: seed)
            for m in 0 ..< frames { out[m] += Float(sigma * noise.next()) }
        }
        return out
    }

    /// Feeds `samples` in periods of `period` frames; returns every measurement.
    static func measure(_ samples: [Float], estimator: DelayEstimator, period: Int = 256) -> [DelayMeasurement] {
        var found: [DelayMeasurement] = []
        var start = 0
        while start < samples.count {
            let end = min(start + period, samples.count)
            found += estimator.append(Array(samples[start ..< end]))
            start = end
        }
        return found
    }

    static func estimator(maximumDelayFrames: Int = 96000) -> DelayEstimator {
        DelayEstimator(signal: signal, maximumDelayFrames: maximumDelayFrames)
    }

    // MARK: Building blocks

    @Test("the FFT matches a direct DFT, and the inverse undoes it")
    func fourierTransform() {
        let n = 64
        var noise = Noise(state: 7)
        let x = (0 ..< n).map { _ in noise.next() }
        let y = (0 ..< n).map { _ in noise.next() }
        var re = x
        var im = y
        re.withUnsafeMutableBufferPointer { r in
            im.withUnsafeMutableBufferPointer { i in
                FourierTransform(size: n).transform(r.baseAddress!, i.baseAddress!, inverse: false)
            }
        }
        for k in 0 ..< n {
            var sr = 0.0
            var si = 0.0
            for t in 0 ..< n {
                let angle = -2 * Double.pi * Double(k * t) / Double(n)
                sr += x[t] * cos(angle) - y[t] * sin(angle)
                si += x[t] * sin(angle) + y[t] * cos(angle)
            }
            #expect(abs(sr - re[k]) < 1e-9 && abs(si - im[k]) < 1e-9, "bin \(k)")
        }
        re.withUnsafeMutableBufferPointer { r in
            im.withUnsafeMutableBufferPointer { i in
                FourierTransform(size: n).transform(r.baseAddress!, i.baseAddress!, inverse: true)
            }
        }
        for t in 0 ..< n { #expect(abs(re[t] / Double(n) - x[t]) < 1e-12 && abs(im[t] / Double(n) - y[t]) < 1e-12) }
    }

    @Test("atan2 without libm matches Foundation's")
    func arcTangent() {
        for y in stride(from: -3.0, through: 3.0, by: 0.37) {
            for x in stride(from: -3.0, through: 3.0, by: 0.41) {
                #expect(abs(DSPMath.atan2(y, x) - Foundation.atan2(y, x)) < 1e-14, "atan2(\(y), \(x))")
            }
        }
        #expect(DSPMath.atan2(0, -1) == .pi)
        #expect(DSPMath.atan2(1, 0) == .pi / 2)
    }

    @Test("the measurement signal: peak as asked, low crest factor, band-limited, a sharp autocorrelation")
    func measurementSignal() {
        let signal = Self.signal
        #expect(signal.period == 4096)
        let peak = signal.samples.map { abs($0) }.max()!
        #expect(abs(peak - 0.5) < 1e-6)
        let rms = (signal.samples.reduce(0.0) { $0 + Double($1) * Double($1) } / 4096).squareRoot()
        #expect(Double(peak) / rms < 2.0, "crest factor \(Double(peak) / rms)")
        let analysis = Self.estimator().circularDelay(of: signal.samples.withUnsafeBufferPointer { $0 })
        #expect(abs(analysis.lag) < 1e-9 || abs(analysis.lag - 4096) < 1e-9)
        #expect(analysis.peakToNoise > 1000)
        #expect(!analysis.isInverted)
        #expect(abs(analysis.gain - 1) < 1e-9)
    }

    // MARK: Known delays

    @Test("integer delays are exact, from the first estimate on", arguments: [0, 1, 64, 255, 256, 300, 1000, 4095])
    func integerDelay(_ delay: Int) throws {
        let estimator = Self.estimator()
        let found = Self.measure(Self.returned(delay: Double(delay), gain: 0.7, frames: 48000), estimator: estimator)
        #expect(estimator.state == .locked)
        #expect(found.count >= 8)
        for measurement in found {
            #expect(abs(measurement.delayFrames - Double(delay)) < 1e-6, "\(measurement.delayFrames)")
            #expect(!measurement.isInverted)
            #expect(abs(measurement.gainDecibels - 20 * log10(0.7)) < 0.01)
        }
        // Lock within 0.25 s at 48 kHz.
        #expect(try #require(estimator.lockFrame) <= 12000)
        #expect(estimator.windowsWithoutSignal == 0)
    }

    @Test(
        "fractional delays (windowed-sinc filter) within 0.01 frame",
        arguments: [100.25, 256.5, 333.75, 1000.1, 2047.9])
    func fractionalDelay(_ delay: Double) {
        let estimator = Self.estimator()
        let found = Self.measure(Self.returned(delay: delay, frames: 40000), estimator: estimator)
        #expect(found.count >= 6)
        for measurement in found {
            #expect(abs(measurement.delayFrames - delay) < 0.01, "\(measurement.delayFrames) for \(delay)")
        }
        let spread = found.map(\.delayFrames).max()! - found.map(\.delayFrames).min()!
        #expect(spread < 1e-6)
    }

    @Test("inverted polarity is detected and the delay still found", arguments: [256.0, 517.4])
    func invertedPolarity(_ delay: Double) {
        let estimator = Self.estimator()
        let found = Self.measure(Self.returned(delay: delay, gain: -0.25, frames: 30000), estimator: estimator)
        #expect(!found.isEmpty)
        for measurement in found {
            #expect(measurement.isInverted)
            #expect(abs(measurement.delayFrames - delay) < 0.01)
            #expect(abs(measurement.gainDecibels - 20 * log10(0.25)) < 0.05)
        }
    }

    @Test("noise at 10 dB SNR: every estimate within 0.05 frame, the mean within 0.01", arguments: [256.0, 731.3])
    func noisy(_ delay: Double) throws {
        let estimator = Self.estimator()
        let found = Self.measure(
            Self.returned(delay: delay, gain: 0.3, frames: 96000, snr: 10, seed: 42), estimator: estimator)
        #expect(found.count >= 15)
        for measurement in found {
            #expect(abs(measurement.delayFrames - delay) < 0.05, "\(measurement.delayFrames)")
            #expect(measurement.peakToNoiseDecibels > 30)
        }
        let mean = found.map(\.delayFrames).reduce(0, +) / Double(found.count)
        #expect(abs(mean - delay) < 0.01)
        #expect(try #require(estimator.lockFrame) <= 12000)
    }

    static let longDelays: [Double] = [512, 6144, 4096, 4095.7, 5000.5, 9000, 12305.25, 40000]

    @Test("delays longer than a JACK period and than the signal period are resolved", arguments: longDelays)
    func longDelay(_ delay: Double) throws {
        let estimator = Self.estimator()
        let found = Self.measure(
            Self.returned(delay: delay, gain: 0.1, frames: Int(delay) + 30000), estimator: estimator)
        #expect(found.count >= 5)
        for measurement in found {
            #expect(abs(measurement.delayFrames - delay) < 0.01, "\(measurement.delayFrames) for \(delay)")
        }
        // The first estimate needs the onset, a margin, and one signal period.
        let lock = try #require(estimator.lockFrame)
        #expect(lock >= Int(delay) + 4096 && lock <= Int(delay) + 4096 + 1024 + 128 + 1)
    }

    // MARK: Nothing coming back

    @Test("pure noise is not a signal, whatever its level", arguments: [1.0, 0.01, 1e-4])
    func pureNoise(_ level: Double) {
        let estimator = Self.estimator()
        var noise = Noise(state: 99)
        let samples = (0 ..< 48000).map { _ in Float(level * noise.next()) }
        let found = Self.measure(samples, estimator: estimator)
        #expect(found.isEmpty)
        #expect(estimator.state == .noSignal)
        #expect(estimator.lockFrame == nil)
        #expect(estimator.windowsAnalysed > 30)
    }

    @Test("silence says nothing comes back")
    func silence() {
        let estimator = Self.estimator()
        #expect(Self.measure([Float](repeating: 0, count: 20000), estimator: estimator).isEmpty)
        #expect(estimator.state == .silence)
    }

    @Test("the signal buried 20 dB under noise is not claimed as a lock with a wrong delay")
    func buried() {
        let estimator = Self.estimator()
        let found = Self.measure(
            Self.returned(delay: 300, gain: 0.01, frames: 48000, snr: -30, seed: 5), estimator: estimator)
        // At −30 dB SNR the correlation gain (≈ 36 dB) leaves the peak near the threshold:
        // anything it reports must still be right.
        for measurement in found { #expect(abs(measurement.delayFrames - 300) < 0.5) }
    }

    @Test("an onset beyond the maximum measurable delay is reported, not guessed")
    func beyondRange() {
        let estimator = Self.estimator(maximumDelayFrames: 8192)
        let found = Self.measure(Self.returned(delay: 20000, frames: 40000), estimator: estimator)
        #expect(found.isEmpty)
        #expect(estimator.state == .beyondRange)
    }

    @Test("a gap in the return (lost frames) keeps the timeline and the delay")
    func gap() {
        let estimator = Self.estimator()
        let samples = Self.returned(delay: 480, frames: 60000)
        var found = Self.measure(Array(samples[0 ..< 20000]), estimator: estimator)
        found += estimator.skip(frames: 1024)
        found += Self.measure(Array(samples[21024...]), estimator: estimator)
        #expect(found.count >= 10)
        for measurement in found { #expect(abs(measurement.delayFrames - 480) < 1e-6) }
    }

    @Test("a disturbance of the signal sent (a period replaced by the next) skips the windows it returns in")
    func disturbance() {
        let delay = 480
        let jump = 30000
        // The signal sent, with its period of 256 frames from `jump` on replaced by the next one
        // (on PipeWire a late cycle's output is never read: the repeat's, a period on, is).
        func sent(_ frame: Int) -> Float {
            let source = (jump ..< jump + 256).contains(frame) ? frame + 256 : frame
            return Float(Self.emitted(source))
        }
        let samples = (0 ..< 60000).map { sent($0 - delay) }
        // Unmarked, a window over the returned jump measures it.
        let unmarked = Self.measure(samples, estimator: Self.estimator())
        #expect(unmarked.contains { abs($0.delayFrames - Double(delay)) > 1e-6 })
        let estimator = Self.estimator()
        var found = Self.measure(Array(samples[0 ..< jump]), estimator: estimator)
        estimator.markDisturbance(atEmittedFrame: jump, margin: 512)
        found += Self.measure(Array(samples[jump...]), estimator: estimator)
        #expect(found.count >= 10)
        for measurement in found { #expect(abs(measurement.delayFrames - Double(delay)) < 1e-6) }
    }

    @Test("a disturbance before lock costs only the windows it returns in, not the whole delay range")
    func disturbanceBeforeLock() {
        let delay = 480
        let jumps = [512, 1536]
        func sent(_ frame: Int) -> Float {
            let source = jumps.contains { ($0 ..< $0 + 256).contains(frame) } ? frame + 256 : frame
            return Float(Self.emitted(source))
        }
        let samples = (0 ..< 30000).map { sent($0 - delay) }
        let estimator = Self.estimator()
        for jump in jumps { estimator.markDisturbance(atEmittedFrame: jump, margin: 512) }
        let found = Self.measure(samples, estimator: estimator)
        // The first window clear of both returned jumps starts at 2560 (1536 + 480 + 512, up to
        // the hop of 256) and locks: long before the 96 000 frames the delay could be.
        #expect(estimator.lockFrame == 2560 + 4096, "\(String(describing: estimator.lockFrame))")
        #expect(estimator.windowsDisturbed > 0)
        #expect(found.count >= 5)
        for measurement in found { #expect(abs(measurement.delayFrames - Double(delay)) < 1e-6) }
    }
}
