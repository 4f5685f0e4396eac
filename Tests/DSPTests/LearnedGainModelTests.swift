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
        let state = NoiseSuppressorBandState(binCount: bins, laneBins: 260, model: nil)
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

    @Test("matrixVector matches a double-precision product within its 16-bit rounding, at every column count")
    func matrixVectorMatchesReference() {
        var seed: UInt64 = 987_654_321
        func next() -> Float {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Int64(bitPattern: seed) >> 11) / Float(1 << 52)
        }
        for columns in [1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 157, 192, 256] {
            // Seven rows: one group of four, then three alone.
            let rows = 7
            // One float of slack either side, so a read past an edge would meet a NaN (and the
            // quantizer refuses non-finite weights).
            var weights = (0 ..< rows * columns + 2).map { _ in next() }
            weights[0] = .nan
            weights[rows * columns + 1] = .nan
            let input = (0 ..< columns).map { _ in next() * 8 }
            let bias = (0 ..< rows).map { _ in next() }
            let matrix = weights.withUnsafeBufferPointer {
                QuantizedMatrix($0.baseAddress! + 1, rows: rows, columns: columns)
            }
            defer { matrix.deallocate() }
            #expect(matrix.stride % 8 == 0 && matrix.stride >= columns && matrix.stride < columns + 8)
            // The scratch past `columns` holds whatever: the padding weights are 0.
            var scratch = [Int16](repeating: .max, count: matrix.stride)
            var output = [Float](repeating: 0, count: rows)
            input.withUnsafeBufferPointer { x in
                bias.withUnsafeBufferPointer { b in
                    scratch.withUnsafeMutableBufferPointer { q in
                        output.withUnsafeMutableBufferPointer { o in
                            matrixVector(
                                matrix, b.baseAddress!, x.baseAddress!, scratch: q.baseAddress!, into: o.baseAddress!)
                        }
                    }
                }
            }
            let largestInput = Double(input.map(abs).max() ?? 0)
            let limit = Double(matrix.limit)
            let inputStep = largestInput / limit
            // The input as the kernel scales it: the nearest step, halves away from zero.
            let scaledInput = input.map { x -> Double in
                let v = Double(x) / inputStep
                return (v < 0 ? -1 : 1) * (abs(v) + 0.5).rounded(.down)
            }
            for j in 0 ..< rows {
                let row = (0 ..< columns).map { Double(weights[1 + j * columns + $0]) }
                let weightStep = Double(matrix.rowScales[j])
                let integers = (0 ..< matrix.stride).map { Double(matrix.weights[j * matrix.stride + $0]) }
                // Each weight is its row's nearest step, the largest one at ±limit, the padding 0.
                #expect(integers.map(abs).max() == limit, "columns \(columns), row \(j)")
                #expect(integers[columns...].allSatisfy { $0 == 0 })
                for i in 0 ..< columns {
                    #expect(abs(integers[i] * weightStep - row[i]) <= weightStep * 0.501)
                }
                // The integer sums are exact: the output is the product of the rounded values.
                let rounded = (0 ..< columns).reduce(0) { $0 + integers[$1] * scaledInput[$1] }
                let exact = rounded * weightStep * inputStep + Double(bias[j])
                #expect(abs(Double(output[j]) - exact) <= 1e-6 * (abs(exact) + 1), "columns \(columns), row \(j)")
                // And the float product is within the two roundings of that.
                let expected = (0 ..< columns).reduce(Double(bias[j])) { $0 + row[$1] * Double(input[$1]) }
                let bound = (0 ..< columns).reduce(1e-6 * Double(columns)) {
                    $0 + abs(row[$1]) * inputStep / 2 + abs(Double(input[$1])) * weightStep / 2 + inputStep * weightStep
                        / 4
                }
                #expect(abs(Double(output[j]) - expected) <= bound, "columns \(columns), row \(j)")
                // The rounding is a 2000th of the largest possible product or finer (1/limit: 1/2896 at 256).
                let largestWeight = row.map(abs).max() ?? 0
                #expect(bound <= 1e-6 * Double(columns) + Double(columns) * largestWeight * largestInput / 2000)
            }
        }
    }

    @Test("matrixVector's 32-bit sums cannot overflow, and a NaN or infinite input cannot trap")
    func matrixVectorExtremes() {
        for columns in [8, 157, 192, 256, 1024] {
            #expect(
                columns * QuantizedMatrix.limit(stride: columns) * QuantizedMatrix.limit(stride: columns)
                    <= Int(Int32.max))
            // Every weight and input at the limit, all of one sign: the largest sums there are.
            let weights = [Float](repeating: 0.5, count: columns) + [Float](repeating: -0.5, count: columns)
            let matrix = weights.withUnsafeBufferPointer { QuantizedMatrix($0.baseAddress!, rows: 2, columns: columns) }
            defer { matrix.deallocate() }
            var scratch = [Int16](repeating: 0, count: matrix.stride)
            var output = [Float](repeating: 0, count: 2)
            func multiply(_ input: [Float]) -> [Float] {
                input.withUnsafeBufferPointer { x in
                    [Float](repeating: 1, count: 2).withUnsafeBufferPointer { b in
                        scratch.withUnsafeMutableBufferPointer { q in
                            output.withUnsafeMutableBufferPointer { o in
                                matrixVector(
                                    matrix, b.baseAddress!, x.baseAddress!, scratch: q.baseAddress!,
                                    into: o.baseAddress!)
                            }
                        }
                    }
                }
                return output
            }
            let full = multiply([Float](repeating: -3, count: columns))
            #expect(abs(full[0] - (1 - 1.5 * Float(columns))) <= 1e-5 * Float(columns), "columns \(columns)")
            #expect(abs(full[1] - (1 + 1.5 * Float(columns))) <= 1e-5 * Float(columns), "columns \(columns)")
            // A NaN counts as 0.
            var withNaN = [Float](repeating: 2, count: columns)
            withNaN[0] = .nan
            let nanOut = multiply(withNaN)
            #expect(abs(nanOut[0] - (1 + Float(columns - 1))) <= 1e-5 * Float(columns), "columns \(columns)")
            // An infinity leaves nothing to scale by: the bias alone, finite.
            var withInfinity = [Float](repeating: 2, count: columns)
            withInfinity[columns - 1] = -.infinity
            #expect(multiply(withInfinity) == [1, 1])
        }
    }

    @Test("the four-lane exp2, log2, sigmoid, tanh, max and min give the scalar ones' results bit for bit")
    func fourLaneMatchesScalar() {
        var values: [Float] = [
            0, -0, 1, -1, 0.5, -0.5, 126.99, 127, 127.5, 200, -125.99, -126, -126.01, -300, .infinity, -.infinity, .nan,
            .leastNormalMagnitude, -.leastNormalMagnitude, 1e-30, 3.999_999_8, 4.000_000_5,
        ]
        var x: Float = -140
        while x < 140 {
            values.append(x)
            x += 0.013_7
        }
        while values.count % 4 != 0 { values.append(0.25) }
        var mismatches = 0
        for i in stride(from: 0, to: values.count, by: 4) {
            let v = SIMD4(values[i], values[i + 1], values[i + 2], values[i + 3])
            let w = SIMD4(values[i + 3], values[i], -values[i + 1], values[i + 2])
            let (e, s, t, l) = (fastExp2(v), fastSigmoid(v), fastTanh(v), fastLog2(v))
            let (big, small) = (larger(v, w), smaller(v, w))
            for lane in 0 ..< 4 {
                let scalar = values[i + lane]
                let other = w[lane]
                for (got, want) in [
                    (e[lane], fastExp2(scalar)), (s[lane], fastSigmoid(scalar)), (t[lane], fastTanh(scalar)),
                    (l[lane], fastLog2(scalar)), (big[lane], max(scalar, other)), (small[lane], min(scalar, other)),
                ]
                where got.bitPattern != want.bitPattern && !(got.isNaN && want.isNaN) {
                    mismatches += 1
                    if mismatches < 5 { Issue.record("at \(scalar): \(got) against \(want)") }
                }
            }
        }
        #expect(mismatches == 0)
        // And the scalar exp2 is what it says: within 8e-6 of 2^x in its range, 0 below it.
        for x in stride(from: -125.9, to: 127, by: 0.37) {
            let want = DSPMath.exp(x * 0.693_147_180_559_945_3)
            #expect(abs(Double(fastExp2(Float(x))) - want) <= 8e-6 * want, "2^\(x)")
        }
        #expect(fastExp2(-126) == 0 && fastExp2(.nan) == 0 && fastExp2(SIMD4(repeating: .nan)) == .zero)
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
            let state = NoiseSuppressorBandState(binCount: 257, laneBins: 260, model: model)
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
                let gains = state.predictBandGains(try #require(state.network))
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
