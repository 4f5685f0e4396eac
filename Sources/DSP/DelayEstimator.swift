/// Round-trip delay from a returned `MeasurementSignal`, for `micmon latency`. Pure DSP: the
/// caller feeds the returned samples in order (frame 0 = the frame during which the first
/// measurement sample was emitted) and gets measurements back. Main thread; never the realtime
/// one (it allocates and runs FFTs).
///
/// How it measures:
/// 1. **Circular correlation.** A window of one signal period `N` of the return, taken once the
///    signal is steady, is a circular shift of the emitted period. Its cross-correlation with the
///    reference (FFT, multiply by the conjugate spectrum, inverse FFT) peaks at the delay modulo
///    `N`. A negative peak means inverted polarity.
/// 2. **No signal.** The peak over the RMS of the correlation away from it (the peak-to-noise
///    ratio) must reach `minimumPeakToNoise` (default 10, 20 dB). Pure noise peaks at ≈ 4–5
///    (the largest of N Gaussian values); the signal at 10 dB SNR reaches ≈ 200.
/// 3. **Sub-sample.** Parabolic interpolation on the peak, then a weighted least-squares fit of
///    the cross-spectrum's phase slope (twice). A delay (integer or not) is a linear phase, so
///    the fit is exact for a pure delay and for band-limited fractional delays, where parabolic
///    interpolation alone is biased by up to ≈ 0.1 frame.
/// 4. **Delays longer than `N`.** The signal starts from silence at frame 0, so the returned
///    onset is at the delay itself: of the candidates `d mod N + k·N`, the first whose block of
///    `N` frames correlates with the reference is the delay. Windows are then taken wholly after
///    the onset. After lock, each new estimate keeps the multiple of `N` nearest to the last.
///    The onset is searched up to `maximumDelayFrames`; longer delays (or a loop closed after
///    the measurement started, whose onset is not the delay) are reported as `.beyondRange`.
/// 5. **Lock.** Before lock, windows start every `N/16` frames, so the first valid estimate
///    comes `onset + margin` rounded up to `N/16`, plus `N` frames after the first emitted sample:
///    at 48 kHz with `N` = 4096 and a 256-frame delay, 4608 frames (96 ms). Only complete
///    windows are analysed, so the dense start costs a few FFTs. After lock, one estimate every
///    `hopAfterLock` frames (default `N`).
public final class DelayEstimator {
    /// What the last analysed window showed.
    public enum State: Sendable, Equatable {
        /// No full window yet.
        case waiting
        /// The return is silent (RMS below −120 dBFS): nothing comes back.
        case silence
        /// Something comes back, but not the measurement signal (noise, another source).
        case noSignal
        /// The signal is there; waiting for a window wholly after its onset.
        case arriving
        /// The delay is known.
        case locked
        /// The signal is there but its onset was not found within `maximumDelayFrames` (a longer
        /// delay, or a loop closed after the measurement started): the delay is ambiguous.
        case beyondRange
    }

    public let signal: MeasurementSignal
    /// The longest delay the onset search covers, in frames.
    public let maximumDelayFrames: Int
    public let minimumPeakToNoise: Double
    public let hopBeforeLock: Int
    public let hopAfterLock: Int
    /// Frames a window must start after the onset (a filter's pre-ringing and settling).
    public let onsetMargin = 128
    /// A window quieter than this (RMS, −120 dBFS) is silence: nothing comes back.
    public static let silenceRMS = 1e-6

    public private(set) var state: State = .waiting
    /// Frames fed so far (the timeline, gaps included).
    public private(set) var framesReceived = 0
    /// The frame count at which the first valid estimate became possible (end of its window).
    public private(set) var lockFrame: Int?
    public private(set) var windowsAnalysed = 0
    /// Windows after lock whose return did not hold the signal (dropouts).
    public private(set) var windowsWithoutSignal = 0
    /// The last window's analysis, whatever it found.
    public private(set) var lastAnalysis: CircularDelay?

