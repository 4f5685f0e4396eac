// Dual-microphone noise suppressor: setup and ownership. The realtime path is in
// NoiseSuppressorKernel.swift.
//
// Primary mic (near the mouth) and reference mic (a few centimetres further away) hear the
// room's noise at about the same level, but the talker several dB louder at the primary (a
// near-field source falls off as 1/r). The power-level difference (PLD) between the two,
// calibrated for the mics' own gain mismatch, tells per frequency bin how much of the primary
// is noise, even while the talker speaks and for noise that is as unsteady as speech (babble).
//
// Per bin and frame:
// 1. Noise canceller (a two-mic generalized sidelobe canceller): the talker's transfer function
//    primary → reference, learnt in speech frames, cancels the talker in the reference; what is
//    left is a noise reference, and an NLMS weight adapted in noise frames removes its coherent
//    part (low frequencies, point sources: fans, traffic, nearby talkers) from the primary.
// 2. Post-filter: the PLD noise estimate, scaled by what the canceller left, drives a
//    decision-directed a-priori SNR and a Wiener gain with a floor, weighted by the bin's own
//    level difference as speech presence.
// A single-channel speech-presence tracker on the primary replaces the PLD estimate (and the
// canceller's output) when the reference is unusable.

/// Why a suppressor cannot be made.
public enum NoiseSuppressorError: Error, Equatable, CustomStringConvertible {
    case unsupportedSampleRate(Int)
    case planFailed

    public var description: String {
        switch self {
        case .unsupportedSampleRate(let rate):
            return "noise suppression runs at 44100 or 48000 Hz, not \(rate) Hz"
        case .planFailed:
            return "FFTW could not plan the noise suppressor's transforms"
        }
    }
}

/// How long the suppressor may delay the talker: the hop and with it the output's lag.
public enum NoiseSuppressorLatency: String, CaseIterable, Sendable {
    /// 128-sample hops: 256 frames of delay (5.3 ms at 48 kHz).
    case standard
    /// For live headphone monitoring: 64-sample hops at 48 kHz, 58 at 44.1 kHz, so the output lags
    /// 2.7 or 2.6 ms. The same frame length, so the same frequency resolution, at twice the cost.
    case low
}

/// Which gain the suppressor applies.
public enum NoiseSuppressorGain: Sendable {
    /// The learned estimator's, when one is built in for the latency mode (else the classic one).
    case learned
    /// The classic post-filter's Wiener gain with speech presence.
    case classic
}

/// The scalars the realtime path keeps between frames (plain bits, in memory the suppressor owns).
struct NoiseSuppressorScalars {
    /// Samples of the current hop already taken in (and given out).
    var hopFill = 0
    /// Frames analysed so far (saturates), for the start-up averaging.
    var framesAnalysed = 0
    /// Mic calibration: the level difference primary − reference (dB) for far-field sound.
    var calibrationDecibels: Float = 0
    /// How much louder the talker is at the primary than at the (calibrated) reference (dB).
    var speechDifferenceDecibels: Float = 6
}

/// Constants of the suppressor, made from the sample rate (off the realtime thread).
struct NoiseSuppressorCoefficients {
    let frameLength: Int
    let hop: Int
    let binCount: Int
    /// `binCount` rounded up to whole groups of four: the length of every per-bin buffer, so
    /// that the bins can be worked on four at a time (NoiseSuppressorKernel.swift).
    let laneBins: Int
    /// Bins of the band used for the broadband level difference (≈ 200 Hz – 5 kHz).
    let bandLow: Int
    let bandHigh: Int
    /// Per-frame retain factors of the one-pole smoothers.
    let psdRetain: Float
    let noiseRetain: Float
    let trackerRetain: Float
    let sppRetain: Float
    let calibrationRetain: Float
    let speechDifferenceRetain: Float
    /// The calibration falls with `calibrationFallRetain` for frames more than `calibrationBand`
    /// dB below it.
    let calibrationFallRetain: Float
    let calibrationBand: Float
    /// A frame is noise-dominated when its level difference is below calibration + this (dB).
    let noiseGateDecibels: Float
    /// … and speech-dominated above calibration + this (dB).
    let speechGateDecibels: Float
    /// Decision-directed weight of the previous frame's clean estimate.
    let decisionDirectedWeight: Float
    /// Smallest a-priori SNR and smallest gain (linear).
    let minimumPrioriSNR: Float
    let minimumGain: Float
    /// Speech-presence model of the single-channel tracker: the a-priori SNR assumed under speech.
    let trackerPrioriSNR: Float
    /// Bounds of the talker's level difference used by the PLD estimate (dB). The ceiling is
    /// deliberately below what handsets measure (6–9 dB): assuming less leaves less speech in the
    /// noise estimate, which protects clean speech; the noise estimate itself stays unbiased.
    let speechDifferenceFloor: Float
    let speechDifferenceCeiling: Float
    /// A bin's speech presence goes from 0 to 1 as its own calibrated level difference goes
    /// from `presenceLow` to `presenceHigh` dB; the gain moves from the floor to the Wiener gain.
    let presenceLow: Float
    let presenceHigh: Float
    /// A calibration beyond ± this (dB) means the reference is dead or is not a mic near the
    /// primary: the single-channel tracker takes over.
    let maximumCalibrationDecibels: Float
    /// The noise canceller: its NLMS step, and the smoothers of the talker's transfer function
    /// (speech frames), the blocked signal's power and the residual ratio (noise frames).
    let cancellerStep: Float
    let speechTransferRetain: Float
    let blockedRetain: Float
    let residualRetain: Float
    /// Output scale: 1 / (FFT length · window overlap sum).
    let synthesisScale: Float
    /// Frames averaged plainly at the start, before the smoothers take over.
    let startupFrames: Int
    /// Smallest gain the learned estimator may apply (linear).
    let learnedGainFloor: Float

