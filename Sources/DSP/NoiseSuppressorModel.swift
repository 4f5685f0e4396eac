// The noise suppressor's learned gain estimator: its band layout, its features and the weights
// it reads from CDenoiseModel. Set-up only (any thread but the realtime one); the realtime half
// is NoiseSuppressorModelKernel.swift.
//
// The model reuses the suppressor's front end. Per frame it sees, on `bandCount` triangular bands
// (RNNoise-style: each bin shares itself between the two nearest band centres), the primary's
// power, the canceller output's power, the post-filter's noise estimate, the calibrated level
// difference and the classic gain, plus two broadband figures; it predicts one gain per band,
// which is interpolated back to the bins and applied to the canceller's output. The classic
// post-filter keeps running underneath (its state never depends on the model), so the features
// are a function of the input alone: training reads them from `NoiseSuppressor.frameFeatures`,
// the very code that runs live (Benchmarks/MicmonBench/FeatureDump.swift).

import CDenoiseModel

/// The bands the model works on, in bins of the 512-sample frame.
public enum NoiseSuppressorBands {
    /// Band centres (bin indices, rising, first 0, last the Nyquist bin): about one bin apart up
    /// to 750 Hz, then widening to about a sixth of an octave.
    public static let centres: [Int] = [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 19, 22, 26, 30, 35, 41, 48, 56, 65, 76, 89, 104, 121, 141, 164,
        191, 222, 256,
    ]
    /// `centres.count`, as a literal: the realtime path may not touch the array's lazy global.
    public static var count: Int { 31 }
    /// Per-band features (primary power, canceller output power, noise estimate, level
    /// difference, classic gain) and the broadband ones (level difference above calibration,
    /// the talker's level difference).
    public static var featuresPerBand: Int { 5 }
    public static var broadbandFeatures: Int { 2 }
    public static var featureCount: Int { featuresPerBand * count + broadbandFeatures }
}

/// The learned gain estimator's weights, pointers into CDenoiseModel's constant array:
/// normalisation, a dense tanh layer, a GRU (PyTorch's gate convention: update z, reset r,
/// candidate n) and a dense sigmoid layer giving one gain per band. Layout, all row-major with
/// one row per output unit: a header [version 1, features D, dense units E, GRU units H, bands B,
/// correction range R, 0, 0], mean[D], 1/deviation[D], W[E×D], b[E], W_in[3H×E], b_in[3H],
/// W_rec[3H×H], b_rec[3H] (z, r, n blocks), W_out[B×H], b_out[B].
///
/// With R = 0 the network's output σ is the band's gain. With R > 0 it corrects the classic
/// gain instead: each bin's gain is its classic gain × 2^(R·(2σ − 1)), at most 1, so a network
/// whose output sits at σ = ½ applies the classic gain, with its per-bin resolution, unchanged.
struct LearnedGainModel {
    let featureCount: Int
    let denseUnits: Int
    let recurrentUnits: Int
    let bandCount: Int
    /// R in the layout above: 0 when the output is the gain, else the correction's range in
    /// octaves either way.
    let correctionRange: Float
    let mean: UnsafePointer<Float>
    let inverseDeviation: UnsafePointer<Float>
    let denseWeights: UnsafePointer<Float>
    let denseBias: UnsafePointer<Float>
    let gateInputWeights: UnsafePointer<Float>
    let gateInputBias: UnsafePointer<Float>
    let gateRecurrentWeights: UnsafePointer<Float>
    let gateRecurrentBias: UnsafePointer<Float>
    let outputWeights: UnsafePointer<Float>
    let outputBias: UnsafePointer<Float>

    static var headerCount: Int { 8 }

    /// The model built in for `latency`, or nil when there is none or it does not fit this
    /// suppressor's bands and features (the classic gain is used then).
    static func builtIn(for latency: NoiseSuppressorLatency) -> LearnedGainModel? {
        var count = 0
        guard let weights = micmon_denoise_model(latency == .standard ? 0 : 1, &count) else { return nil }
        return LearnedGainModel(weights: weights, count: count)
    }

