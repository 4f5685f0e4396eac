// Whole-take statistics of one channel for `micmon report` and the end-of-take summary: sample
// peak, RMS, DC offset, clips as runs of full-scale samples, non-finite samples, a noise-floor
// estimate, and the level envelope the report's picture draws. Pure math on plain values; not
// for the realtime thread (the envelope grows). One thread at a time.

/// One channel's statistics, fed samples in order, in blocks of any length.
///
/// - A *clip* is a run of consecutive samples at full scale (|x| ≥ `fullScale`: 1.0 for floats,
///   the largest code for integer PCM, e.g. 32767/32768 for 16 bits): ten clipped samples in a
///   row are one clip. `clipSamples` counts the samples.
/// - The *noise floor* is the 10th percentile of the RMS of consecutive 50 ms blocks (the whole
///   blocks of the take; a take shorter than one block has none), from a histogram of 0.5 dB
///   bins: the level the quiet tenth of the take sits at. Digital silence reads the −160 dB floor.
/// - Non-finite samples (NaN, ±∞) are counted and otherwise read as 0.
/// - The envelope holds, per `envelopeFrames` frames, the highest |x| and the mean square.
public struct SignalStatistics: Sendable, Equatable {
    public static let noiseBlockSeconds = 0.05
    public static let noisePercentile = 0.10
    static let histogramFloor = -160.0
    static let histogramBinDB = 0.5
    static let histogramBins = 360  // −160 … +20 dB

    public let sampleRate: Int
    public private(set) var frames: UInt64 = 0
    public private(set) var samplePeak: Double = 0
    public private(set) var sumSquares: Double = 0
    public private(set) var sum: Double = 0
    public private(set) var clipCount: UInt64 = 0
    public private(set) var clipSamples: UInt64 = 0
    public private(set) var nonFiniteCount: UInt64 = 0
    /// Where each clip starts (frame), the first `clipListLimit` of them.
    public private(set) var clipStarts: [UInt64] = []
    public static let clipListLimit = 10_000
    private var isInClip = false

    private let noiseBlockFrames: Int
    private var blockSquares: Double = 0
    private var blockFill = 0
    private var noiseHistogram: [UInt64]
    private var noiseBlocks: UInt64 = 0

    /// Frames per envelope point, or 0 for no envelope.
    public let envelopeFrames: Int
    public private(set) var envelopePeak: [Float] = []
    public private(set) var envelopeMeanSquare: [Float] = []
    private var pointPeak: Double = 0
    private var pointSquares: Double = 0
    private var pointFill = 0

    /// The magnitude that counts as full scale (a clip).
    public let fullScale: Double

    public init(sampleRate: Int, envelopeFrames: Int = 0, fullScale: Double = 1) {
        precondition(sampleRate > 0)
        self.sampleRate = sampleRate
        self.fullScale = fullScale
        noiseBlockFrames = max(1, Int(Double(sampleRate) * Self.noiseBlockSeconds))
        noiseHistogram = Array(repeating: 0, count: Self.histogramBins)
        self.envelopeFrames = envelopeFrames
    }

    /// Adds `count` samples of this channel, `stride` floats apart (1 for a mono buffer, the
    /// channel count for interleaved frames).
    public mutating func add(_ samples: UnsafePointer<Float>, count: Int, stride: Int = 1) {
        var done = 0
        var index = 0
        while done < count {
            // A run ends where a noise block or an envelope point closes; inside it the sums are
            // the same additions in the same order, held in locals.
            var run = min(count - done, noiseBlockFrames - blockFill)
            if envelopeFrames > 0 { run = min(run, envelopeFrames - pointFill) }
            var peak = samplePeak
            var squares = sumSquares
            var total = sum
            var block = blockSquares
            var inClip = isInClip
            var point = 0
            while point < run {
                var x = Double(samples[index])
                index += stride
                if !x.isFinite {
                    nonFiniteCount += 1
                    x = 0
                }
                let magnitude = abs(x)
                if magnitude > peak { peak = magnitude }
                if magnitude >= fullScale {
                    clipSamples += 1
                    if !inClip { noteClip(at: frames + UInt64(point)) }
                    inClip = true
                } else {
                    inClip = false
                }
                let square = x * x
                squares += square
                total += x
                block += square
                point += 1
            }
            if envelopeFrames > 0 { addToEnvelopePoint(samples + (index - run * stride), count: run, stride: stride) }
            samplePeak = peak
            sumSquares = squares
            sum = total
            blockSquares = block
            isInClip = inClip
            frames += UInt64(run)
            blockFill += run
            done += run
            if blockFill == noiseBlockFrames { closeNoiseBlock() }
            if envelopeFrames > 0 && pointFill == envelopeFrames { closeEnvelopePoint() }
        }
    }

