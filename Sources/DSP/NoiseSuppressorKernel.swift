// The noise suppressor's realtime path: framing, analysis, noise estimation, gain, synthesis.
// Everything here is `@_noLocks @_noAllocation` and works in memory made by `init`
// (NoiseSuppressor.swift). The only calls out are the transforms of `RealFourierTransform`,
// on plans made before.

extension NoiseSuppressorKernel {
    /// Takes `frameCount` samples of each mic and writes as many clean samples, `latencyFrames`
    /// late. Any block size, including 0; the output does not depend on how the input is cut.
    /// The thread that owns the suppressor (the realtime thread in a JACK client).
    @_noLocks @_noAllocation
    public func process(
        primary: UnsafePointer<Float>, reference: UnsafePointer<Float>,
        clean: UnsafeMutablePointer<Float>, frameCount: Int
    ) {
        let hop = coefficients.hop
        let tail = coefficients.frameLength - hop
        var done = 0
        while done < frameCount {
            let fill = scalars.pointee.hopFill
            let count = min(hop - fill, frameCount - done)
            // SAFETY: fill + count ≤ hop, so the writes stay inside the histories' last hop and
            // the reads inside outputHop; done + count ≤ frameCount bounds the caller's buffers.
            copyAdmissible(primaryHistory + tail + fill, from: primary + done, count: count)
            copyAdmissible(referenceHistory + tail + fill, from: reference + done, count: count)
            copyFloats(clean + done, from: outputHop + fill, count: count)
            done += count
            if fill + count == hop {
                scalars.pointee.hopFill = 0
                analyseFrame()
            } else {
                scalars.pointee.hopFill = fill + count
            }
        }
    }

