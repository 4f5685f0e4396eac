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
        // Four bins at a time, the same arithmetic lane by lane as one bin at a time (`larger`
        // and `smaller` are Swift's max and min), up to `laneBins`: the lanes past the Nyquist
        // bin work on zeros in the padding and reach neither the bands nor the output.
        let minimumNoise = Lanes(repeating: 1e-20)
        var k = 0
        while k < c.laneBins {
            // SAFETY: every per-bin buffer holds laneBins values, so k + 3 is inside each.
            let (x1Re, x1Im) = loadBins(primarySpectrum + k)
            let p1 = x1Re * x1Re + x1Im * x1Im
            let s1 = loadFloats(primaryPSD + k)
            let s2 = loadFloats(referencePSD + k) * calibration

            let (yRe, yIm, residual) = cancelNoise(
                bins: k, primaryRe: x1Re, primaryIm: x1Im, primaryPower: p1, primaryPSD: s1, psdRetain: psdRetain,
                isSpeechFrame: isSpeechFrame, isNoiseFrame: isNoiseFrame)
            let py = yRe * yRe + yIm * yIm

            // PLD noise estimate: s1 = S + N, s2 = h·S + N  ⇒  N = (s2 − h·s1) / (1 − h).
            let pld = larger(s2 - speechRatio * s1, .zero) * speechRatioComplement
            let pldNoise = noiseRetain * loadFloats(differenceNoise + k) + (1 - noiseRetain) * smaller(pld, s1)
            storeFloats(pldNoise, to: differenceNoise + k)

            // Single-channel tracker on the primary (speech-presence-weighted periodogram, after
            // Gerkmann & Hendriks), the fallback when the reference is unusable.
            let tracked = startup && analysed == 0 ? p1 : loadFloats(trackedNoise + k)
            let posteriori = p1 / larger(tracked, minimumNoise)
            var presence = 1 / (1 + trackerNormaliser * fastExp2(-1.442695 * posteriori * trackerExponent))
            let sticky = c.sppRetain * loadFloats(trackerPresence + k) + (1 - c.sppRetain) * presence
            storeFloats(sticky, to: trackerPresence + k)
            presence = presence.replacing(with: smaller(presence, Lanes(repeating: 0.99)), where: sticky .> 0.99)
            let trackerTarget = presence * tracked + (1 - presence) * p1
            let trackerNoise =
                startup
                ? trackerRetain * tracked + (1 - trackerRetain) * p1
                : trackerRetain * tracked + (1 - trackerRetain) * trackerTarget
            storeFloats(trackerNoise, to: trackedNoise + k)

            let noise = larger(referenceIsUsable ? pldNoise * residual : trackerNoise, minimumNoise)

            // Decision-directed a-priori SNR and a Wiener gain with a floor.
            let gamma = (referenceIsUsable ? py : p1) / noise
            let prior = larger(
                c.decisionDirectedWeight * loadFloats(previousClean + k) / noise
                    + (1 - c.decisionDirectedWeight) * larger(gamma - 1, .zero),
                Lanes(repeating: c.minimumPrioriSNR))
            var gain = larger(prior / (1 + prior), Lanes(repeating: c.minimumGain))
            if referenceIsUsable {
                // Speech presence from the bin's own level difference (dB above the far field):
                // the talker raises it, noise does not, whatever its level or spectrum.
                let binDifference = 3.0103 * fastLog2(s1 / larger(s2, minimumNoise))
                let presence = smaller(larger((binDifference - c.presenceLow) * presenceScale, .zero), .one)
                gain = gain * presence + c.minimumGain * (1 - presence)
            }
            let xRe = referenceIsUsable ? yRe : x1Re
            let xIm = referenceIsUsable ? yIm : x1Im
            storeFloats(gain * gain * (xRe * xRe + xIm * xIm), to: previousClean + k)
            var lane = 0
            while lane < 4 && k &+ lane < bins {
                bandState.accumulate(
                    bin: k &+ lane, primaryPower: p1[lane], outputPower: py[lane], noise: noise[lane],
                    primaryPSD: s1[lane], referencePSD: s2[lane], gain: gain[lane])
                lane &+= 1
            }
            storeFloats(gain, to: bandState.binGain + k)
            storeBins(xRe, xIm, to: cleanSpectrum + k)
            k &+= 4
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

    /// Noise canceller for bins `k` to `k + 3` (a two-mic generalized sidelobe canceller). The
    /// talker's part of the reference is cancelled with its reference/primary transfer function,
    /// learnt in speech frames: what is left is a noise reference. An NLMS weight, adapted in
    /// noise frames only, takes that noise's coherent part out of the primary. Returns the
    /// primary with the coherent noise removed, and the share of the primary's noise power left
    /// (≤ 1, measured in noise frames). Realtime thread (from `analyseFrame`).
    @inline(__always) @_noLocks @_noAllocation
    func cancelNoise(
        bins k: Int, primaryRe x1Re: Lanes, primaryIm x1Im: Lanes, primaryPower p1: Lanes, primaryPSD s1: Lanes,
        psdRetain: Float, isSpeechFrame: Bool, isNoiseFrame: Bool
    ) -> (re: Lanes, im: Lanes, residual: Lanes) {
        let c = coefficients
        // SAFETY: nine blocks of laneBins floats; k + 3 < laneBins.
        let stride = c.laneBins
        let (x2Re, x2Im) = loadBins(referenceSpectrum + k)
        // Cross-PSD reference × conj(primary).
        let crossRe = psdRetain * loadFloats(canceller + k) + (1 - psdRetain) * (x2Re * x1Re + x2Im * x1Im)
        let crossIm = psdRetain * loadFloats(canceller + stride + k) + (1 - psdRetain) * (x2Im * x1Re - x2Re * x1Im)
        storeFloats(crossRe, to: canceller + k)
        storeFloats(crossIm, to: canceller + stride + k)
        var hRe = loadFloats(canceller + 2 * stride + k)
        var hIm = loadFloats(canceller + 3 * stride + k)
        if isSpeechFrame {
            let r = c.speechTransferRetain
            let inverse = 1 / larger(s1, Lanes(repeating: 1e-20))
            hRe = r * hRe + (1 - r) * crossRe * inverse
            hIm = r * hIm + (1 - r) * crossIm * inverse
            storeFloats(hRe, to: canceller + 2 * stride + k)
            storeFloats(hIm, to: canceller + 3 * stride + k)
        }
        // The blocked (talker-free) reference u = x2 − h·x1, and its power.
        let uRe = x2Re - (hRe * x1Re - hIm * x1Im)
        let uIm = x2Im - (hRe * x1Im + hIm * x1Re)
        let blocked =
            c.blockedRetain * loadFloats(canceller + 6 * stride + k) + (1 - c.blockedRetain) * (uRe * uRe + uIm * uIm)
        storeFloats(blocked, to: canceller + 6 * stride + k)
        var wRe = loadFloats(canceller + 4 * stride + k)
        var wIm = loadFloats(canceller + 5 * stride + k)
        let yRe = x1Re - (wRe * uRe - wIm * uIm)
        let yIm = x1Im - (wRe * uIm + wIm * uRe)
        if isNoiseFrame {
            // (The floor keeps the step finite when the blocked signal vanishes, e.g. DC.)
            let step = c.cancellerStep / (blocked + 1e-6 * s1 + 1e-20)
            wRe += step * (yRe * uRe + yIm * uIm)
            wIm += step * (yIm * uRe - yRe * uIm)
            storeFloats(wRe, to: canceller + 4 * stride + k)
            storeFloats(wIm, to: canceller + 5 * stride + k)
            let r = c.residualRetain
            storeFloats(
                r * loadFloats(canceller + 7 * stride + k) + (1 - r) * (yRe * yRe + yIm * yIm),
                to: canceller + 7 * stride + k)
            storeFloats(r * loadFloats(canceller + 8 * stride + k) + (1 - r) * p1, to: canceller + 8 * stride + k)
        }
        let residual = smaller(
            loadFloats(canceller + 7 * stride + k)
                / larger(loadFloats(canceller + 8 * stride + k), Lanes(repeating: 1e-20)),
            .one)
        return (yRe, yIm, residual.replacing(with: 1, where: .!(residual .> 0)))
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

/// Four lanes of floats: four bins, or four network units.
typealias Lanes = SIMD4<Float>

/// Swift's `max` lane by lane (`y >= x ? y : x`), so that four lanes give what four scalar
/// calls give, signed zeros and NaNs included.
@inline(__always) @_noLocks @_noAllocation
func larger(_ x: Lanes, _ y: Lanes) -> Lanes { x.replacing(with: y, where: y .>= x) }

/// Swift's `min` lane by lane (`y < x ? y : x`).
@inline(__always) @_noLocks @_noAllocation
func smaller(_ x: Lanes, _ y: Lanes) -> Lanes { x.replacing(with: y, where: y .< x) }

/// `fastLog2` of four values, bit for bit the scalar one's results. The exponent becomes a float
/// without a conversion: the bits of 1.5 · 2²³ plus it.
@inline(__always) @_noLocks @_noAllocation
func fastLog2(_ x: Lanes) -> Lanes {
    // SAFETY: SIMD4<Float> and SIMD4<UInt32> are both four 32-bit lanes.
    let bits = unsafeBitCast(larger(x, Lanes(repeating: .leastNormalMagnitude)), to: SIMD4<UInt32>.self)
    let biased = unsafeBitCast(((bits &>> 23) & 0xFF) | 0x4B40_0000, to: Lanes.self)
    let exponent = biased - (12_582_912 + 127)
    let m = unsafeBitCast((bits & 0x007F_FFFF) | 0x3F80_0000, to: Lanes.self)
    let p = (((-0.079151233 * m + 0.62882217) * m - 2.0810773) * m + 4.0283923) * m - 2.4967818
    return exponent + p
}

/// `fastExp2` of four values, bit for bit the scalar one's results: the same polynomial on the
/// same fraction. The whole part is found without a float → integer conversion: adding and
/// taking away 1.5 · 2²³ rounds a float below 2²² to an integer, and the exponent is read from
/// the bits of that integer plus 1.5 · 2²³.
@inline(__always) @_noLocks @_noAllocation
func fastExp2(_ x: Lanes) -> Lanes {
    let valid = x .> -126
    let magic = Lanes(repeating: 12_582_912)
    let clamped = x.replacing(with: 127, where: 127 .< x).replacing(with: 0, where: .!valid)
    let nearest = (clamped + magic) - magic
    let whole = nearest.replacing(with: nearest - 1, where: nearest .> clamped)
    let f = clamped - whole
    let p = (((0.013676539 * f + 0.051666915) * f + 0.24171019) * f + 0.69293132) * f + 1.0000073
    // SAFETY: SIMD4<Float> and SIMD4<UInt32> are both four 32-bit lanes.
    let exponentBits = unsafeBitCast(whole + (127 + magic), to: SIMD4<UInt32>.self) &- 0x4B40_0000
    let scale = unsafeBitCast(exponentBits &<< 23, to: Lanes.self)
    return (p * scale).replacing(with: 0, where: .!valid)
}

/// Four floats from `p`.
@inline(__always) @_noLocks @_noAllocation
func loadFloats(_ p: UnsafePointer<Float>) -> Lanes {
    // SAFETY: the callers pass pointers to at least four floats.
    UnsafeRawPointer(p).loadUnaligned(as: Lanes.self)
}

/// Four floats into `p`.
@inline(__always) @_noLocks @_noAllocation
func storeFloats(_ v: Lanes, to p: UnsafeMutablePointer<Float>) {
    // SAFETY: the callers pass pointers to room for at least four floats.
    UnsafeMutableRawPointer(p).storeBytes(of: v, as: Lanes.self)
}

/// Four spectrum bins from `p`, as their real and imaginary parts.
@inline(__always) @_noLocks @_noAllocation
func loadBins(_ p: UnsafePointer<SpectrumBin>) -> (re: Lanes, im: Lanes) {
    // SAFETY: the callers pass pointers to at least four bins (eight floats, re and im in turn).
    let pairs = UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
    return (pairs.evenHalf, pairs.oddHalf)
}

/// Four spectrum bins into `p`, from their real and imaginary parts.
@inline(__always) @_noLocks @_noAllocation
func storeBins(_ re: Lanes, _ im: Lanes, to p: UnsafeMutablePointer<SpectrumBin>) {
    // SAFETY: the callers pass pointers to room for at least four bins.
    let pairs = SIMD8(re[0], im[0], re[1], im[1], re[2], im[2], re[3], im[3])
    UnsafeMutableRawPointer(p).storeBytes(of: pairs, as: SIMD8<Float>.self)
}
