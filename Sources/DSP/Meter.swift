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
    /// Σx² since start (for the session's mean RMS: sumOfSquares / frameCount).
    public var sumOfSquares: Double = 0
    /// Samples metered since start.
    public var frameCount: UInt64 = 0

    public init() {}

    /// Meters one period of one channel. Realtime thread: no locks, no allocation, no C calls.
    ///
    /// A handful of scalar operations per sample: about 5 ns per sample in release builds,
    /// 0.3 µs for a 32-frame stereo period (1 % of that period is 6.7 µs). Values under
    /// −200 dB are flushed to 0 so long silences never reach denormals.
    @_noLocks @_noAllocation
    public mutating func process(_ samples: UnsafePointer<Float>, count: Int, coefficients c: MeterCoefficients) {
        let decay = c.peakDecay, retain = c.rmsRetain, gain = c.rmsGain, holdFrames = c.holdFrames
        var peak = self.peak, hold = self.hold, holdLeft = self.holdFramesLeft
        var meanSquare = self.meanSquare, maxPeak = self.maxPeak
        var clips = self.clipCount, sum = self.sumOfSquares
        var i = 0
        while i < count {
            var x = Double(samples[i])
            var a = x.magnitude
            if !(a < 1) {  // |x| ≥ 1, or NaN
                clips &+= 1
                if !(a <= .greatestFiniteMagnitude) { x = 0; a = 0 }  // NaN, ±∞: meter silence
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
        self.sumOfSquares = sum
        self.frameCount &+= UInt64(truncatingIfNeeded: count)
    }

    /// What the UI needs of this state: a copy the realtime thread can publish (inlinable, so
    /// `@_noLocks` callers in other modules can see it is a plain copy).
    @inlinable
    public var reading: MeterReading {
        MeterReading(peak: peak, hold: hold, meanSquare: meanSquare, maxPeak: maxPeak,
                     clipCount: clipCount, sumOfSquares: sumOfSquares, frameCount: frameCount)
    }
}