    init(sampleRate: Int, latency: NoiseSuppressorLatency) {
        // 512 samples analysed (10.7 ms, 94 Hz bins), 128-sample hop, 256-sample synthesis: the
        // output lags 5.3 ms; the low-latency mode halves the hop and so the lag. Chosen on the
        // ns-dev scenes (docs/noise-suppression.md).
        frameLength = 512
        switch latency {
        case .standard: hop = 128
        case .low: hop = sampleRate == 48_000 ? 64 : 58
        }
        binCount = frameLength / 2 + 1
        laneBins = (binCount + 3) / 4 * 4
        let binHz = Float(sampleRate) / Float(frameLength)
        bandLow = max(1, Int(200 / binHz))
        bandHigh = min(binCount - 1, Int(5000 / binHz))
        let hopSeconds = Double(hop) / Double(sampleRate)
        func retain(_ seconds: Double) -> Float { Float(DSPMath.exp(-hopSeconds / seconds)) }
        psdRetain = retain(0.012)
        noiseRetain = retain(0.030)
        trackerRetain = retain(0.060)
        sppRetain = retain(0.020)
        calibrationRetain = retain(3.0)
        speechDifferenceRetain = retain(1.0)
        calibrationFallRetain = retain(0.3)
        calibrationBand = 1
        noiseGateDecibels = 3
        speechGateDecibels = 3
        // The per-frame weights and steps below were chosen at 128-sample hops; a shorter hop
        // runs more frames a second, so they are scaled to keep the same memory and speed in time.
        let hopsOf128 = Double(hop) / 128
        decisionDirectedWeight = Float(DSPMath.exp(DSPMath.log(0.97) * hopsOf128))
        minimumPrioriSNR = Float(DSPMath.amplitude(decibels: 2 * -25))
        minimumGain = Float(DSPMath.amplitude(decibels: -25))
        trackerPrioriSNR = Float(DSPMath.amplitude(decibels: 2 * 15))
        speechDifferenceFloor = 2.5
        speechDifferenceCeiling = 4
        maximumCalibrationDecibels = 12
        cancellerStep = Float(0.015 * hopsOf128)
        speechTransferRetain = retain(0.25)
        blockedRetain = retain(0.025)
        residualRetain = retain(0.2)
        presenceLow = -1
        presenceHigh = 3
        // sqrt-Hann analysis × sqrt-Hann synthesis = Hann, whose copies at a quarter-frame hop
        // sum to 2.
        synthesisScale = 1 / Float(frameLength)
        startupFrames = max(1, Int(0.05 / hopSeconds))
        learnedGainFloor = Float(DSPMath.amplitude(decibels: -30))
    }
}