    init?(weights: UnsafePointer<Float>, count: Int) {
        guard count >= Self.headerCount, weights[0] == 1 else { return nil }
        let d = Int(weights[1])
        let e = Int(weights[2])
        let h = Int(weights[3])
        let b = Int(weights[4])
        let range = weights[5]
        guard d == NoiseSuppressorBands.featureCount, b == NoiseSuppressorBands.count, e > 0, h > 0,
            range >= 0, range <= 16
        else {
            return nil
        }
        let expected = Self.headerCount + 2 * d + e * d + e + 3 * h * e + 3 * h + 3 * h * h + 3 * h + b * h + b
        guard count == expected else { return nil }
        featureCount = d
        denseUnits = e
        recurrentUnits = h
        bandCount = b
        correctionRange = range
        var next = weights + Self.headerCount
        func take(_ n: Int) -> UnsafePointer<Float> {
            defer { next += n }
            return next
        }
        mean = take(d)
        inverseDeviation = take(d)
        denseWeights = take(e * d)
        denseBias = take(e)
        gateInputWeights = take(3 * h * e)
        gateInputBias = take(3 * h)
        gateRecurrentWeights = take(3 * h * h)
        gateRecurrentBias = take(3 * h)
        outputWeights = take(b * h)
        outputBias = take(b)
    }

    /// Floats of working memory `LearnedGainModelState` needs.
    var stateCount: Int { denseUnits + recurrentUnits + 6 * recurrentUnits + bandCount + featureCount }
}

/// One of the network's weight matrices in 16-bit integers, for `matrixVector`
/// (NoiseSuppressorModelKernel.swift): row j is `weights[j·stride ..< j·stride + columns]` ×
/// `rowScales[j]`, each row scaled so its largest weight is ±`limit`; the `stride − columns`
/// weights after each row are 0. The input is scaled to ±`limit` the same way at each product.
/// With `stride · limit² ≤ Int32.max` no 32-bit sum of products can overflow, whatever the
/// weights and input. 16-bit weights are half the memory of the float ones (the 192-wide
/// standard model's 1 MB streams through the cache every hop) and multiply eight at a time
/// (`pmaddwd`); the rounding, below 1/`limit` of a row's largest weight (1/3344 at 192 columns),
/// moved the dev kit's dPESQ by about 1e-4 and nothing else (docs/noise-suppression.md, "Tenth step").
struct QuantizedMatrix {
    let rows: Int
    let columns: Int
    /// `columns` rounded up to whole groups of `lanes`.
    let stride: Int
    let limit: Float
    let weights: UnsafeMutablePointer<Int16>
    let rowScales: UnsafeMutablePointer<Float>

    /// Columns multiplied at a time: one 16-byte load of 16-bit weights.
    @inline(__always) static var lanes: Int { 8 }

    /// The largest integer magnitude for `stride` columns: ⌊√(Int32.max / stride)⌋, at most Int16.max.
    static func limit(stride: Int) -> Int {
        var limit = min(Int(Double(Int32.max / Int32(stride)).squareRoot()), Int(Int16.max))
        while stride * limit * limit > Int(Int32.max) { limit -= 1 }
        return limit
    }

    /// `rows` × `columns` float weights, row-major, rounded to the nearest step of their row.
    init(_ source: UnsafePointer<Float>, rows: Int, columns: Int) {
        precondition(rows > 0 && columns > 0, "a matrix has rows and columns")
        self.rows = rows
        self.columns = columns
        stride = (columns + Self.lanes - 1) / Self.lanes * Self.lanes
        let limit = Self.limit(stride: stride)
        self.limit = Float(limit)
        weights = .allocate(capacity: rows * stride)
        weights.initialize(repeating: 0, count: rows * stride)
        rowScales = .allocate(capacity: rows)
        for j in 0 ..< rows {
            let row = source + j * columns
            var largest: Float = 0
            for i in 0 ..< columns { largest = max(largest, abs(row[i])) }
            precondition(largest.isFinite, "weights are finite")
            rowScales[j] = largest / Float(limit)
            guard largest > 0 else { continue }
            let toInteger = Float(limit) / largest
            for i in 0 ..< columns {
                weights[j * stride + i] = Int16(clamping: Int((row[i] * toInteger).rounded()))
            }
        }
    }

    func deallocate() {
        weights.deallocate()
        rowScales.deallocate()
    }
}

/// A model with its matrices in 16-bit integers (QuantizedMatrix), in memory this owns, and the
/// room for one scaled input vector.
struct LearnedGainNetwork {
    let model: LearnedGainModel
    let dense: QuantizedMatrix
    let gateInput: QuantizedMatrix
    let gateRecurrent: QuantizedMatrix
    let output: QuantizedMatrix
    /// One input vector scaled to integers, as long as the widest stride; zero beyond its columns.
    let scaledInput: UnsafeMutablePointer<Int16>