    private let period: Int
    private let transform: FourierTransform
    private let reference: [Double]
    private let referenceReal: [Double]
    private let referenceImaginary: [Double]
    /// Σ |X_k|² over the fit band, for the gain.
    private let referencePowerInFitBand: Double
    private let fitBand: ClosedRange<Int>
    private var real: [Double]
    private var imaginary: [Double]
    private var crossReal: [Double]
    private var crossImaginary: [Double]
    /// Returned samples for frames historyStart ..< framesReceived.
    private var history: [Float] = []
    private var historyStart = 0
    private var nextWindowStart = 0
    /// Windows must not start before this frame (a gap was filled with zeros before it).
    private var invalidUntil = 0
    /// Where the signal sent had jumped (`markDisturbance`), on the emission timeline, each with
    /// its margin: a window whose own delay puts one inside it is skipped. Oldest first.
    private var disturbances: [(emittedFrame: Int, margin: Int)] = []
    /// Windows skipped because a disturbance returned inside them.
    public private(set) var windowsDisturbed = 0
    private var lastDelay: Double?
    private var onsetSearchIsOver = false

    public init(
        signal: MeasurementSignal, maximumDelayFrames: Int, minimumPeakToNoise: Double = 10,
        hopBeforeLock: Int? = nil, hopAfterLock: Int? = nil
    ) {
        self.signal = signal
        period = signal.period
        self.maximumDelayFrames = maximumDelayFrames
        self.minimumPeakToNoise = minimumPeakToNoise
        self.hopBeforeLock = hopBeforeLock ?? signal.period / 16
        self.hopAfterLock = hopAfterLock ?? signal.period
        let fft = FourierTransform(size: signal.period)
        transform = fft
        reference = signal.samples.map(Double.init)
        var re = reference
        var im = [Double](repeating: 0, count: signal.period)
        re.withUnsafeMutableBufferPointer { r in
            im.withUnsafeMutableBufferPointer { i in fft.transform(r.baseAddress!, i.baseAddress!, inverse: false) }
        }
        referenceReal = re
        referenceImaginary = im
        fitBand = max(1, period / 256) ... signal.flatBandEnd
        var power = 0.0
        for k in fitBand { power += re[k] * re[k] + im[k] * im[k] }
        referencePowerInFitBand = power
        real = [Double](repeating: 0, count: period)
        imaginary = real
        crossReal = real
        crossImaginary = real
        history.reserveCapacity(maximumDelayFrames + 3 * period)
    }

    /// Feeds the next returned samples; returns the measurements they completed (often none).
    public func append(_ samples: UnsafeBufferPointer<Float>) -> [DelayMeasurement] {
        history.append(contentsOf: samples)
        framesReceived += samples.count
        return analyseReadyWindows()
    }

    public func append(_ samples: [Float]) -> [DelayMeasurement] {
        samples.withUnsafeBufferPointer { append($0) }
    }

    /// A gap of `frames` lost frames in the return: the timeline advances (as zeros) and no
    /// window may include them.
    public func skip(frames: Int) -> [DelayMeasurement] {
        guard frames > 0 else { return [] }
        history.append(contentsOf: repeatElement(0, count: frames))
        framesReceived += frames
        invalidUntil = framesReceived
        return analyseReadyWindows()
    }

    /// The signal sent jumped at `emittedFrame` of the emission timeline (a period of it never
    /// reached the output: on PipeWire, a cycle that ran late): a window is skipped when the delay
    /// it measures puts that jump within `margin` frames of it. The window's own delay places the
    /// jump, before lock as after: a jump of a period or two inside a window of `N` leaves its
    /// correlation peak at the delay, so the placement holds, and a disturbance before lock costs
    /// only the windows it returns in, not the whole range the delay could have. Main thread.
    public func markDisturbance(atEmittedFrame emittedFrame: Int, margin: Int) {
        disturbances.append((emittedFrame, margin))
    }

    /// Whether a disturbance returns within its margin of the window at `start`, at `delay`.
    private func isDisturbed(windowAt start: Int, delay: Double) -> Bool {
        let shift = DSPMath.roundToInt(delay)
        let window = start ..< start + period
        return disturbances.contains {
            let returned = $0.emittedFrame + shift
            return window.overlaps((returned - $0.margin) ..< (returned + $0.margin))
        }
    }

