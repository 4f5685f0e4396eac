// Per-channel sample-peak and average-power meters with ballistics.
//
// Convention (see `Decibels`): levels are dBFS relative to a full-scale square wave (or DC at
// ±1.0), so a full-scale sine reads 0.00 dBFS peak and −3.01 dBFS RMS. AES17 would read the
// RMS of a sine 3.01 dB higher (a full-scale sine = 0 dB); add `Decibels.aes17Offset` for that.

/// Ballistics constants, derived from the sample rate. Compute them off the realtime thread
/// (the initialiser calls `exp`), hand them to the kernel by value.
public struct MeterCoefficients: Sendable, BitwiseCopyable, Equatable {
    /// IEC 60268-18 peak fall-back: 20 dB in 1.7 s (≈ 11.76 dB/s).
    public static let defaultFallbackDecibelsPerSecond = 20.0 / 1.7
    /// Time constant of the average-power (RMS) integrator: 300 ms, VU-like.
    public static let defaultRMSTimeConstant = 0.300
    /// How long the peak hold keeps its value before falling back: 2 s.
    public static let defaultHoldSeconds = 2.0

    /// Sample rate these coefficients were made for, in Hz.
    public let sampleRate: Double
    /// Per-sample multiplicative decay of the ballistic peak and of a released hold:
    /// 10^(−fallback / 20 / sampleRate), i.e. a straight line in dB.
    public let peakDecay: Double
    /// Per-sample weight the power integrator keeps: e^(−1 / (τ · sampleRate)).
    public let rmsRetain: Double
    /// Per-sample weight of the new x²: 1 − `rmsRetain`. After a step, the mean square reaches
    /// (1 − 1/e) of its final value after τ seconds.
    public let rmsGain: Double
    /// Frames the hold keeps its value after the last sample that reached it.
    public let holdFrames: Int
    /// Longest run of frames `ChannelMeter.processStereo` checks at once for its fast loop.
    public static let fastRunFrames = 4096
    /// A ballistic peak at least this high stays above the 1e-10 flush floor for
    /// `fastRunFrames` frames of pure decay, roundings included (`processStereo` uses it).
    public let peakStaysAboveFloor: Double
    /// A mean square at least this high stays above the 1e-20 flush floor for `fastRunFrames`
    /// frames of pure decay, roundings included.
    public let meanSquareStaysAboveFloor: Double

    /// Any thread except the realtime one (calls `exp`).
    /// - Parameters:
    ///   - sampleRate: in Hz, > 0.
    ///   - fallbackDecibelsPerSecond: peak and hold fall-back rate, ≥ 0 (default 20 dB / 1.7 s).
    ///   - rmsTimeConstant: integration time τ of the mean square in seconds, > 0 (default 0.3).
    ///   - holdSeconds: peak-hold time in seconds, ≥ 0 (default 2).
    public init(
        sampleRate: Double,
        fallbackDecibelsPerSecond: Double = defaultFallbackDecibelsPerSecond,
        rmsTimeConstant: Double = defaultRMSTimeConstant,
        holdSeconds: Double = defaultHoldSeconds
    ) {
        precondition(sampleRate > 0 && sampleRate.isFinite, "sample rate must be positive")
        precondition(fallbackDecibelsPerSecond >= 0, "fall-back rate must be ≥ 0")
        precondition(rmsTimeConstant > 0, "RMS time constant must be positive")
        precondition(holdSeconds >= 0, "hold time must be ≥ 0")
        self.sampleRate = sampleRate
        self.peakDecay = DSPMath.amplitude(decibels: -fallbackDecibelsPerSecond / sampleRate)
        self.rmsRetain = DSPMath.exp(-1 / (rmsTimeConstant * sampleRate))
        self.rmsGain = 1 - rmsRetain
        self.holdFrames = DSPMath.roundToInt(holdSeconds * sampleRate)
        self.peakStaysAboveFloor = Self.staysAboveFloor(1e-10, factor: peakDecay)
        self.meanSquareStaysAboveFloor = Self.staysAboveFloor(1e-20, factor: rmsRetain)
    }

