import Testing

@testable import DSP

/// A well-formed weight array for `LearnedGainModel` with `dense` and `units` units, the given
/// body (after the 8-float header) from a deterministic generator.
private func modelWeights(dense e: Int, units h: Int, correction: Float = 0, value: (Int) -> Float) -> [Float] {
    let d = NoiseSuppressorBands.featureCount
    let b = NoiseSuppressorBands.count
    let body = 2 * d + e * d + e + 3 * h * e + 3 * h + 3 * h * h + 3 * h + b * h + b
    return [1, Float(d), Float(e), Float(h), Float(b), correction, 0, 0] + (0 ..< body).map(value)
}

private func sigmoid(_ x: Double) -> Double { 1 / (1 + DSPMath.exp(-x)) }
private func tanh(_ x: Double) -> Double { 2 * sigmoid(2 * x) - 1 }

@Suite("Learned gain estimator")
struct LearnedGainModelTests {
    @Test("the band table shares every bin between two bands, in full")
    func bandShares() {
        let bins = 257
        let state = NoiseSuppressorBandState(binCount: bins, model: nil)
        defer { state.deallocate() }
        var total: Float = 0
        for b in 0 ..< NoiseSuppressorBands.count { total += state.bandWeight[b] }
        #expect(abs(total - Float(bins)) < 1e-3)
        for (b, centre) in NoiseSuppressorBands.centres.enumerated() {
            // A band centre belongs to its own band alone.
            let lower = Int(state.lowerBand[centre])
            let share = state.upperShare[centre]
            #expect((lower == b && share == 0) || (lower == b - 1 && share == 1))
        }
    }