    /// One frame: the newest `frameLength` samples in, one finished hop into `outputHop`.
    @_noLocks @_noAllocation
    func analyseFrame() {
        let c = coefficients
        let n = c.frameLength
        let hop = c.hop
        let bins = c.binCount

        // Analysis: window each mic and transform.
        for i in 0 ..< n { transformInput[i] = primaryHistory[i] * window[i] }
        transform.forward(transformInput, into: primarySpectrum)
        for i in 0 ..< n { transformInput[i] = referenceHistory[i] * window[i] }
        transform.forward(transformInput, into: referenceSpectrum)
        // Slide the histories by one hop.
        copyFloats(primaryHistory, from: primaryHistory + hop, count: n - hop)
        copyFloats(referenceHistory, from: referenceHistory + hop, count: n - hop)

        var state = scalars.pointee
        let analysed = state.framesAnalysed
        // Plain averages while starting, so the smoothers do not begin from zero.
        let startup = analysed < c.startupFrames
        let startWeight = 1 / Float(analysed + 1)
        let psdRetain = startup ? 1 - startWeight : c.psdRetain

        // Per-bin powers and the smoothed PSDs; their band sums give the broadband level difference.
        var primaryBand: Float = 1e-20
        var referenceBand: Float = 1e-20
        for k in 0 ..< bins {
            let p1 = power(primarySpectrum[k])
            let p2 = power(referenceSpectrum[k])
            let s1 = psdRetain * primaryPSD[k] + (1 - psdRetain) * p1
            let s2 = psdRetain * referencePSD[k] + (1 - psdRetain) * p2
            primaryPSD[k] = s1
            referencePSD[k] = s2
            if k >= c.bandLow && k <= c.bandHigh {
                primaryBand += s1
                referenceBand += s2
            }
        }
        let difference = 3.0103 * fastLog2(primaryBand / referenceBand)

        let isNoiseFrame = !startup && difference < state.calibrationDecibels + c.noiseGateDecibels
        let isSpeechFrame = !startup && difference > state.calibrationDecibels + c.speechGateDecibels

        // Calibration. Far-field sound (the noise) reaches both mics at about the same level, so
        // the difference in noise-dominated frames is the mics' gain mismatch. The talker only
        // ever raises the difference: frames below the calibration pull it down quickly (so a
        // start on speech recovers), frames just above it move it slowly, frames well above it
        // are speech and leave it alone.
        if startup {
            state.calibrationDecibels += startWeight * (difference - state.calibrationDecibels)
        } else if difference < state.calibrationDecibels - c.calibrationBand {
            state.calibrationDecibels += (1 - c.calibrationFallRetain) * (difference - state.calibrationDecibels)
        } else if difference < state.calibrationDecibels + c.noiseGateDecibels {
            state.calibrationDecibels += (1 - c.calibrationRetain) * (difference - state.calibrationDecibels)
        } else if difference > state.calibrationDecibels + c.speechGateDecibels {
            let r = c.speechDifferenceRetain
            let excess = min(
                max(difference - state.calibrationDecibels, c.speechDifferenceFloor), c.speechDifferenceCeiling)
            state.speechDifferenceDecibels = r * state.speechDifferenceDecibels + (1 - r) * excess
        }
        // Reference → primary scale for far-field sound, and the talker's power ratio
        // reference/primary after that scale.
        let calibration = fastExp2(state.calibrationDecibels * 0.33219281)
        let speechRatio = fastExp2(-state.speechDifferenceDecibels * 0.33219281)
        let speechRatioComplement = 1 / (1 - speechRatio)

        let referenceIsUsable = abs(state.calibrationDecibels) < c.maximumCalibrationDecibels
        let presenceScale = 1 / (c.presenceHigh - c.presenceLow)
        let noiseRetain = startup ? 1 - startWeight : c.noiseRetain
        let trackerRetain = startup ? 1 - startWeight : c.trackerRetain
        let trackerSNR = c.trackerPrioriSNR
        let trackerExponent = trackerSNR / (1 + trackerSNR)
        let trackerNormaliser = 1 + trackerSNR
        let bandState = bands
        bandState.clearSums()
        for k in 0 ..< bins {
            let x1 = primarySpectrum[k]
            let p1 = power(x1)
            let s1 = primaryPSD[k]
            let s2 = referencePSD[k] * calibration

            let (y, residual) = cancelNoise(
                bin: k, primary: x1, primaryPower: p1, primaryPSD: s1, psdRetain: psdRetain,
                isSpeechFrame: isSpeechFrame, isNoiseFrame: isNoiseFrame)
            let py = power(y)

            // PLD noise estimate: s1 = S + N, s2 = h·S + N  ⇒  N = (s2 − h·s1) / (1 − h).
            let pld = max(s2 - speechRatio * s1, 0) * speechRatioComplement
            let pldNoise = noiseRetain * differenceNoise[k] + (1 - noiseRetain) * min(pld, s1)
            differenceNoise[k] = pldNoise

            // Single-channel tracker on the primary (speech-presence-weighted periodogram, after
            // Gerkmann & Hendriks), the fallback when the reference is unusable.
            let tracked = startup ? (analysed == 0 ? p1 : trackedNoise[k]) : trackedNoise[k]
            let posteriori = p1 / max(tracked, 1e-20)
            var presence = 1 / (1 + trackerNormaliser * fastExp2(-1.442695 * posteriori * trackerExponent))
            let sticky = c.sppRetain * trackerPresence[k] + (1 - c.sppRetain) * presence
            trackerPresence[k] = sticky
            if sticky > 0.99 { presence = min(presence, 0.99) }
            let trackerTarget = presence * tracked + (1 - presence) * p1
            let trackerNoise =
                startup
                ? trackerRetain * tracked + (1 - trackerRetain) * p1
                : trackerRetain * tracked + (1 - trackerRetain) * trackerTarget
            trackedNoise[k] = trackerNoise

            let noise = max(referenceIsUsable ? pldNoise * residual : trackerNoise, 1e-20)

            // Decision-directed a-priori SNR and a Wiener gain with a floor.
            let gamma = (referenceIsUsable ? py : p1) / noise
            let prior = max(
                c.decisionDirectedWeight * previousClean[k] / noise
                    + (1 - c.decisionDirectedWeight) * max(gamma - 1, 0),
                c.minimumPrioriSNR)
            var gain = max(prior / (1 + prior), c.minimumGain)
            if referenceIsUsable {
                // Speech presence from the bin's own level difference (dB above the far field):
                // the talker raises it, noise does not, whatever its level or spectrum.
                let binDifference = 3.0103 * fastLog2(s1 / max(s2, 1e-20))
                let presence = min(max((binDifference - c.presenceLow) * presenceScale, 0), 1)
                gain = gain * presence + c.minimumGain * (1 - presence)
            }
            let x = referenceIsUsable ? y : x1
            previousClean[k] = gain * gain * power(x)
            bandState.accumulate(
                bin: k, primaryPower: p1, outputPower: py, noise: noise, primaryPSD: s1, referencePSD: s2, gain: gain)
            bandState.binGain[k] = gain
            cleanSpectrum[k] = x
        }
        state.framesAnalysed = min(analysed + 1, Int.max - 1)
        scalars.pointee = state

        // The gain applied: the learned estimator's when there is one and the reference is usable
        // (it was trained on two mics), else the classic post-filter's. The classic state above
        // never depends on it, so the features are a function of the input alone.
        bandState.finishFeatures(
            differenceAboveCalibration: difference - state.calibrationDecibels,
            speechDifference: state.speechDifferenceDecibels)
        if referenceIsUsable, let network = bandState.network {
            let model = network.model
            let bandGains = bandState.predictBandGains(network)
            let floor = c.learnedGainFloor
            let range = model.correctionRange
            if range > 0 {
                // The network corrects the classic gain: × 2^(R·(2σ − 1)) per band, at most 1.
                for b in 0 ..< model.bandCount {
                    bandGains[b] = fastExp2(range * (2 * bandGains[b] - 1))
                }
                for k in 0 ..< bins {
                    let correction = bandState.binGain(bin: k, bandGains: bandGains)
                    let gain = max(min(bandState.binGain[k] * correction, 1), floor)
                    let x = cleanSpectrum[k]
                    cleanSpectrum[k] = (x.0 * gain, x.1 * gain)
                }
            } else {
                for k in 0 ..< bins {
                    let gain = max(bandState.binGain(bin: k, bandGains: bandGains), floor)
                    let x = cleanSpectrum[k]
                    cleanSpectrum[k] = (x.0 * gain, x.1 * gain)
                }
            }
        } else {
            for k in 0 ..< bins {
                let gain = bandState.binGain[k]
                let x = cleanSpectrum[k]
                cleanSpectrum[k] = (x.0 * gain, x.1 * gain)
            }
        }

        // Synthesis: inverse transform; the last 2·hop samples, windowed, overlap-add with the carry.
        // The inverse may overwrite cleanSpectrum.
        transform.inverse(cleanSpectrum, into: transformOutput)
        let scale = c.synthesisScale
        let start = n - 2 * hop
        for i in 0 ..< hop {
            outputHop[i] = overlap[i] + transformOutput[start + i] * synthesisWindow[i] * scale
            overlap[i] = transformOutput[start + hop + i] * synthesisWindow[hop + i] * scale
        }
    }