    /// The smallest start value of x(k+1) ≥ round(x(k) · factor) (factor ≤ 1) that cannot fall
    /// under `floor` within `fastRunFrames` steps. Round-to-nearest keeps at least
    /// x · factor · (1 − 2⁻⁵³) per step; this assumes 1 − 2⁻⁴⁰, which also covers the roundings
    /// of computing the bound, and adds a margin of 2⁻²⁰ on top. +∞ (never) when the decay is
    /// too steep for a bound. Not for the realtime thread (a loop).
    static func staysAboveFloor(_ floor: Double, factor: Double) -> Double {
        var keep = factor * (1 - 0x1p-40)
        var steps = 1
        while steps < fastRunFrames {
            keep *= keep
            steps *= 2
        }
        guard keep > 1e-300 else { return .infinity }
        return floor / keep * (1 + 0x1p-20)
    }
}

/// The meter state of one channel: plain bits, kept in memory the realtime thread owns and
/// advanced once per period by `process`. Every quantity is a per-sample recurrence, so the
/// state after a signal is bit-identical whatever period sizes it arrived in.
public struct ChannelMeter: Sendable, BitwiseCopyable, Equatable {
    /// Ballistic sample peak, linear: instant attack, falls back by `peakDecay` per sample.
    public var peak: Double = 0
    /// Peak hold, linear: the highest peak, kept `holdFrames`, then falls like `peak`; ≥ `peak`.
    public var hold: Double = 0
    /// Frames left before the hold starts to fall.
    public var holdFramesLeft: Int = 0
    /// Exponentially integrated x², linear power (time constant τ = 300 ms by default).
    public var meanSquare: Double = 0
    /// Highest |x| since start.
    public var maxPeak: Double = 0
    /// Samples with |x| ≥ 1.0 since start. NaN and ±∞ count here too (and meter as 0).
    public var clipCount: UInt64 = 0
    /// Samples that were NaN or ±∞ since start, counted apart from the clips (they are in
    /// `clipCount` too, and meter as silence, so a level never hides them).
    public var nonFiniteCount: UInt64 = 0
    /// Σx² since start (for the session's mean RMS: sumOfSquares / frameCount).
    public var sumOfSquares: Double = 0
    /// Samples metered since start.
    public var frameCount: UInt64 = 0

    public init() {}

    /// Meters one period of one channel. Realtime thread: no locks, no allocation, no C calls.
    ///
    /// A handful of scalar operations per sample (docs/benchmarks.md has its cost). Values under
    /// −200 dB are flushed to 0 so long silences never reach denormals.
    @_noLocks @_noAllocation
    public mutating func process(_ samples: UnsafePointer<Float>, count: Int, coefficients c: MeterCoefficients) {
        let decay = c.peakDecay
        let retain = c.rmsRetain
        let gain = c.rmsGain
        let holdFrames = c.holdFrames
        var peak = self.peak
        var hold = self.hold
        var holdLeft = self.holdFramesLeft
        var meanSquare = self.meanSquare
        var maxPeak = self.maxPeak
        var clips = self.clipCount
        var nonFinite = self.nonFiniteCount
        var sum = self.sumOfSquares
        var i = 0
        while i < count {
            var x = Double(samples[i])
            var a = x.magnitude
            if !(a < 1) {  // |x| ≥ 1, or NaN
                clips &+= 1
                if !(a <= .greatestFiniteMagnitude) {  // NaN, ±∞: counted apart, metered as silence
                    nonFinite &+= 1
                    x = 0
                    a = 0
                }
            }
            let square = x * x
            sum += square
            meanSquare = meanSquare * retain + square * gain
            if meanSquare < 1e-20 { meanSquare = 0 }

            let fallen = peak * decay
            peak = a > fallen ? a : fallen
            if peak < 1e-10 { peak = 0 }

            if a >= hold {
                hold = a
                holdLeft = holdFrames
            } else if holdLeft > 0 {
                holdLeft -= 1
            } else {
                let h = hold * decay
                hold = h > peak ? h : peak
                if hold < 1e-10 { hold = 0 }
            }
            maxPeak = a > maxPeak ? a : maxPeak
            i += 1
        }
        self.peak = peak
        self.hold = hold
        self.holdFramesLeft = holdLeft
        self.meanSquare = meanSquare
        self.maxPeak = maxPeak
        self.clipCount = clips
        self.nonFiniteCount = nonFinite
        self.sumOfSquares = sum
        self.frameCount &+= UInt64(truncatingIfNeeded: count)
    }