    private mutating func noteClip(at frame: UInt64) {
        clipCount += 1
        if clipStarts.count < Self.clipListLimit { clipStarts.append(frame) }
    }

    /// The envelope point's peak and sum of squares over `count` samples of a run (non-finite as 0).
    private mutating func addToEnvelopePoint(_ samples: UnsafePointer<Float>, count: Int, stride: Int) {
        var peak = pointPeak
        var squares = pointSquares
        var index = 0
        for _ in 0 ..< count {
            var x = Double(samples[index])
            index += stride
            if !x.isFinite { x = 0 }
            if abs(x) > peak { peak = abs(x) }
            squares += x * x
        }
        pointPeak = peak
        pointSquares = squares
        pointFill += count
    }

    private mutating func closeNoiseBlock() {
        let level = Decibels.meanSquareToDBFS(blockSquares / Double(blockFill))
        let bin = Int((level - Self.histogramFloor) / Self.histogramBinDB)
        noiseHistogram[min(max(bin, 0), Self.histogramBins - 1)] += 1
        noiseBlocks += 1
        blockSquares = 0
        blockFill = 0
    }

    private mutating func closeEnvelopePoint() {
        envelopePeak.append(Float(pointPeak))
        envelopeMeanSquare.append(Float(pointSquares / Double(max(pointFill, 1))))
        pointPeak = 0
        pointSquares = 0
        pointFill = 0
    }

    /// Closes a partial envelope point at the end of the take (call once, after the last block).
    public mutating func finish() {
        if envelopeFrames > 0 && pointFill > 0 { closeEnvelopePoint() }
    }

    /// RMS over the whole take, linear.
    public var rms: Double { frames == 0 ? 0 : (sumSquares / Double(frames)).squareRoot() }
    /// The mean of the samples (DC offset), linear.
    public var dcOffset: Double { frames == 0 ? 0 : sum / Double(frames) }

    /// The noise-floor estimate in dBFS (RMS convention: a full-scale sine reads −3.01), or nil
    /// when the take holds no whole 50 ms block. Bins are read at their centre, so a steady
    /// signal reads within 0.25 dB of its RMS.
    public var noiseFloorDBFS: Double? {
        guard noiseBlocks > 0 else { return nil }
        let rank = max(1, UInt64((Double(noiseBlocks) * Self.noisePercentile).rounded(.up)))
        var seen: UInt64 = 0
        for (bin, count) in noiseHistogram.enumerated() {
            seen += count
            if seen >= rank {
                if bin == 0 { return Decibels.floor }
                return Self.histogramFloor + (Double(bin) + 0.5) * Self.histogramBinDB
            }
        }
        return nil
    }
}

extension SignalStatistics {
    /// Full scale of integer PCM of `bits` bits as libsndfile reads it into floats: the largest
    /// code over 2^(bits−1) (libsndfile divides by 2^(bits−1)); 1 for floats (`bits` 0 or ≥ 32).
    public static func fullScale(integerBits bits: Int) -> Double {
        guard bits > 0 && bits < 32 else { return 1 }
        let scale = Double(1 << (bits - 1))
        return (scale - 1) / scale
    }
}
