// The learned gain estimator's realtime path: band sums, features, the network's forward step
// and the band → bin gain interpolation. `@_noLocks @_noAllocation` throughout, in memory made by
// `NoiseSuppressorBandState.init` (NoiseSuppressorModel.swift). The thread that owns the
// suppressor (the realtime thread in a JACK client).

extension NoiseSuppressorBandState {
    /// Clears the band sums before a frame.
    @inline(__always) @_noLocks @_noAllocation
    func clearSums() {
        let n = 6 * bandCount  // Self.sumKinds kinds of sums
        for i in 0 ..< n { sums[i] = 0 }
    }

    /// Adds bin `k`'s values to its two bands (shares 1 − s and s).
    @inline(__always) @_noLocks @_noAllocation
    func accumulate(
        bin k: Int, primaryPower: Float, outputPower: Float, noise: Float, primaryPSD: Float, referencePSD: Float,
        gain: Float
    ) {
        let bands = bandCount
        let b = Int(lowerBand[k])
        let s = upperShare[k]
        let r = 1 - s
        // SAFETY: b + 1 < bands (the table is built so), and each kind's block is `bands` long.
        sums[b] += r * primaryPower
        sums[b + 1] += s * primaryPower
        sums[bands + b] += r * outputPower
        sums[bands + b + 1] += s * outputPower
        sums[2 * bands + b] += r * noise
        sums[2 * bands + b + 1] += s * noise
        sums[3 * bands + b] += r * primaryPSD
        sums[3 * bands + b + 1] += s * primaryPSD
        sums[4 * bands + b] += r * referencePSD
        sums[4 * bands + b + 1] += s * referencePSD
        sums[5 * bands + b] += r * gain
        sums[5 * bands + b + 1] += s * gain
    }

    /// The frame's features from its band sums: log₂ powers (primary, canceller output, noise
    /// estimate), log₂ of the calibrated PSD ratio and the mean classic gain per band, then the
    /// broadband level difference above the calibration and the talker's level difference
    /// (both in dB / 10).
    @_noLocks @_noAllocation
    func finishFeatures(differenceAboveCalibration: Float, speechDifference: Float) {
        let bands = bandCount
        let floor: Float = 1e-10
        for b in 0 ..< bands {
            // SAFETY: features holds featuresPerBand · bands + broadbandFeatures floats.
            features[b] = fastLog2(sums[b] + floor)
            features[bands + b] = fastLog2(sums[bands + b] + floor)
            features[2 * bands + b] = fastLog2(sums[2 * bands + b] + floor)
            features[3 * bands + b] = fastLog2(sums[3 * bands + b] + floor) - fastLog2(sums[4 * bands + b] + floor)
            features[4 * bands + b] = sums[5 * bands + b] / bandWeight[b]
        }
        features[5 * bands] = 0.1 * differenceAboveCalibration
        features[5 * bands + 1] = 0.1 * speechDifference
    }

    /// One step of the network on `features`: the band gains, in `modelState`'s last block.
    /// Returns that block. Call only when `model` is set.
    @_noLocks @_noAllocation
    func predictBandGains(_ m: LearnedGainModel) -> UnsafeMutablePointer<Float> {
        let d = m.featureCount
        let e = m.denseUnits
        let h = m.recurrentUnits
        // SAFETY: modelState holds E + H + 3H + 3H + B + D floats (LearnedGainModel.stateCount).
        let dense = modelState
        let hidden = modelState + e
        let fromInput = hidden + h
        let fromState = fromInput + 3 * h
        let gains = fromState + 3 * h
        let normalised = gains + m.bandCount
        // Normalised features (once a frame) into the dense tanh layer.
        for i in 0 ..< d { normalised[i] = (features[i] - m.mean[i]) * m.inverseDeviation[i] }
        matrixVector(m.denseWeights, m.denseBias, normalised, rows: e, columns: d, into: dense)
        for j in 0 ..< e { dense[j] = fastTanh(dense[j]) }
        matrixVector(m.gateInputWeights, m.gateInputBias, dense, rows: 3 * h, columns: e, into: fromInput)
        matrixVector(m.gateRecurrentWeights, m.gateRecurrentBias, hidden, rows: 3 * h, columns: h, into: fromState)
        for j in 0 ..< h {
            let z = fastSigmoid(fromInput[j] + fromState[j])
            let r = fastSigmoid(fromInput[h + j] + fromState[h + j])
            let n = fastTanh(fromInput[2 * h + j] + r * fromState[2 * h + j])
            hidden[j] = (1 - z) * n + z * hidden[j]
        }
        matrixVector(m.outputWeights, m.outputBias, hidden, rows: m.bandCount, columns: h, into: gains)
        for b in 0 ..< m.bandCount { gains[b] = fastSigmoid(gains[b]) }
        return gains
    }

    /// Bin `k`'s gain interpolated from the band gains.
    @inline(__always) @_noLocks @_noAllocation
    func binGain(bin k: Int, bandGains: UnsafeMutablePointer<Float>) -> Float {
        let b = Int(lowerBand[k])
        let s = upperShare[k]
        // SAFETY: b + 1 < bands.
        return (1 - s) * bandGains[b] + s * bandGains[b + 1]
    }
}

/// output = W · input + bias, W row-major `rows` × `columns`. Four partial sums per row, so the
/// additions do not wait on each other. Four 4-lane SIMD sums measured no faster at 64 or at 192
/// wide (docs/noise-suppression.md): at 192 wide the products wait on the weights streamed from
/// memory, not on the additions.
@inline(__always) @_noLocks @_noAllocation
func matrixVector(
    _ weights: UnsafePointer<Float>, _ bias: UnsafePointer<Float>, _ input: UnsafePointer<Float>, rows: Int,
    columns: Int, into output: UnsafeMutablePointer<Float>
) {
    let quads = columns / 4 * 4
    for j in 0 ..< rows {
        // SAFETY: the callers pass matrices of rows × columns and vectors of their sizes.
        let row = weights + j * columns
        var s0: Float = 0
        var s1: Float = 0
        var s2: Float = 0
        var s3: Float = 0
        var i = 0
        while i < quads {
            s0 += row[i] * input[i]
            s1 += row[i + 1] * input[i + 1]
            s2 += row[i + 2] * input[i + 2]
            s3 += row[i + 3] * input[i + 3]
            i += 4
        }
        while i < columns {
            s0 += row[i] * input[i]
            i += 1
        }
        output[j] = ((s0 + s1) + (s2 + s3)) + bias[j]
    }
}

/// 1 / (1 + e^−x), through `fastExp2` (within 1e-5).
@inline(__always) @_noLocks @_noAllocation
func fastSigmoid(_ x: Float) -> Float {
    1 / (1 + fastExp2(-1.442695 * x))
}

/// tanh x = 2σ(2x) − 1.
@inline(__always) @_noLocks @_noAllocation
func fastTanh(_ x: Float) -> Float {
    2 * fastSigmoid(2 * x) - 1
}