    /// Meters one period of two channels at once: `meters[0]` from `left`, `meters[1]` from
    /// `right`. Bit-identical to calling `process` on each channel: the same per-sample
    /// recurrences in the same order, one channel per SIMD lane, with the branches turned into
    /// selects. Realtime thread: no locks, no allocation, no C calls.
    ///
    /// It goes through the period in runs of up to `MeterCoefficients.fastRunFrames` frames. A
    /// first pass over a run (4 samples at a time) finds each channel's largest |x| and whether
    /// any sample clips or is not finite. When, on both channels, no sample clips, the hold
    /// counts down through the whole run and no sample reaches it, and the peak and the mean
    /// square are high enough that they cannot decay to their flush floors within the run, the
    /// per-sample loop leaves out what cannot change: clip counting, the NaN guard, the flushes,
    /// the hold (it keeps its value; its counter drops by the run's length) and the session
    /// maximum (the run's largest |x|: the maximum of non-NaN values does not depend on their
    /// order). Otherwise the run takes the full loop.
    ///
    /// The hold counter runs as a Double lane (exact below 2^53 frames); a hold longer than
    /// that (never from `MeterCoefficients` at any real rate) takes the per-channel path.
    @_noLocks @_noAllocation
    public static func processStereo(
        _ meters: UnsafeMutablePointer<ChannelMeter>, left: UnsafePointer<Float>,
        right: UnsafePointer<Float>, count: Int, coefficients c: MeterCoefficients
    ) {
        guard count > 0 else { return }
        // SAFETY: the caller passes two initialized meters.
        let l = meters[0]
        let r = meters[1]
        guard c.holdFrames < 1 << 53, l.holdFramesLeft < 1 << 53, r.holdFramesLeft < 1 << 53 else {
            // SAFETY: the caller passes two meters and two inputs of `count` samples.
            meters[0].process(left, count: count, coefficients: c)
            // SAFETY: as above.
            meters[1].process(right, count: count, coefficients: c)
            return
        }
        typealias Lanes = SIMD2<Double>
        let decay = Lanes(repeating: c.peakDecay)
        let retain = Lanes(repeating: c.rmsRetain)
        let gain = Lanes(repeating: c.rmsGain)
        let zero = Lanes(repeating: 0)
        let msFloor = Lanes(repeating: 1e-20)
        let peakFloor = Lanes(repeating: 1e-10)
        let peakSafe = Lanes(repeating: c.peakStaysAboveFloor)
        let msSafe = Lanes(repeating: c.meanSquareStaysAboveFloor)
        var peak = Lanes(l.peak, r.peak)
        var hold = Lanes(l.hold, r.hold)
        var holdLeft = Lanes(Double(l.holdFramesLeft), Double(r.holdFramesLeft))
        var meanSquare = Lanes(l.meanSquare, r.meanSquare)
        var maxPeak = Lanes(l.maxPeak, r.maxPeak)
        var clips = SIMD2<UInt64>(l.clipCount, r.clipCount)
        var nonFinite = SIMD2<UInt64>(l.nonFiniteCount, r.nonFiniteCount)
        var sum = Lanes(l.sumOfSquares, r.sumOfSquares)

        var start = 0
        while start < count {
            let n = min(count &- start, MeterCoefficients.fastRunFrames)
            // SAFETY: start + n ≤ count, and both inputs hold `count` samples.
            let runLeft = left + start
            let runRight = right + start
            let run = scan(runLeft, runRight, count: n)
            let frames = Lanes(repeating: Double(n))
            let isSteady =
                (run.largest .< hold) .& (holdLeft .>= frames) .& (peak .>= peakSafe) .& (meanSquare .>= msSafe)
            var i = 0
            if run.isClean && all(isSteady) {
                while i < n {
                    // SAFETY: i < n samples of the run.
                    let a = Lanes(Double(runLeft[i].magnitude), Double(runRight[i].magnitude))
                    let square = a * a
                    sum += square
                    meanSquare = meanSquare * retain + square * gain
                    let fallen = peak * decay
                    peak = fallen.replacing(with: a, where: a .> fallen)
                    i &+= 1
                }
                holdLeft -= frames
                maxPeak = maxPeak.replacing(with: run.largest, where: run.largest .> maxPeak)
            } else {
                let one = Lanes(repeating: 1)
                let greatest = Lanes(repeating: .greatestFiniteMagnitude)
                let holdFrames = Lanes(repeating: Double(c.holdFrames))
                let clipStep = SIMD2<UInt64>(repeating: 1)
                let noClip = SIMD2<UInt64>(repeating: 0)
                while i < n {
                    // |x| in Float, then widened: the same value as Double(x).magnitude. x² = |x|²
                    // exactly, so the per-channel path's signed x is not needed.
                    // SAFETY: i < n samples of the run.
                    var a = Lanes(Double(runLeft[i].magnitude), Double(runRight[i].magnitude))
                    // |x| ≥ 1, or NaN: a clip. NaN and ±∞ are also counted apart, then meter as silence.
                    clips &+= noClip.replacing(with: clipStep, where: .!(a .< one))
                    let isNonFinite = .!(a .<= greatest)
                    nonFinite &+= noClip.replacing(with: clipStep, where: isNonFinite)
                    a.replace(with: zero, where: isNonFinite)
                    let square = a * a
                    sum += square
                    meanSquare = meanSquare * retain + square * gain
                    meanSquare.replace(with: zero, where: meanSquare .< msFloor)

                    let fallen = peak * decay
                    peak = fallen.replacing(with: a, where: a .> fallen)
                    peak.replace(with: zero, where: peak .< peakFloor)

                    // Hold: reset by a sample that reaches it, else count down, else fall (not below peak).
                    let reset = a .>= hold
                    let counting = holdLeft .> zero
                    let h = hold * decay
                    var fell = peak.replacing(with: h, where: h .> peak)
                    fell.replace(with: zero, where: fell .< peakFloor)
                    hold = fell.replacing(with: hold, where: counting).replacing(with: a, where: reset)
                    holdLeft = holdLeft.replacing(with: holdLeft - one, where: counting).replacing(
                        with: holdFrames, where: reset)

                    maxPeak = maxPeak.replacing(with: a, where: a .> maxPeak)
                    i &+= 1
                }
            }
            start &+= n
        }
        let frames = UInt64(truncatingIfNeeded: count)
        // SAFETY: the caller passes two initialized meters.
        meters[0].store(
            peak: peak[0], hold: hold[0], holdLeft: holdLeft[0], meanSquare: meanSquare[0],
            maxPeak: maxPeak[0], clips: clips[0], nonFinite: nonFinite[0], sum: sum[0], frames: frames)
        // SAFETY: as above.
        meters[1].store(
            peak: peak[1], hold: hold[1], holdLeft: holdLeft[1], meanSquare: meanSquare[1],
            maxPeak: maxPeak[1], clips: clips[1], nonFinite: nonFinite[1], sum: sum[1], frames: frames)
    }

