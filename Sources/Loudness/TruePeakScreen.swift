// Which blocks could raise a channel's true peak: a bound on what libebur128's oversampling
// interpolator can output over a block, from the block's sample peak and its first and second
// differences, so only blocks that could beat the highest true peak so far are oversampled.
// Pure arithmetic; any one thread (the thread that owns its `LoudnessMeter`).

import CEbur128

/// The bound on libebur128's true-peak interpolator. libebur128 (1.2.x) oversamples by 4 below
/// 96 kHz and by 2 below 192 kHz with a 49-tap Hann-windowed sinc in polyphase form (every
/// coefficient under 1e-6 dropped), and does not oversample at 192 kHz and above (its true peak
/// is then the sample peak). `LoudnessTests` checks this model against the library's own impulse
/// response, so a library that changes its filter fails the test instead of being misread.
///
/// Each phase's output is y = Σₖ cₖ·x[n−k]. With l the linear interpolation between the two
/// samples around the phase's point and d = c − l, summing by parts twice gives
/// |y| ≤ M0·(1 + |Σd|) + M1·|ΣT| + M2·Σ|W|, where T and W are the once- and twice-summed tails
/// of d, and M0, M1, M2 are the largest |x|, |Δx| and |Δ²x| over the samples the outputs see.
/// The smooth, loud parts of a programme (where the peaks are) have small Δx and Δ²x, so the
/// bound sits just above the sample peak there.
public struct TruePeakScreen: Sendable, Equatable {
    /// libebur128's oversampling factor at the rate (1: none).
    public let factor: Int
    /// Input samples each output depends on (libebur128's delay line).
    public let span: Int
    /// The bound's weights on M0, M1 and M2 (the worst phase for each).
    public let peakWeight: Double
    public let slopeWeight: Double
    public let curvatureWeight: Double
    /// Every phase's coefficients, by phase then delay (0 where libebur128 drops one).
    public let coefficients: [[Double]]

    /// Relative slack on the bound for rounding (the library sums in double and stores float).
    static let slack = 1e-6

    public init(sampleRate: Int) {
        factor = sampleRate < 96000 ? 4 : sampleRate < 192000 ? 2 : 1
        let taps = 49
        span = factor == 1 ? 1 : (taps + factor - 1) / factor
        guard factor > 1 else {
            coefficients = [[1]]
            peakWeight = 1
            slopeWeight = 0
            curvatureWeight = 0
            return
        }
        var phases = Array(repeating: Array(repeating: 0.0, count: span), count: factor)
        for tap in 0 ..< taps {
            let offset = Double(tap) - Double(taps - 1) / 2
            var c = 1.0
            if abs(offset) > 1e-6 {
                let x = offset * Double.pi / Double(factor)
                c = micmon_ebur128_sin(x) / x
            }
            c *= 0.5 * (1 - micmon_ebur128_cos(2 * Double.pi * Double(tap) / Double(taps - 1)))
            if abs(c) > 1e-6 { phases[tap % factor][tap / factor] = c }
        }
        coefficients = phases
        var peak = 1.0
        var slope = 0.0
        var curvature = 0.0
        for phase in 0 ..< factor {
            // The phase's point lies `position` samples back from the newest input.
            let position = Double((taps - 1) / 2 - phase) / Double(factor)
            let before = Int(position.rounded(.down))
            let fraction = position - Double(before)
            var d = phases[phase]
            d[before] -= 1 - fraction
            if fraction > 0 { d[before + 1] -= fraction }
            // T[j] = Σ_{k>j} d[k]; W[i] = Σ_{j>i} T[j].
            var tails = Array(repeating: 0.0, count: span)
            var running = 0.0
            for k in stride(from: span - 1, through: 1, by: -1) {
                running += d[k]
                tails[k - 1] = running
            }
            var weights = 0.0
            running = 0
            for j in stride(from: span - 2, through: 1, by: -1) {
                running += tails[j]
                weights += abs(running)
            }
            peak = max(peak, 1 + abs(d.reduce(0, +)))
            slope = max(slope, abs(tails.reduce(0, +)))
            curvature = max(curvature, weights)
        }
        peakWeight = peak
        slopeWeight = slope
        curvatureWeight = curvature
    }

    /// The most any interpolated sample of channel `channel` can be, over the `frameCount`
    /// interleaved frames at `frames` (`stride` floats apart) of which the first `span − 1` are
    /// the samples before the block.
    public func bound(_ frames: UnsafePointer<Float>, frameCount: Int, stride: Int, channel: Int) -> Double {
        guard frameCount > 0 else { return 0 }
        var previous = frames[channel]
        var previousSlope: Float = 0
        var peak = abs(previous)
        var slope: Float = 0
        var curvature: Float = 0
        var index = 1
        while index < frameCount {
            let x = frames[index * stride + channel]
            let dx = x - previous
            peak = max(peak, abs(x))
            slope = max(slope, abs(dx))
            if index > 1 { curvature = max(curvature, abs(dx - previousSlope)) }
            previous = x
            previousSlope = dx
            index += 1
        }
        // The differences are taken in Float: each is within one rounding of the exact one,
        // which the slack covers together with the library's own rounding.
        let bound = Double(peak) * peakWeight + Double(slope) * slopeWeight + Double(curvature) * curvatureWeight
        return bound * (1 + Self.slack)
    }
}