    private func analyseReadyWindows() -> [DelayMeasurement] {
        var found: [DelayMeasurement] = []
        while nextWindowStart + period <= framesReceived {
            let start = nextWindowStart
            // A disturbance no delay still possible returns at or after this window is done with.
            let longestDelay = lastDelay.map { DSPMath.roundToInt($0) + period } ?? maximumDelayFrames
            while let first = disturbances.first, first.emittedFrame + longestDelay + first.margin <= start {
                disturbances.removeFirst()
            }
            if start >= invalidUntil, let measurement = analyseWindow(at: start) {
                found.append(measurement)
            }
            if start < invalidUntil {
                nextWindowStart = lockFrame == nil ? roundUp(invalidUntil, to: hopBeforeLock) : invalidUntil
            } else {
                nextWindowStart += lockFrame == nil ? hopBeforeLock : hopAfterLock
            }
        }
        trimHistory()
        return found
    }

    private func roundUp(_ value: Int, to step: Int) -> Int { (value + step - 1) / step * step }

    /// Keeps everything the onset search may need before lock, then only what the next window needs.
    private func trimHistory() {
        var keepFrom = nextWindowStart
        if lockFrame == nil && !onsetSearchIsOver {
            if framesReceived <= maximumDelayFrames + 2 * period + hopBeforeLock { return }
            onsetSearchIsOver = true
        }
        keepFrom = min(keepFrom, framesReceived)
        let drop = keepFrom - historyStart
        // Shifting costs a copy of what stays: do it in large steps.
        if drop >= 4 * period {
            history.removeFirst(drop)
            historyStart = keepFrom
        }
    }

    private func analyseWindow(at start: Int) -> DelayMeasurement? {
        windowsAnalysed += 1
        let offset = start - historyStart
        let analysis = history.withUnsafeBufferPointer {
            circularDelay(of: UnsafeBufferPointer(rebasing: $0[offset ..< offset + period]))
        }
        lastAnalysis = analysis
        guard analysis.windowRMS >= DelayEstimator.silenceRMS, analysis.peakToNoise >= minimumPeakToNoise else {
            if lockFrame == nil {
                state = analysis.windowRMS < DelayEstimator.silenceRMS ? .silence : .noSignal
            } else {
                windowsWithoutSignal += 1
            }
            return nil
        }
        var modular = analysis.lag + Double(start)
        modular -= Double(period) * Double(Int(modular / Double(period)))
        let delay: Double
        if let lastDelay {
            let turns = DSPMath.roundToInt((lastDelay - modular) / Double(period))
            delay = modular + Double(turns * period)
        } else {
            var whole = DSPMath.roundToInt(modular)
            let fraction = modular - Double(whole)
            whole %= period
            guard let onset = findOnset(wholeLag: whole, peak: analysis.peakValue, before: start + period) else {
                state = onsetSearchIsOver ? .beyondRange : .arriving
                return nil
            }
            guard start >= onset + onsetMargin else {
                state = .arriving
                return nil
            }
            delay = Double(onset) + fraction
        }
        if isDisturbed(windowAt: start, delay: delay) {
            windowsDisturbed += 1
            return nil
        }
        if lastDelay == nil {
            lockFrame = start + period
            state = .locked
        }
        lastDelay = delay
        return DelayMeasurement(
            delayFrames: delay, isInverted: analysis.isInverted,
            peakToNoiseDecibels: 20 * DSPMath.log10(min(analysis.peakToNoise, 1e12)),
            gainDecibels: Decibels.amplitudeToDBFS(analysis.gain), availableAtFrame: start + period)
    }