    /// Meters one period of `channelCount` channels: `meters[k]` from `inputs[k]`. Bit-identical
    /// to calling `process` on each channel: four channels at a time in SIMD lanes
    /// (`processQuad`), then a pair (`processStereo`), then one (`process`), so the cost per
    /// channel falls as the count grows. Realtime thread: no locks, no allocation, no C calls.
    @_noLocks @_noAllocation
    public static func processChannels(
        _ meters: UnsafeMutablePointer<ChannelMeter>, inputs: UnsafePointer<UnsafePointer<Float>>,
        channelCount: Int, count: Int, coefficients c: MeterCoefficients
    ) {
        var channel = 0
        while channel &+ 4 <= channelCount {
            // SAFETY: the caller passes `channelCount` meters and inputs; channel + 4 ≤ channelCount.
            processQuad(meters + channel, inputs: inputs + channel, count: count, coefficients: c)
            channel &+= 4
        }
        if channel &+ 2 <= channelCount {
            // SAFETY: as above, channel + 2 ≤ channelCount.
            processStereo(
                meters + channel, left: inputs[channel], right: inputs[channel &+ 1], count: count, coefficients: c)
            channel &+= 2
        }
        if channel < channelCount {
            // SAFETY: as above, channel < channelCount.
            meters[channel].process(inputs[channel], count: count, coefficients: c)
        }
    }