/// The realtime half of a `NoiseSuppressor`: plain values and pointers into memory the
/// suppressor owns (valid while it lives). Copy it into the realtime thread's state; only one
/// thread at a time may call `process` on copies of one kernel.
public struct NoiseSuppressorKernel: @unchecked Sendable {
    let coefficients: NoiseSuppressorCoefficients
    let scalars: UnsafeMutablePointer<NoiseSuppressorScalars>
    /// Analysis window (sqrt-Hann, periodic), frameLength.
    let window: UnsafeMutablePointer<Float>
    /// The last frameLength input samples of each mic.
    let primaryHistory: UnsafeMutablePointer<Float>
    let referenceHistory: UnsafeMutablePointer<Float>
    /// FFT buffers (`AlignedBuffer`): windowed input, spectra, output.
    let transformInput: UnsafeMutablePointer<Float>
    let primarySpectrum: UnsafeMutablePointer<SpectrumBin>
    let referenceSpectrum: UnsafeMutablePointer<SpectrumBin>
    let cleanSpectrum: UnsafeMutablePointer<SpectrumBin>
    let transformOutput: UnsafeMutablePointer<Float>
    /// Synthesis window (2·hop), applied to the last 2·hop samples of each inverse transform.
    let synthesisWindow: UnsafeMutablePointer<Float>
    /// Overlap-add carry (the second half of the last frame's synthesis, hop) and the finished
    /// hop being given out (hop).
    let overlap: UnsafeMutablePointer<Float>
    let outputHop: UnsafeMutablePointer<Float>
    /// Per-bin state (laneBins each; the bins past binCount are padding).
    let primaryPSD: UnsafeMutablePointer<Float>
    let referencePSD: UnsafeMutablePointer<Float>
    let differenceNoise: UnsafeMutablePointer<Float>
    let trackedNoise: UnsafeMutablePointer<Float>
    let trackerPresence: UnsafeMutablePointer<Float>
    let previousClean: UnsafeMutablePointer<Float>
    /// Noise canceller state, laneBins each, one after the other: cross-PSD (re, im), the
    /// talker's reference/primary transfer function (re, im), the canceller weight (re, im), the
    /// blocked signal's power, and the output and input powers in noise frames.
    let canceller: UnsafeMutablePointer<Float>
    /// Bands, features and the learned gain estimator (NoiseSuppressorModel.swift).
    let bands: NoiseSuppressorBandState
    let transform: RealFourierTransform

    /// Output delay in frames: two hops (the synthesis window's length).
    public var latencyFrames: Int { 2 * coefficients.hop }
    /// The mic calibration found so far: how much louder far-field sound is at the primary than
    /// at the reference, in dB. Same thread as `process`.
    var calibrationDecibels: Float { scalars.pointee.calibrationDecibels }
}

/// A causal dual-mic noise suppressor for one talker: primary + reference in, clean primary
/// out. No I/O, no threads; every buffer and FFT plan is made in `init`, so `process` never
/// allocates. The output lags the input by `latencyFrames` (two hops: 256 frames, 5.3 ms at 48 kHz;
/// 128 frames with `.low`) and is the same whatever block sizes the input arrives in.
///
/// Make and free it on any thread but the realtime one; in between, one thread at a time runs
/// its `kernel` (the realtime thread, or the offline `denoise` loop).
public final class NoiseSuppressor: @unchecked Sendable {
    public let sampleRate: Int
    public let latency: NoiseSuppressorLatency
    /// The kernel, in memory of its own for as long as this suppressor lives, so that the
    /// realtime side reaches it through one pointer and never copies it.
    public let kernelPointer: UnsafePointer<NoiseSuppressorKernel>
    public var kernel: NoiseSuppressorKernel { kernelPointer.pointee }

    /// Any thread but the realtime one.
    /// - Throws: `unsupportedSampleRate` unless 44100 or 48000 Hz; `planFailed` if FFTW refuses.
    /// - Parameter gain: `.learned` (the default) applies the built-in learned estimator's gain
    ///   when there is one for `latency`; `.classic` always the post-filter's.
    public convenience init(
        sampleRate: Int, latency: NoiseSuppressorLatency = .standard, gain: NoiseSuppressorGain = .learned
    ) throws(NoiseSuppressorError) {
        try self.init(
            sampleRate: sampleRate, latency: latency,
            model: gain == .learned ? LearnedGainModel.builtIn(for: latency) : nil)
    }

    /// With the given learned estimator (nil: the classic gain); for tests of the learned path.
    init(sampleRate: Int, latency: NoiseSuppressorLatency, model: LearnedGainModel?) throws(NoiseSuppressorError) {
        guard sampleRate == 44_100 || sampleRate == 48_000 else {
            throw .unsupportedSampleRate(sampleRate)
        }
        self.sampleRate = sampleRate
        self.latency = latency
        let c = NoiseSuppressorCoefficients(sampleRate: sampleRate, latency: latency)
        let n = c.frameLength
        // Every per-bin buffer holds laneBins values; the transforms read and write binCount.
        let k = c.laneBins

        func floats(_ count: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: count)
            p.initialize(repeating: 0, count: count)
            return p
        }