    /// The first candidate onset `wholeLag + k·N` (k ≥ 0, up to `maximumDelayFrames`) whose block
    /// of N frames carries the signal, or nil when none of the complete blocks before `limit` does.
    private func findOnset(wholeLag: Int, peak: Double, before limit: Int) -> Int? {
        if onsetSearchIsOver { return nil }
        let threshold = 0.5 * peak.magnitude
        let sign: Double = peak < 0 ? -1 : 1
        var candidate = wholeLag
        while candidate <= maximumDelayFrames && candidate + period <= limit && candidate + period <= framesReceived {
            let offset = candidate - historyStart
            if offset >= 0 {
                var sum = 0.0
                history.withUnsafeBufferPointer { samples in
                    reference.withUnsafeBufferPointer { ref in
                        for i in 0 ..< period { sum += Double(samples[offset + i]) * ref[i] }
                    }
                }
                if sum * sign > threshold { return candidate }
            }
            candidate += period
        }
        // Every candidate up to the maximum had its whole block, and none carried the signal.
        if candidate > maximumDelayFrames { onsetSearchIsOver = true }
        return nil
    }

    /// The circular delay of one window of N returned frames against the reference period:
    /// lag in [0, N) (sub-sample), polarity, peak-to-noise ratio and gain.
    public func circularDelay(of window: UnsafeBufferPointer<Float>) -> CircularDelay {
        precondition(window.count == period)
        let n = period
        var sumSquares = 0.0
        for i in 0 ..< n {
            let x = Double(window[i])
            real[i] = x
            imaginary[i] = 0
            sumSquares += x * x
        }
        let rms = DSPMath.squareRoot(sumSquares / Double(n))
        // Silence has no delay to find: skip the FFTs (a long delay means many silent windows).
        if rms < DelayEstimator.silenceRMS {
            return CircularDelay(lag: 0, isInverted: false, peakToNoise: 0, gain: 0, windowRMS: rms, peakValue: 0)
        }
        real.withUnsafeMutableBufferPointer { re in
            imaginary.withUnsafeMutableBufferPointer { im in
                transform.transform(re.baseAddress!, im.baseAddress!, inverse: false)
            }
        }
        // C = Y · conj(X).
        for k in 0 ..< n {
            let yr = real[k]
            let yi = imaginary[k]
            let xr = referenceReal[k]
            let xi = referenceImaginary[k]
            crossReal[k] = yr * xr + yi * xi
            crossImaginary[k] = yi * xr - yr * xi
            real[k] = crossReal[k]
            imaginary[k] = crossImaginary[k]
        }
        real.withUnsafeMutableBufferPointer { re in
            imaginary.withUnsafeMutableBufferPointer { im in
                transform.transform(re.baseAddress!, im.baseAddress!, inverse: true)
            }
        }
        // real[τ]·(1/N) = Σ_n window[n] · reference[(n − τ) mod N].
        let scale = 1 / Double(n)
        var peakIndex = 0
        var peakMagnitude = -1.0
        for tau in 0 ..< n {
            real[tau] *= scale
            if real[tau].magnitude > peakMagnitude {
                peakMagnitude = real[tau].magnitude
                peakIndex = tau
            }
        }
        let peakValue = real[peakIndex]
        let sign: Double = peakValue < 0 ? -1 : 1
        // The correlation away from the peak (±32 lags: the peak's own skirt) is the noise.
        let guardLags = 32
        var noiseSum = 0.0
        var noiseCount = 0
        for tau in 0 ..< n {
            var distance = abs(tau - peakIndex)
            distance = min(distance, n - distance)
            if distance > guardLags {
                noiseSum += real[tau] * real[tau]
                noiseCount += 1
            }
        }
        let noise = DSPMath.squareRoot(noiseSum / Double(max(noiseCount, 1)))
        let peakToNoise = peakMagnitude == 0 ? 0 : noise > 0 ? peakMagnitude / noise : .infinity
        // Parabolic interpolation on the (polarity-corrected) peak.
        let before = real[(peakIndex + n - 1) % n] * sign
        let after = real[(peakIndex + 1) % n] * sign
        let at = peakMagnitude
        let curvature = before - 2 * at + after
        var lag = Double(peakIndex)
        if curvature < 0 { lag += max(-0.5, min(0.5, 0.5 * (before - after) / curvature)) }
        // Phase-slope refinement: after removing the current lag, the cross-spectrum's phase is
        // φ_k = −2π·k·ε/N; fit ε by least squares weighted by |C_k|² (inverse phase variance).
        var gain = 0.0
        for _ in 0 ..< 2 {
            let (stepSin, stepCos) = DSPMath.sinCos(2 * Double.pi * lag / Double(n))
            let first = fitBand.lowerBound
            var (rotSin, rotCos) = DSPMath.sinCos(2 * Double.pi * lag * Double(first) / Double(n))
            var weightedSlope = 0.0
            var weightedSquares = 0.0
            var alignedSum = 0.0
            for k in fitBand {
                // z = sign · C_k · e^{+i·2π·k·lag/N}
                let cr = crossReal[k] * sign
                let ci = crossImaginary[k] * sign
                let zr = cr * rotCos - ci * rotSin
                let zi = cr * rotSin + ci * rotCos
                let weight = zr * zr + zi * zi
                let phase = DSPMath.atan2(zi, zr)
                let bin = Double(k)
                weightedSlope += weight * bin * phase
                weightedSquares += weight * bin * bin
                alignedSum += zr
                // Advance the rotation by one bin.
                let nextCos = rotCos * stepCos - rotSin * stepSin
                rotSin = rotSin * stepCos + rotCos * stepSin
                rotCos = nextCos
            }
            gain = alignedSum / referencePowerInFitBand
            guard weightedSquares > 0 else { break }
            let correction = -Double(n) / (2 * Double.pi) * weightedSlope / weightedSquares
            lag += max(-1, min(1, correction))
        }
        while lag < 0 { lag += Double(n) }
        while lag >= Double(n) { lag -= Double(n) }
        return CircularDelay(
            lag: lag, isInverted: sign < 0, peakToNoise: peakToNoise, gain: gain.magnitude,
            windowRMS: rms, peakValue: peakValue)
    }
}

