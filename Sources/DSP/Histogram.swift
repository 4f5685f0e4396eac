/// A histogram of non-negative values (e.g. microseconds) in fixed-width bins, with exact count,
/// minimum, maximum and mean, and percentiles read from the bins. Values past the last bin are
/// counted in an overflow bin (their exact maximum is still kept). Not for the realtime thread:
/// the realtime side hands raw samples over a ring, and a normal thread folds them in here.
public struct Histogram: Sendable, Equatable {
    public let binWidth: Double
    /// Bins it may use: values at or past `binCount × binWidth` are counted in `overflow`.
    public let binCount: Int
    /// The bins from 0 up to (at least) the highest one used so far. They grow on demand, to
    /// the next power of two, so a histogram sized for rare large values costs memory (and a
    /// start-up clear) only when they come.
    public private(set) var bins: [UInt64] = []
    public private(set) var overflow: UInt64 = 0
    public private(set) var count: UInt64 = 0
    public private(set) var minimum: Double = .infinity
    public private(set) var maximum: Double = -.infinity
    public private(set) var sum: Double = 0

    /// `binCount` bins of `binWidth` each, covering 0 ..< binCount × binWidth.
    public init(binWidth: Double, binCount: Int) {
        precondition(binWidth > 0 && binCount > 0)
        self.binWidth = binWidth
        self.binCount = binCount
    }

    public var upperBound: Double { binWidth * Double(binCount) }
    public var mean: Double { count == 0 ? 0 : sum / Double(count) }

    public mutating func add(_ value: Double) {
        let value = max(0, value)
        count += 1
        sum += value
        minimum = min(minimum, value)
        maximum = max(maximum, value)
        // Compared before the conversion, which would trap on a value past Int's range.
        guard value < upperBound else {
            overflow += 1
            return
        }
        let index = min(Int(value / binWidth), binCount - 1)
        if index >= bins.count {
            // The next power of two past `index` (within binCount): the same data always gives
            // the same bins, whatever order it came in.
            var size = 64
            while size <= index { size *= 2 }
            bins += repeatElement(0, count: min(size, binCount) - bins.count)
        }
        bins[index] += 1
    }

    /// The value below which `fraction` (0…1) of the samples lie: the upper edge of the bin that
    /// holds the ⌈fraction × count⌉-th smallest sample, never above the exact maximum. The
    /// overflow bin answers with the maximum. Nil when empty.
    public func percentile(_ fraction: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = max(1, UInt64((fraction * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for (index, binCount) in bins.enumerated() {
            seen += binCount
            if seen >= rank { return min(Double(index + 1) * binWidth, maximum) }
        }
        return maximum
    }

    /// The bins merged into `columns` groups of equal width over 0 ..< `range`, for drawing.
    public func coarse(columns: Int, range: Double) -> [UInt64] {
        var groups = Array(repeating: UInt64(0), count: columns)
        for (index, binCount) in bins.enumerated() where binCount > 0 {
            let column = min(columns - 1, Int(Double(index) * binWidth / range * Double(columns)))
            groups[column] += binCount
        }
        groups[columns - 1] += overflow
        return groups
    }
}
