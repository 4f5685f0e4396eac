// The inter-channel correlation meter (phase correlation of two channels, −1…+1): per-sample
// recurrences of the averaged products, and the take-wide value. Pure math; the analysis thread
// runs it (never the realtime thread: it needs no realtime data, and costs the process callback
// nothing there). One thread at a time.

/// Correlation of two signals: r = ⟨xy⟩ / √(⟨x²⟩⟨y²⟩), each mean an exponential average with time
/// constant `timeConstant` (the running reading), and the same over the whole take (`overall`).
/// +1: the same signal (or one scaled); 0: unrelated; −1: one inverted (a swapped-polarity
/// cable). When either channel is silent the reading is 0 (nothing to compare).
public struct CorrelationMeter: Sendable, Equatable {
    /// The running reading's time constant: 300 ms, as the RMS meter's and x42's correlation meter.
    public static let defaultTimeConstant = 0.300

    public let timeConstant: Double
    private let retain: Double
    private var xy: Double = 0
    private var xx: Double = 0
    private var yy: Double = 0
    private var totalXY: Double = 0
    private var totalXX: Double = 0
    private var totalYY: Double = 0

    public init(sampleRate: Int, timeConstant: Double = defaultTimeConstant) {
        precondition(sampleRate > 0 && timeConstant > 0)
        self.timeConstant = timeConstant
        retain = DSPMath.exp(-1 / (timeConstant * Double(sampleRate)))
    }

    /// Adds `count` sample pairs, `stride` floats apart in each buffer (non-finite samples read 0).
    @_noLocks @_noAllocation
    public mutating func add(
        _ x: UnsafePointer<Float>, _ y: UnsafePointer<Float>, count: Int, stride: Int = 1
    ) {
        let gain = 1 - retain
        var sxy = xy
        var sxx = xx
        var syy = yy
        var i = 0
        var index = 0
        while i < count {
            // SAFETY: the caller passes buffers of count × stride floats.
            let a = Double(x[index]).isFinite ? Double(x[index]) : 0
            // SAFETY: as above.
            let b = Double(y[index]).isFinite ? Double(y[index]) : 0
            sxy = retain * sxy + gain * (a * b)
            sxx = retain * sxx + gain * (a * a)
            syy = retain * syy + gain * (b * b)
            totalXY += a * b
            totalXX += a * a
            totalYY += b * b
            index &+= stride
            i &+= 1
        }
        xy = sxy
        xx = sxx
        yy = syy
    }

    /// Adds to the take-wide totals only, the same sums as `add` makes; `value` stays as it was.
    /// For a whole file, whose reading of the last 300 ms no one shows.
    @_noLocks @_noAllocation
    public mutating func addTotals(_ x: UnsafePointer<Float>, _ y: UnsafePointer<Float>, count: Int, stride: Int = 1) {
        var sxy = totalXY
        var sxx = totalXX
        var syy = totalYY
        var i = 0
        var index = 0
        while i < count {
            // SAFETY: the caller passes buffers of count × stride floats.
            let a = Double(x[index]).isFinite ? Double(x[index]) : 0
            // SAFETY: as above.
            let b = Double(y[index]).isFinite ? Double(y[index]) : 0
            sxy += a * b
            sxx += a * a
            syy += b * b
            index &+= stride
            i &+= 1
        }
        totalXY = sxy
        totalXX = sxx
        totalYY = syy
    }

    static func ratio(_ xy: Double, _ xx: Double, _ yy: Double) -> Double {
        let power = xx * yy
        guard power > 1e-30 else { return 0 }
        return max(-1, min(1, xy / power.squareRoot()))
    }

    /// The running correlation (time constant `timeConstant`).
    public var value: Double { Self.ratio(xy, xx, yy) }
    /// The correlation over everything added so far.
    public var overall: Double { Self.ratio(totalXY, totalXX, totalYY) }
}