    @Test("weights of the wrong shape are refused")
    func refusesWrongShapes() {
        let good = modelWeights(dense: 3, units: 2) { _ in 0 }
        good.withUnsafeBufferPointer { #expect(LearnedGainModel(weights: $0.baseAddress!, count: $0.count) != nil) }
        let short = Array(good.dropLast())
        short.withUnsafeBufferPointer { #expect(LearnedGainModel(weights: $0.baseAddress!, count: $0.count) == nil) }
        var wrongBands = good
        wrongBands[4] = Float(NoiseSuppressorBands.count - 1)
        wrongBands.withUnsafeBufferPointer {
            #expect(LearnedGainModel(weights: $0.baseAddress!, count: $0.count) == nil)
        }
        var wrongVersion = good
        wrongVersion[0] = 2
        wrongVersion.withUnsafeBufferPointer {
            #expect(LearnedGainModel(weights: $0.baseAddress!, count: $0.count) == nil)
        }
        for range: Float in [-1, 17, .nan] {
            var wrongRange = good
            wrongRange[5] = range
            wrongRange.withUnsafeBufferPointer {
                #expect(LearnedGainModel(weights: $0.baseAddress!, count: $0.count) == nil, "range \(range)")
            }
        }
        var correcting = good
        correcting[5] = 4
        correcting.withUnsafeBufferPointer {
            #expect(LearnedGainModel(weights: $0.baseAddress!, count: $0.count)?.correctionRange == 4)
        }
    }

    @Test("matrixVector matches a double-precision product at every column count (16-steps, 4-steps, tails)")
    func matrixVectorMatchesReference() {
        var seed: UInt64 = 987_654_321
        func next() -> Float {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Int64(bitPattern: seed) >> 11) / Float(1 << 52)
        }
        for columns in [1, 3, 4, 5, 15, 16, 17, 20, 31, 32, 33, 64, 157] {
            let rows = 3
            // One float of slack either side, so a load past an edge would read a poison value.
            let weights = (0 ..< rows * columns + 2).map { _ in next() }
            let input = (0 ..< columns + 2).map { _ in next() * 8 }
            let bias = (0 ..< rows).map { _ in next() }
            var poisoned = weights
            poisoned[0] = .nan
            poisoned[rows * columns + 1] = .nan
            var poisonedInput = input
            poisonedInput[0] = .nan
            poisonedInput[columns + 1] = .nan
            var output = [Float](repeating: 0, count: rows)
            poisoned.withUnsafeBufferPointer { w in
                poisonedInput.withUnsafeBufferPointer { x in
                    bias.withUnsafeBufferPointer { b in
                        output.withUnsafeMutableBufferPointer { o in
                            matrixVector(
                                w.baseAddress! + 1, b.baseAddress!, x.baseAddress! + 1, rows: rows, columns: columns,
                                into: o.baseAddress!)
                        }
                    }
                }
            }
            for j in 0 ..< rows {
                let expected = (0 ..< columns).reduce(Double(bias[j])) {
                    $0 + Double(weights[1 + j * columns + $1]) * Double(input[1 + $1])
                }
                #expect(abs(Double(output[j]) - expected) < 1e-5 * Double(columns), "columns \(columns), row \(j)")
            }
        }
    }

    @Test("the forward step matches a plain double-precision GRU, frame after frame")
    func forwardMatchesReference() throws {
        let e = 3
        let h = 2
        let d = NoiseSuppressorBands.featureCount
        let bands = NoiseSuppressorBands.count
        var seed: UInt64 = 12345
        let weights = modelWeights(dense: e, units: h) { _ in
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Int64(bitPattern: seed) >> 11) / Float(1 << 52) * 0.6
        }
        try weights.withUnsafeBufferPointer { w in
            let model = try #require(LearnedGainModel(weights: w.baseAddress!, count: w.count))
            let state = NoiseSuppressorBandState(binCount: 257, model: model)
            defer { state.deallocate() }
            var hidden = [Double](repeating: 0, count: h)
            let base = LearnedGainModel.headerCount
            func at(_ i: Int) -> Double { Double(w[base + i]) }
            let mean = 0
            let deviation = d
            let dense = 2 * d
            let denseBias = dense + e * d
            let gateIn = denseBias + e
            let gateInBias = gateIn + 3 * h * e
            let gateRec = gateInBias + 3 * h
            let gateRecBias = gateRec + 3 * h * h
            let out = gateRecBias + 3 * h
            let outBias = out + bands * h
            for frame in 0 ..< 4 {
                for i in 0 ..< d { state.features[i] = Float(sin(Double(i * 7 + frame * 3))) * 4 }
                let gains = state.predictBandGains(model)
                let x = (0 ..< d).map { (Double(state.features[$0]) - at(mean + $0)) * at(deviation + $0) }
                let layer = (0 ..< e).map { j in
                    tanh((0 ..< d).reduce(at(denseBias + j)) { $0 + at(dense + j * d + $1) * x[$1] })
                }
                let fromInput = (0 ..< 3 * h).map { j in
                    (0 ..< e).reduce(at(gateInBias + j)) { $0 + at(gateIn + j * e + $1) * layer[$1] }
                }
                let fromState = (0 ..< 3 * h).map { j in
                    (0 ..< h).reduce(at(gateRecBias + j)) { $0 + at(gateRec + j * h + $1) * hidden[$1] }
                }
                for j in 0 ..< h {
                    let z = sigmoid(fromInput[j] + fromState[j])
                    let r = sigmoid(fromInput[h + j] + fromState[h + j])
                    let n = tanh(fromInput[2 * h + j] + r * fromState[2 * h + j])
                    hidden[j] = (1 - z) * n + z * hidden[j]
                }
                for b in 0 ..< bands {
                    let expected = sigmoid((0 ..< h).reduce(at(outBias + b)) { $0 + at(out + b * h + $1) * hidden[$1] })
                    #expect(abs(Double(gains[b]) - expected) < 1e-4, "frame \(frame), band \(b)")
                }
            }
        }
    }
}

private func sin(_ x: Double) -> Double { DSPMath.sin(x) }

