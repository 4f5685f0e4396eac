import DSP
import Testing

@Suite("Histogram")
struct HistogramTests {
    @Test func percentilesOfOneToAThousand() {
        var histogram = Histogram(binWidth: 1, binCount: 2000)
        for value in 1 ... 1000 { histogram.add(Double(value) - 0.5) }  // one sample per bin
        #expect(histogram.count == 1000)
        #expect(histogram.percentile(0.5) == 500)
        #expect(histogram.percentile(0.9) == 900)
        #expect(histogram.percentile(0.99) == 990)
        #expect(histogram.percentile(0.999) == 999)
        #expect(histogram.percentile(1.0) == 999.5)  // capped at the exact maximum
        #expect(histogram.minimum == 0.5 && histogram.maximum == 999.5)
        #expect(histogram.mean == 500)
    }

    @Test func overflowAnswersWithTheMaximum() {
        var histogram = Histogram(binWidth: 10, binCount: 10)  // covers 0..<100
        for _ in 0 ..< 98 { histogram.add(5) }
        histogram.add(250)
        histogram.add(1234)
        #expect(histogram.overflow == 2)
        #expect(histogram.percentile(0.5) == 10)
        #expect(histogram.percentile(0.99) == 1234)
        #expect(histogram.maximum == 1234)
    }

    @Test func emptyHasNoPercentile() {
        #expect(Histogram(binWidth: 1, binCount: 4).percentile(0.5) == nil)
    }

    @Test func negativeValuesCountAsZero() {
        var histogram = Histogram(binWidth: 1, binCount: 4)
        histogram.add(-3)
        #expect(histogram.bins[0] == 1 && histogram.minimum == 0)
    }

    /// Bins come as values need them: a histogram sized for 100 ms of 1-µs bins holds 128 bins
    /// after values under 100 µs, the same data in any order makes equal histograms, and a
    /// value past the range (or past Int's) is overflow, not a trap.
    @Test func binsGrowOnDemand() {
        var small = Histogram(binWidth: 1, binCount: 100_000)
        #expect(small.bins.isEmpty && small.upperBound == 100_000)
        for value in [3.0, 99, 12] { small.add(value) }
        #expect(small.bins.count == 128)
        #expect(small.percentile(0.5) == 13 && small.percentile(1) == 99)
        var reversed = Histogram(binWidth: 1, binCount: 100_000)
        for value in [12.0, 99, 3] { reversed.add(value) }
        #expect(reversed == small)
        small.add(70_000.5)
        #expect(small.bins.count == 100_000 && small.bins[70_000] == 1)
        small.add(1e300)
        small.add(.infinity)
        #expect(small.overflow == 2 && small.maximum == .infinity)
    }

    @Test func coarseColumnsKeepEveryCount() {
        var histogram = Histogram(binWidth: 1, binCount: 100)
        for value in 0 ..< 100 { histogram.add(Double(value)) }
        histogram.add(500)
        let columns = histogram.coarse(columns: 10, range: 100)
        #expect(columns.count == 10)
        #expect(columns.reduce(0, +) == 101)
        #expect(columns[0] == 10 && columns[9] == 11)
    }
}