        // Low-delay asymmetric windows: a long analysis window (fine frequency resolution) whose
        // last `hop` samples fall as a short sqrt-Hann, and a synthesis window over only the last
        // 2·hop samples, so that analysis × synthesis is a Hann of 2·hop, which overlap-adds to 1
        // at that hop. Output lags by 2·hop instead of the frame length.
        let m = c.hop
        let window = floats(n)
        let synthesisWindow = floats(2 * m)
        for i in 0 ..< n {
            window[i] =
                i < n - m
                ? Float(DSPMath.sin(Double.pi * Double(i) / Double(2 * (n - m))))
                : Float(DSPMath.cos(Double.pi * Double(i - (n - m)) / Double(2 * m)))
        }
        for j in 0 ..< (2 * m) {
            let hann = DSPMath.sin(Double.pi * Double(j) / Double(2 * m))
            synthesisWindow[j] = Float(hann * hann) / window[n - 2 * m + j]
        }
        let transformInput = AlignedBuffer.floats(n)
        let primarySpectrum = AlignedBuffer.bins(k)
        let cleanSpectrum = AlignedBuffer.bins(k)
        let transformOutput = AlignedBuffer.floats(n)
        guard
            let transform = RealFourierTransform(
                size: n, input: transformInput, spectrum: primarySpectrum, output: transformOutput)
        else {
            window.deallocate()
            synthesisWindow.deallocate()
            AlignedBuffer.free(transformInput)
            AlignedBuffer.free(primarySpectrum)
            AlignedBuffer.free(cleanSpectrum)
            AlignedBuffer.free(transformOutput)
            throw .planFailed
        }
        let scalars = UnsafeMutablePointer<NoiseSuppressorScalars>.allocate(capacity: 1)
        scalars.initialize(to: NoiseSuppressorScalars())
        let kernel = UnsafeMutablePointer<NoiseSuppressorKernel>.allocate(capacity: 1)
        kernel.initialize(
            to: NoiseSuppressorKernel(
                coefficients: c, scalars: scalars, window: window,
                primaryHistory: floats(n), referenceHistory: floats(n),
                transformInput: transformInput, primarySpectrum: primarySpectrum,
                referenceSpectrum: AlignedBuffer.bins(k), cleanSpectrum: cleanSpectrum,
                transformOutput: transformOutput, synthesisWindow: synthesisWindow,
                overlap: floats(c.hop), outputHop: floats(c.hop),
                primaryPSD: floats(k), referencePSD: floats(k), differenceNoise: floats(k),
                trackedNoise: floats(k), trackerPresence: floats(k), previousClean: floats(k),
                canceller: floats(9 * k),
                bands: NoiseSuppressorBandState(binCount: c.binCount, laneBins: k, model: model),
                transform: transform))
        kernelPointer = UnsafePointer(kernel)
    }

    deinit {
        let k = kernel
        k.transform.destroy()
        k.scalars.deallocate()
        for p in [
            k.window, k.synthesisWindow, k.primaryHistory, k.referenceHistory, k.overlap, k.outputHop, k.primaryPSD,
            k.referencePSD, k.differenceNoise, k.trackedNoise, k.trackerPresence, k.previousClean, k.canceller,
        ] {
            p.deallocate()
        }
        AlignedBuffer.free(k.transformInput)
        AlignedBuffer.free(k.transformOutput)
        AlignedBuffer.free(k.primarySpectrum)
        AlignedBuffer.free(k.referenceSpectrum)
        AlignedBuffer.free(k.cleanSpectrum)
        k.bands.deallocate()
        UnsafeMutablePointer(mutating: kernelPointer).deallocate()
    }

    /// Output delay in frames (two hops: 5.3 ms at 48 kHz, 2.7 ms with `.low`).
    public var latencyFrames: Int { kernel.latencyFrames }

    /// Whether a learned gain estimator is in use (built in for this latency and asked for).
    public var usesLearnedGain: Bool { kernel.bands.model != nil }

    /// The features of the last analysed frame (`NoiseSuppressorBands.featureCount` floats,
    /// NoiseSuppressorModel.swift says which). Valid until the next `process`; same thread.
    public var frameFeatures: UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: kernel.bands.features, count: NoiseSuppressorBands.featureCount)
    }

    /// Samples per analysis hop: a block of exactly this many frames, given at a hop boundary,
    /// analyses exactly one frame.
    public var hopFrames: Int { kernel.coefficients.hop }

    /// `kernel.process`, for callers that keep the suppressor itself (offline, tests).
    public func process(
        primary: UnsafePointer<Float>, reference: UnsafePointer<Float>,
        clean: UnsafeMutablePointer<Float>, frameCount: Int
    ) {
        kernelPointer.pointee.process(primary: primary, reference: reference, clean: clean, frameCount: frameCount)
    }
}