/// Runs `count` frames of deterministic two-mic noise and a tone through a suppressor whose
/// learned estimator says `gain` in every band (zero weights, output bias logit(gain)); with a
/// `correction` range, `gain` is σ, the correction's input. Without weights, the classic gain's
/// output of the same input.
private func constantGainOutput(_ gain: Float?, correction: Float = 0, count: Int = 48_000) throws -> [Float] {
    let d = NoiseSuppressorBands.featureCount
    let bands = NoiseSuppressorBands.count
    let e = 2
    let h = 2
    let outputBias = 8 + 2 * d + e * d + e + 3 * h * e + 3 * h + 3 * h * h + 3 * h + bands * h
    var weights = modelWeights(dense: e, units: h, correction: correction) { i in i >= d && i < 2 * d ? 1 : 0 }
    if let gain {
        let bias = DSPMath.log(Double(gain) / (1 - Double(gain)))
        for b in 0 ..< bands { weights[outputBias + b] = Float(bias) }
    }
    return try weights.withUnsafeBufferPointer { w in
        let model = try #require(LearnedGainModel(weights: w.baseAddress!, count: w.count))
        let suppressor = try NoiseSuppressor(
            sampleRate: 48_000, latency: .standard, model: gain == nil ? nil : model)
        var state: UInt64 = 99
        var primary = [Float](repeating: 0, count: count)
        var reference = [Float](repeating: 0, count: count)
        for i in 0 ..< count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let noise = Float(Int64(bitPattern: state) >> 11) / Float(1 << 52) * 0.02
            let tone = 0.1 * Float(DSPMath.sin(Double(i) * 0.05))
            primary[i] = tone + noise
            reference[i] = 0.5 * tone + noise
        }
        var clean = [Float](repeating: 0, count: count)
        suppressor.process(primary: primary, reference: reference, clean: &clean, frameCount: count)
        #expect(suppressor.usesLearnedGain == (gain != nil))
        return clean
    }
}

@Suite("Learned gain estimator in the suppressor")
struct LearnedGainPathTests {
    @Test("the estimator's band gains are what the suppressor applies, down to its floor")
    func appliesBandGains() throws {
        let unity = try constantGainOutput(0.999_999)
        let half = try constantGainOutput(0.5)
        let tiny = try constantGainOutput(1e-6)
        let peak = unity.map(abs).max() ?? 0
        #expect(peak > 0.01)
        let floor = Float(DSPMath.amplitude(decibels: -30))
        var halfError: Float = 0
        var floorError: Float = 0
        for i in 0 ..< unity.count {
            halfError = max(halfError, abs(half[i] - 0.5 * unity[i]))
            floorError = max(floorError, abs(tiny[i] - floor * unity[i]))
        }
        #expect(halfError <= 1e-4 * peak)
        #expect(floorError <= 1e-4 * peak)
    }

    @Test("a correcting estimator at σ = ½ applies the classic gain; below it, a share of the classic gain")
    func correctsClassicGain() throws {
        let classic = try constantGainOutput(nil)
        let unchanged = try constantGainOutput(0.5, correction: 4)
        // 2^(4·(2σ − 1)) = 0.75: the classic floor (−25 dB) × 0.75 stays above the learned floor (−30 dB).
        let sigma = Float(0.5 + 0.5 * DSPMath.log(0.75) / DSPMath.log(2) / 4)
        let lowered = try constantGainOutput(sigma, correction: 4)
        let peak = classic.map(abs).max() ?? 0
        // The classic gain keeps about −23 dB of this input's peak: enough to compare against.
        #expect(peak > 1e-3)
        var unchangedError: Float = 0
        var loweredError: Float = 0
        for i in 0 ..< classic.count {
            unchangedError = max(unchangedError, abs(unchanged[i] - classic[i]))
            loweredError = max(loweredError, abs(lowered[i] - 0.75 * classic[i]))
        }
        #expect(unchangedError <= 1e-4 * peak)
        #expect(loweredError <= 1e-3 * peak)
    }
}