    /// Meters one period of four channels at once: `meters[k]` from `inputs[k]`, k < 4. The
    /// algorithm of `processStereo` (the same recurrences in the same order, one channel per
    /// lane, runs of `MeterCoefficients.fastRunFrames` with their fast loop), four lanes wide;
    /// bit-identical to calling `process` on each channel. Realtime thread.
    @_noLocks @_noAllocation
    public static func processQuad(
        _ meters: UnsafeMutablePointer<ChannelMeter>, inputs: UnsafePointer<UnsafePointer<Float>>,
        count: Int, coefficients c: MeterCoefficients
    ) {
        guard count > 0 else { return }
        // SAFETY: the caller passes four initialized meters and four inputs of `count` samples.
        let m0 = meters[0]
        // SAFETY: as above.
        let m1 = meters[1]
        // SAFETY: as above.
        let m2 = meters[2]
        // SAFETY: as above.
        let m3 = meters[3]
        // SAFETY: as above.
        let in0 = inputs[0]
        // SAFETY: as above.
        let in1 = inputs[1]
        // SAFETY: as above.
        let in2 = inputs[2]
        // SAFETY: as above.
        let in3 = inputs[3]
        let limit = 1 << 53
        guard
            c.holdFrames < limit, m0.holdFramesLeft < limit, m1.holdFramesLeft < limit,
            m2.holdFramesLeft < limit, m3.holdFramesLeft < limit
        else {
            var k = 0
            while k < 4 {
                // SAFETY: four meters and four inputs of `count` samples.
                meters[k].process(inputs[k], count: count, coefficients: c)
                k &+= 1
            }
            return
        }
        typealias Lanes = SIMD4<Double>
        let decay = Lanes(repeating: c.peakDecay)
        let retain = Lanes(repeating: c.rmsRetain)
        let gain = Lanes(repeating: c.rmsGain)
        let zero = Lanes(repeating: 0)
        let msFloor = Lanes(repeating: 1e-20)
        let peakFloor = Lanes(repeating: 1e-10)
        let peakSafe = Lanes(repeating: c.peakStaysAboveFloor)
        let msSafe = Lanes(repeating: c.meanSquareStaysAboveFloor)
        var peak = Lanes(m0.peak, m1.peak, m2.peak, m3.peak)
        var hold = Lanes(m0.hold, m1.hold, m2.hold, m3.hold)
        var holdLeft = Lanes(
            Double(m0.holdFramesLeft), Double(m1.holdFramesLeft), Double(m2.holdFramesLeft),
            Double(m3.holdFramesLeft))
        var meanSquare = Lanes(m0.meanSquare, m1.meanSquare, m2.meanSquare, m3.meanSquare)
        var maxPeak = Lanes(m0.maxPeak, m1.maxPeak, m2.maxPeak, m3.maxPeak)
        var clips = SIMD4<UInt64>(m0.clipCount, m1.clipCount, m2.clipCount, m3.clipCount)
        var nonFinite = SIMD4<UInt64>(m0.nonFiniteCount, m1.nonFiniteCount, m2.nonFiniteCount, m3.nonFiniteCount)
        var sum = Lanes(m0.sumOfSquares, m1.sumOfSquares, m2.sumOfSquares, m3.sumOfSquares)

        var start = 0
        while start < count {
            let n = min(count &- start, MeterCoefficients.fastRunFrames)
            // SAFETY: start + n ≤ count, and every input holds `count` samples.
            let r0 = in0 + start
            // SAFETY: as above.
            let r1 = in1 + start
            // SAFETY: as above.
            let r2 = in2 + start
            // SAFETY: as above.
            let r3 = in3 + start
            let first = scan(r0, r1, count: n)
            let second = scan(r2, r3, count: n)
            let largest = Lanes(lowHalf: first.largest, highHalf: second.largest)
            let frames = Lanes(repeating: Double(n))
            let isSteady =
                (largest .< hold) .& (holdLeft .>= frames) .& (peak .>= peakSafe) .& (meanSquare .>= msSafe)
            var i = 0
            if first.isClean && second.isClean && all(isSteady) {
                while i < n {
                    // SAFETY: i < n samples of the run.
                    let a = Lanes(
                        Double(r0[i].magnitude), Double(r1[i].magnitude), Double(r2[i].magnitude),
                        Double(r3[i].magnitude))
                    let square = a * a
                    sum += square
                    meanSquare = meanSquare * retain + square * gain
                    let fallen = peak * decay
                    peak = fallen.replacing(with: a, where: a .> fallen)
                    i &+= 1
                }
                holdLeft -= frames
                maxPeak = maxPeak.replacing(with: largest, where: largest .> maxPeak)
            } else {
                let one = Lanes(repeating: 1)
                let greatest = Lanes(repeating: .greatestFiniteMagnitude)
                let holdFrames = Lanes(repeating: Double(c.holdFrames))
                let clipStep = SIMD4<UInt64>(repeating: 1)
                let noClip = SIMD4<UInt64>(repeating: 0)
                while i < n {
                    // |x| in Float, widened; x² = |x|² exactly (see `processStereo`).
                    // SAFETY: i < n samples of the run.
                    var a = Lanes(
                        Double(r0[i].magnitude), Double(r1[i].magnitude), Double(r2[i].magnitude),
                        Double(r3[i].magnitude))
                    clips &+= noClip.replacing(with: clipStep, where: .!(a .< one))
                    let isNonFinite = .!(a .<= greatest)
                    nonFinite &+= noClip.replacing(with: clipStep, where: isNonFinite)
                    a.replace(with: zero, where: isNonFinite)
                    let square = a * a
                    sum += square
                    meanSquare = meanSquare * retain + square * gain
                    meanSquare.replace(with: zero, where: meanSquare .< msFloor)

                    let fallen = peak * decay
                    peak = fallen.replacing(with: a, where: a .> fallen)
                    peak.replace(with: zero, where: peak .< peakFloor)

                    let reset = a .>= hold
                    let counting = holdLeft .> zero
                    let h = hold * decay
                    var fell = peak.replacing(with: h, where: h .> peak)
                    fell.replace(with: zero, where: fell .< peakFloor)
                    hold = fell.replacing(with: hold, where: counting).replacing(with: a, where: reset)
                    holdLeft = holdLeft.replacing(with: holdLeft - one, where: counting).replacing(
                        with: holdFrames, where: reset)

                    maxPeak = maxPeak.replacing(with: a, where: a .> maxPeak)
                    i &+= 1
                }
            }
            start &+= n
        }
        let frames = UInt64(truncatingIfNeeded: count)
        var k = 0
        while k < 4 {
            // SAFETY: four initialized meters.
            meters[k].store(
                peak: peak[k], hold: hold[k], holdLeft: holdLeft[k], meanSquare: meanSquare[k],
                maxPeak: maxPeak[k], clips: clips[k], nonFinite: nonFinite[k], sum: sum[k], frames: frames)
            k &+= 1
        }
    }