/// One window's circular analysis (see `DelayEstimator.circularDelay(of:)`).
public struct CircularDelay: Sendable, Equatable {
    /// The delay modulo the signal period, in frames, in [0, N).
    public var lag: Double
    public var isInverted: Bool
    /// Correlation peak over the RMS of the correlation away from it (amplitude ratio).
    public var peakToNoise: Double
    /// Level of the returned signal relative to the emitted one (linear amplitude).
    public var gain: Double
    /// RMS of the window (linear).
    public var windowRMS: Double
    /// The signed correlation peak, Σ window·reference at the peak lag.
    public var peakValue: Double
}

/// One round-trip measurement.
public struct DelayMeasurement: Sendable, Equatable {
    /// The round trip in frames (sub-sample).
    public var delayFrames: Double
    /// The signal came back upside down.
    public var isInverted: Bool
    /// How far the correlation peak stands above the correlation noise, in dB (amplitude).
    public var peakToNoiseDecibels: Double
    /// Level of the return relative to the emitted signal, in dB.
    public var gainDecibels: Double
    /// Frames after the first emitted sample at which this estimate's window was complete.
    public var availableAtFrame: Int
}

extension DSPMath {
    /// atan(x) without libm: |x| > 1 folds to π/2 − atan(1/x), |x| > tan(π/8) to
    /// π/4 + atan((x−1)/(x+1)), then the Taylor series on |z| ≤ 0.415 (error < 1e-16).
    static func atan(_ x: Double) -> Double {
        if x.isNaN { return x }
        let magnitude = x.magnitude
        let sign: Double = x < 0 ? -1 : 1
        if magnitude > 1 { return sign * (Double.pi / 2 - atan(1 / magnitude)) }
        if magnitude > 0.41421356237309503 {
            return sign * (Double.pi / 4 + atanSeries((magnitude - 1) / (magnitude + 1)))
        }
        return atanSeries(x)
    }

    private static func atanSeries(_ z: Double) -> Double {
        let z2 = z * z
        var term = z
        var sum = 0.0
        var n = 1.0
        while n < 48 {
            sum += term / n
            term *= -z2
            n += 2
        }
        return sum
    }

    /// The angle of (x, y) in (−π, π].
    static func atan2(_ y: Double, _ x: Double) -> Double {
        if x > 0 { return atan(y / x) }
        if x < 0 { return y >= 0 ? atan(y / x) + Double.pi : atan(y / x) - Double.pi }
        if y > 0 { return Double.pi / 2 }
        if y < 0 { return -Double.pi / 2 }
        return 0
    }
}