    /// Noise canceller for bin `k` (a two-mic generalized sidelobe canceller). The talker's part
    /// of the reference is cancelled with its reference/primary transfer function, learnt in
    /// speech frames: what is left is a noise reference. An NLMS weight, adapted in noise frames
    /// only, takes that noise's coherent part out of the primary. Returns the primary with the
    /// coherent noise removed, and the share of the primary's noise power left (≤ 1, measured in
    /// noise frames). Realtime thread (from `analyseFrame`).
    @inline(__always) @_noLocks @_noAllocation
    func cancelNoise(
        bin k: Int, primary x1: SpectrumBin, primaryPower p1: Float, primaryPSD s1: Float,
        psdRetain: Float, isSpeechFrame: Bool, isNoiseFrame: Bool
    ) -> (output: SpectrumBin, residual: Float) {
        let c = coefficients
        let bins = c.binCount
        let x2 = referenceSpectrum[k]
        // Cross-PSD reference × conj(primary).
        let crossRe = psdRetain * canceller[k] + (1 - psdRetain) * (x2.0 * x1.0 + x2.1 * x1.1)
        let crossIm = psdRetain * canceller[bins + k] + (1 - psdRetain) * (x2.1 * x1.0 - x2.0 * x1.1)
        canceller[k] = crossRe
        canceller[bins + k] = crossIm
        var hRe = canceller[2 * bins + k]
        var hIm = canceller[3 * bins + k]
        if isSpeechFrame {
            let r = c.speechTransferRetain
            let inverse = 1 / max(s1, 1e-20)
            hRe = r * hRe + (1 - r) * crossRe * inverse
            hIm = r * hIm + (1 - r) * crossIm * inverse
            canceller[2 * bins + k] = hRe
            canceller[3 * bins + k] = hIm
        }
        // The blocked (talker-free) reference u = x2 − h·x1, and its power.
        let uRe = x2.0 - (hRe * x1.0 - hIm * x1.1)
        let uIm = x2.1 - (hRe * x1.1 + hIm * x1.0)
        let blocked = c.blockedRetain * canceller[6 * bins + k] + (1 - c.blockedRetain) * (uRe * uRe + uIm * uIm)
        canceller[6 * bins + k] = blocked
        var wRe = canceller[4 * bins + k]
        var wIm = canceller[5 * bins + k]
        let y = (x1.0 - (wRe * uRe - wIm * uIm), x1.1 - (wRe * uIm + wIm * uRe))
        if isNoiseFrame {
            // (The floor keeps the step finite when the blocked signal vanishes, e.g. DC.)
            let step = c.cancellerStep / (blocked + 1e-6 * s1 + 1e-20)
            wRe += step * (y.0 * uRe + y.1 * uIm)
            wIm += step * (y.1 * uRe - y.0 * uIm)
            canceller[4 * bins + k] = wRe
            canceller[5 * bins + k] = wIm
            let r = c.residualRetain
            canceller[7 * bins + k] = r * canceller[7 * bins + k] + (1 - r) * power(y)
            canceller[8 * bins + k] = r * canceller[8 * bins + k] + (1 - r) * p1
        }
        let residual = min(canceller[7 * bins + k] / max(canceller[8 * bins + k], 1e-20), 1)
        return (y, residual > 0 ? residual : 1)
    }
}