    /// Each channel's largest |x| over `count` samples, and whether every sample of both is
    /// under 1 (no clip, no NaN, no ±∞; the largest values mean something only then). Four
    /// samples at a time. Realtime thread.
    @_noLocks @_noAllocation
    @inline(__always)
    static func scan(_ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>, count: Int)
        -> (largest: SIMD2<Double>, isClean: Bool)
    {
        let magnitudeBits = SIMD4<UInt32>(repeating: 0x7FFF_FFFF)
        let one = SIMD4<Float>(repeating: 1)
        var largestLeft = SIMD4<Float>(repeating: 0)
        var largestRight = largestLeft
        var clean = SIMDMask<SIMD4<Int32>>(repeating: true)
        let rawLeft = UnsafeRawPointer(left)
        let rawRight = UnsafeRawPointer(right)
        var i = 0
        while i &+ 4 <= count {
            // SAFETY: i + 4 ≤ count samples; unaligned loads of four Floats, magnitudes by their bits.
            let a = unsafeBitCast(
                rawLeft.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<UInt32>.self) & magnitudeBits,
                to: SIMD4<Float>.self)
            // SAFETY: as above.
            let b = unsafeBitCast(
                rawRight.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<UInt32>.self) & magnitudeBits,
                to: SIMD4<Float>.self)
            clean .&= (a .< one) .& (b .< one)
            largestLeft = largestLeft.replacing(with: a, where: a .> largestLeft)
            largestRight = largestRight.replacing(with: b, where: b .> largestRight)
            i &+= 4
        }
        // Fold the four lanes: [0, 1] against [2, 3], then 0 against 1.
        let pairs = SIMD4<Float>(
            lowHalf: SIMD2(largestLeft[0], largestLeft[1]), highHalf: SIMD2(largestRight[0], largestRight[1]))
        let others = SIMD4<Float>(
            lowHalf: SIMD2(largestLeft[2], largestLeft[3]), highHalf: SIMD2(largestRight[2], largestRight[3]))
        let halves = pairs.replacing(with: others, where: others .> pairs)
        var largest = SIMD2<Float>(
            halves[0] > halves[1] ? halves[0] : halves[1], halves[2] > halves[3] ? halves[2] : halves[3])
        var isClean = all(clean)
        while i < count {
            // SAFETY: i < count samples.
            let a = SIMD2<Float>(left[i].magnitude, right[i].magnitude)
            isClean = isClean && all(a .< SIMD2<Float>(repeating: 1))
            largest = largest.replacing(with: a, where: a .> largest)
            i &+= 1
        }
        return (SIMD2<Double>(Double(largest[0]), Double(largest[1])), isClean)
    }

    /// One lane of `processStereo`'s state back into this meter. Realtime thread.
    @_noLocks @_noAllocation
    @inline(__always)
    mutating func store(
        peak: Double, hold: Double, holdLeft: Double, meanSquare: Double, maxPeak: Double,
        clips: UInt64, nonFinite: UInt64, sum: Double, frames: UInt64
    ) {
        self.peak = peak
        self.hold = hold
        self.holdFramesLeft = Int(holdLeft)
        self.meanSquare = meanSquare
        self.maxPeak = maxPeak
        self.clipCount = clips
        self.nonFiniteCount = nonFinite
        self.sumOfSquares = sum
        self.frameCount &+= frames
    }

    /// What the UI needs of this state: a copy the realtime thread can publish (inlinable, so
    /// `@_noLocks` callers in other modules can see it is a plain copy).
    @inlinable
    public var reading: MeterReading {
        MeterReading(
            peak: peak, hold: hold, meanSquare: meanSquare, maxPeak: maxPeak,
            clipCount: clipCount, sumOfSquares: sumOfSquares, frameCount: frameCount,
            nonFiniteCount: nonFiniteCount)
    }
}
