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
    /// Returns that block. Call only with this state's `network`.
    @_noLocks @_noAllocation
    func predictBandGains(_ network: LearnedGainNetwork) -> UnsafeMutablePointer<Float> {
        let m = network.model
        let scratch = network.scaledInput
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
        matrixVector(network.dense, m.denseBias, normalised, scratch: scratch, into: dense)
        applyTanh(to: dense, count: e)
        matrixVector(network.gateInput, m.gateInputBias, dense, scratch: scratch, into: fromInput)
        matrixVector(network.gateRecurrent, m.gateRecurrentBias, hidden, scratch: scratch, into: fromState)
        // The gates four units at a time (the same arithmetic lane by lane), then one at a time.
        var j = 0
        while j &+ 4 <= h {
            let z = fastSigmoid(loadFloats(fromInput + j) + loadFloats(fromState + j))
            let r = fastSigmoid(loadFloats(fromInput + h + j) + loadFloats(fromState + h + j))
            let n = fastTanh(loadFloats(fromInput + 2 * h + j) + r * loadFloats(fromState + 2 * h + j))
            storeFloats((1 - z) * n + z * loadFloats(hidden + j), to: hidden + j)
            j &+= 4
        }
        while j < h {
            let z = fastSigmoid(fromInput[j] + fromState[j])
            let r = fastSigmoid(fromInput[h + j] + fromState[h + j])
            let n = fastTanh(fromInput[2 * h + j] + r * fromState[2 * h + j])
            hidden[j] = (1 - z) * n + z * hidden[j]
            j &+= 1
        }
        matrixVector(network.output, m.outputBias, hidden, scratch: scratch, into: gains)
        applySigmoid(to: gains, count: m.bandCount)
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

/// output = W · input + bias, W a QuantizedMatrix. The input is scaled to integers of at most
/// ±`limit` in `scratch` (at least `stride` long, zero from `columns` on), then four rows at a
/// time take eight 16 × 16-bit products a step into 32-bit sums (one `pmaddwd` each); each
/// input load serves four rows. A NaN input counts as 0 and an infinite one as the largest.
@inline(__always) @_noLocks @_noAllocation
func matrixVector(
    _ matrix: QuantizedMatrix, _ bias: UnsafePointer<Float>, _ input: UnsafePointer<Float>,
    scratch: UnsafeMutablePointer<Int16>, into output: UnsafeMutablePointer<Float>
) {
    let columns = matrix.columns
    let stride = matrix.stride
    let limit = matrix.limit
    // SAFETY: `input` holds `columns` floats; `scratch` holds at least `stride` integers.
    var largest: Float = 0
    for i in 0 ..< columns { largest = max(largest, abs(input[i])) }
    let toInteger = largest.isFinite && largest > 0 ? limit / largest : 0
    let fromInteger = largest.isFinite ? largest / limit : 0
    for i in 0 ..< columns {
        // |x| ≤ limit + ½ before the truncation toward zero, so the conversion cannot trap.
        let x = input[i] * toInteger
        let rounded = x.isNaN ? 0 : min(max(x, -limit), limit) + (x < 0 ? -0.5 : 0.5)
        scratch[i] = Int16(truncatingIfNeeded: Int32(rounded))
    }
    let x = UnsafeRawPointer(scratch)
    let rows = matrix.rows
    // SAFETY: rows × stride weights, `stride` a whole number of 8-lane groups.
    let weights = UnsafeRawPointer(matrix.weights)
    let rowBytes = stride &* 2
    var j = 0
    while j &+ 4 <= rows {
        let r0 = weights + j &* rowBytes
        let r1 = r0 + rowBytes
        let r2 = r1 + rowBytes
        let r3 = r2 + rowBytes
        var a0 = SIMD4<Int32>()
        var a1 = SIMD4<Int32>()
        var a2 = SIMD4<Int32>()
        var a3 = SIMD4<Int32>()
        var offset = 0
        while offset < rowBytes {
            let xs = SIMD8<Int32>(truncatingIfNeeded: x.loadUnaligned(fromByteOffset: offset, as: SIMD8<Int16>.self))
            a0 &+= pairSums(r0.loadUnaligned(fromByteOffset: offset, as: SIMD8<Int16>.self), xs)
            a1 &+= pairSums(r1.loadUnaligned(fromByteOffset: offset, as: SIMD8<Int16>.self), xs)
            a2 &+= pairSums(r2.loadUnaligned(fromByteOffset: offset, as: SIMD8<Int16>.self), xs)
            a3 &+= pairSums(r3.loadUnaligned(fromByteOffset: offset, as: SIMD8<Int16>.self), xs)
            offset &+= 16
        }
        output[j] = Float(a0.wrappedSum()) * (matrix.rowScales[j] * fromInteger) + bias[j]
        output[j &+ 1] = Float(a1.wrappedSum()) * (matrix.rowScales[j &+ 1] * fromInteger) + bias[j &+ 1]
        output[j &+ 2] = Float(a2.wrappedSum()) * (matrix.rowScales[j &+ 2] * fromInteger) + bias[j &+ 2]
        output[j &+ 3] = Float(a3.wrappedSum()) * (matrix.rowScales[j &+ 3] * fromInteger) + bias[j &+ 3]
        j &+= 4
    }
    while j < rows {
        let row = weights + j &* rowBytes
        var a = SIMD4<Int32>()
        var offset = 0
        while offset < rowBytes {
            let xs = SIMD8<Int32>(truncatingIfNeeded: x.loadUnaligned(fromByteOffset: offset, as: SIMD8<Int16>.self))
            a &+= pairSums(row.loadUnaligned(fromByteOffset: offset, as: SIMD8<Int16>.self), xs)
            offset &+= 16
        }
        output[j] = Float(a.wrappedSum()) * (matrix.rowScales[j] * fromInteger) + bias[j]
        j &+= 1
    }
}

/// w₀x₀ + w₁x₁, w₂x₂ + w₃x₃, …: the products of eight 16-bit weights and inputs, summed in
/// adjacent pairs (the shape of x86's `pmaddwd`, which the compiler emits for it). Cannot
/// overflow for 16-bit operands.
@inline(__always) @_noLocks @_noAllocation
func pairSums(_ weights: SIMD8<Int16>, _ input: SIMD8<Int32>) -> SIMD4<Int32> {
    let products = SIMD8<Int32>(truncatingIfNeeded: weights) &* input
    return products.evenHalf &+ products.oddHalf
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

/// `fastTanh` of `count` floats in place, four at a time and then one at a time.
@inline(__always) @_noLocks @_noAllocation
func applyTanh(to values: UnsafeMutablePointer<Float>, count: Int) {
    var i = 0
    // SAFETY: the callers pass `count` floats.
    while i &+ 4 <= count {
        storeFloats(fastTanh(loadFloats(values + i)), to: values + i)
        i &+= 4
    }
    while i < count {
        values[i] = fastTanh(values[i])
        i &+= 1
    }
}

/// `fastSigmoid` of `count` floats in place, four at a time and then one at a time.
@inline(__always) @_noLocks @_noAllocation
func applySigmoid(to values: UnsafeMutablePointer<Float>, count: Int) {
    var i = 0
    // SAFETY: the callers pass `count` floats.
    while i &+ 4 <= count {
        storeFloats(fastSigmoid(loadFloats(values + i)), to: values + i)
        i &+= 4
    }
    while i < count {
        values[i] = fastSigmoid(values[i])
        i &+= 1
    }
}

/// `fastSigmoid` of four values, bit for bit the scalar one's results.
@inline(__always) @_noLocks @_noAllocation
func fastSigmoid(_ x: Lanes) -> Lanes {
    1 / (1 + fastExp2(-1.442695 * x))
}

/// `fastTanh` of four values, bit for bit the scalar one's results.
@inline(__always) @_noLocks @_noAllocation
func fastTanh(_ x: Lanes) -> Lanes {
    2 * fastSigmoid(2 * x) - 1
}