/// Copies `count` floats; the ranges may overlap (memmove). Raw copies, because the typed
/// `update(from:count:)` does not pass the performance checker.
@inline(__always) @_noLocks @_noAllocation
func copyFloats(_ destination: UnsafeMutablePointer<Float>, from source: UnsafePointer<Float>, count: Int) {
    // SAFETY: the callers pass ranges inside buffers of at least `count` floats.
    UnsafeMutableRawPointer(destination).copyMemory(from: source, byteCount: count * MemoryLayout<Float>.stride)
}

/// The largest input magnitude the suppressor takes in: +24 dBFS. Far larger values (a stray
/// 1e30 from a broken client) would overflow the frame's summed powers into infinities and NaNs
/// that the smoothed state then keeps for the rest of the take; below it nothing changes for any
/// real signal.
var admissibleMagnitude: Float { 16 }

/// Copies `count` input samples into the suppressor's history, each non-finite one as 0 and each
/// beyond ±`admissibleMagnitude` clamped to it, so that no input can poison the state: a NaN or
/// infinity affects only the frames that hold it. Finite audio passes unchanged.
@inline(__always) @_noLocks @_noAllocation
func copyAdmissible(_ destination: UnsafeMutablePointer<Float>, from source: UnsafePointer<Float>, count: Int) {
    for i in 0 ..< count {
        // SAFETY: the callers pass ranges inside buffers of at least `count` floats.
        let x = source[i]
        destination[i] = x.isFinite ? min(max(x, -admissibleMagnitude), admissibleMagnitude) : 0
    }
}

/// |x|² of one spectrum bin.
@inline(__always) @_noLocks @_noAllocation
func power(_ x: SpectrumBin) -> Float { x.0 * x.0 + x.1 * x.1 }

/// log₂ x for x > 0 (normal), within 2e-4: exponent bits plus a quartic on the mantissa.
/// Zero, subnormal and negative inputs give a large negative number, never NaN.
@inline(__always) @_noLocks @_noAllocation
func fastLog2(_ x: Float) -> Float {
    let bits = max(x, .leastNormalMagnitude).bitPattern
    let exponent = Float(Int32(bitPattern: (bits >> 23) & 0xFF) - 127)
    let m = Float(bitPattern: (bits & 0x007F_FFFF) | 0x3F80_0000)
    let p = (((-0.079151233 * m + 0.62882217) * m - 2.0810773) * m + 4.0283923) * m - 2.4967818
    return exponent + p
}

/// 2^x within 8e-6 relative; 0 below −126, clamped at 2^127.
@inline(__always) @_noLocks @_noAllocation
func fastExp2(_ x: Float) -> Float {
    if !(x > -126) { return 0 }
    let clamped = min(x, 127)
    let truncated = Float(Int32(clamped))
    let whole = truncated > clamped ? truncated - 1 : truncated
    let f = clamped - whole
    let p = (((0.013676539 * f + 0.051666915) * f + 0.24171019) * f + 0.69293132) * f + 1.0000073
    let scale = Float(bitPattern: UInt32(Int32(whole) + 127) << 23)
    return p * scale
}
