// The main thread's side of the cycle timings every kernel queues (`SessionLink.recordTiming`):
// histograms of lateness and execution time, overruns, and their summary. Main thread.

import DSP
import Realtime

/// Percentiles of callback lateness and execution time, in µs, over a session.
public struct CallbackTimingSummary: Sendable, Equatable {
    public struct Percentiles: Sendable, Equatable {
        public var p50, p90, p99, p999, max, mean: Double
    }
    public var cycles: UInt64
    public var lateness: Percentiles
    public var execution: Percentiles
    /// The last period, in µs and frames.
    public var periodUsecs: Double
    public var periodFrames: Int
    /// Cycles the statistics missed because the timing ring was full (never in practice).
    public var cyclesMissed: UInt64
    /// micmon's own DSP load: mean execution time / period, in percent.
    public var dspLoadPercent: Double { periodUsecs > 0 ? execution.mean / periodUsecs * 100 : 0 }
}

/// Folds the realtime side's `CycleTiming`s into histograms. Owned by one non-realtime thread
/// (the main thread), which calls `drain()` regularly (the ring holds a few seconds of cycles).
public final class CallbackStatistics {
    private let timings: SPSCRing<CycleTiming>.Consumer
    public private(set) var lateness = Histogram(binWidth: 1, binCount: 100_000)
    public private(set) var execution = Histogram(binWidth: 1, binCount: 100_000)
    public private(set) var periodUsecs: Double = 0
    public private(set) var periodFrames = 0
    /// Start times (JACK µs) of the first `overrunListLimit` cycles whose callback ended past the
    /// period; `overrunCount` counts them all, so a long session's memory stays flat.
    public private(set) var overrunCycleStarts: [UInt64] = []
    public private(set) var overrunCount: UInt64 = 0
    public static let overrunListLimit = 1000

    init(timings: SPSCRing<CycleTiming>.Consumer) {
        self.timings = timings
    }

    /// Takes every timing the realtime side has queued. Main thread.
    public func drain() {
        let slices = timings.readableSlices()
        guard slices.count > 0 else { return }
        // One access to each stored property for the whole fold, not one per cycle (the class's
        // properties are checked for exclusive access on every access otherwise).
        Self.fold(
            slices.first, lateness: &lateness, execution: &execution,
            overrunCount: &overrunCount, overrunCycleStarts: &overrunCycleStarts)
        Self.fold(
            slices.second, lateness: &lateness, execution: &execution,
            overrunCount: &overrunCount, overrunCycleStarts: &overrunCycleStarts)
        let last = slices[slices.count - 1]
        periodUsecs = Double(last.periodUsecs)
        periodFrames = Int(last.periodFrames)
        timings.commitRead(count: slices.count)
    }

    private static func fold(
        _ segment: UnsafeBufferPointer<CycleTiming>, lateness: inout Histogram, execution: inout Histogram,
        overrunCount: inout UInt64, overrunCycleStarts: inout [UInt64]
    ) {
        for timing in segment {
            lateness.add(Double(timing.latenessUsecs))
            execution.add(Double(timing.executionUsecs))
            if timing.periodUsecs > 0 && timing.latenessUsecs + timing.executionUsecs > timing.periodUsecs {
                overrunCount += 1
                if overrunCycleStarts.count < overrunListLimit { overrunCycleStarts.append(timing.cycleStartUsecs) }
            }
        }
    }

    func summary(cyclesMissed: UInt64) -> CallbackTimingSummary {
        func percentiles(_ histogram: Histogram) -> CallbackTimingSummary.Percentiles {
            CallbackTimingSummary.Percentiles(
                p50: histogram.percentile(0.5) ?? 0, p90: histogram.percentile(0.9) ?? 0,
                p99: histogram.percentile(0.99) ?? 0, p999: histogram.percentile(0.999) ?? 0,
                max: histogram.count > 0 ? histogram.maximum : 0, mean: histogram.mean)
        }
        return CallbackTimingSummary(
            cycles: execution.count, lateness: percentiles(lateness), execution: percentiles(execution),
            periodUsecs: periodUsecs, periodFrames: periodFrames, cyclesMissed: cyclesMissed)
    }
}