    init(_ m: LearnedGainModel) {
        model = m
        dense = QuantizedMatrix(m.denseWeights, rows: m.denseUnits, columns: m.featureCount)
        gateInput = QuantizedMatrix(m.gateInputWeights, rows: 3 * m.recurrentUnits, columns: m.denseUnits)
        gateRecurrent = QuantizedMatrix(
            m.gateRecurrentWeights, rows: 3 * m.recurrentUnits, columns: m.recurrentUnits)
        output = QuantizedMatrix(m.outputWeights, rows: m.bandCount, columns: m.recurrentUnits)
        let widest = max(dense.stride, gateInput.stride, gateRecurrent.stride, output.stride)
        scaledInput = .allocate(capacity: widest)
        scaledInput.initialize(repeating: 0, count: widest)
    }

    func deallocate() {
        dense.deallocate()
        gateInput.deallocate()
        gateRecurrent.deallocate()
        output.deallocate()
        scaledInput.deallocate()
    }
}

/// The per-frame band machinery of the suppressor, in memory it owns: the bin → band table, the
/// band sums of one frame, the features, and the model's state if there is a model.
struct NoiseSuppressorBandState {
    /// `NoiseSuppressorBands.count`, kept here for the realtime path.
    let bandCount: Int
    /// Per bin: the lower of its two bands, and its share of the upper one (0…1).
    let lowerBand: UnsafeMutablePointer<Int32>
    let upperShare: UnsafeMutablePointer<Float>
    /// Per band: the sum of its bins' shares.
    let bandWeight: UnsafeMutablePointer<Float>
    /// One frame's band sums, `count` each: primary power, canceller output power, noise
    /// estimate, smoothed primary PSD, calibrated smoothed reference PSD, classic gain.
    let sums: UnsafeMutablePointer<Float>
    /// The last frame's features (`NoiseSuppressorBands.featureCount`).
    let features: UnsafeMutablePointer<Float>
    /// The per-bin classic gain of the current frame (laneBins: binCount and padding).
    let binGain: UnsafeMutablePointer<Float>
    /// The learned estimator, when there is one.
    let network: LearnedGainNetwork?
    var model: LearnedGainModel? { network?.model }
    /// The model's working memory: dense layer (E), GRU state (H), gate inputs from the dense
    /// layer (3H) and from the state (3H), band gains (B), normalised features (D).
    let modelState: UnsafeMutablePointer<Float>

    @inline(__always) static var sumKinds: Int { 6 }

    init(binCount: Int, laneBins: Int, model: LearnedGainModel?) {
        let centres = NoiseSuppressorBands.centres
        let bands = centres.count
        precondition(bands == NoiseSuppressorBands.count, "count matches the centres")
        precondition(centres.last == binCount - 1, "the bands end at the Nyquist bin")
        bandCount = bands
        lowerBand = .allocate(capacity: binCount)
        upperShare = .allocate(capacity: binCount)
        bandWeight = .allocate(capacity: bands)
        bandWeight.initialize(repeating: 0, count: bands)
        for k in 0 ..< binCount {
            var b = 0
            while b < bands - 2 && centres[b + 1] <= k { b += 1 }
            let share = min(Float(k - centres[b]) / Float(centres[b + 1] - centres[b]), 1)
            lowerBand[k] = Int32(b)
            upperShare[k] = share
            bandWeight[b] += 1 - share
            bandWeight[b + 1] += share
        }
        sums = .allocate(capacity: Self.sumKinds * bands)
        sums.initialize(repeating: 0, count: Self.sumKinds * bands)
        features = .allocate(capacity: NoiseSuppressorBands.featureCount)
        features.initialize(repeating: 0, count: NoiseSuppressorBands.featureCount)
        binGain = .allocate(capacity: laneBins)
        binGain.initialize(repeating: 0, count: laneBins)
        network = model.map(LearnedGainNetwork.init)
        let stateCount = model?.stateCount ?? 0
        modelState = .allocate(capacity: max(stateCount, 1))
        modelState.initialize(repeating: 0, count: max(stateCount, 1))
    }

    func deallocate() {
        lowerBand.deallocate()
        upperShare.deallocate()
        bandWeight.deallocate()
        sums.deallocate()
        features.deallocate()
        binGain.deallocate()
        network?.deallocate()
        modelState.deallocate()
    }
}
