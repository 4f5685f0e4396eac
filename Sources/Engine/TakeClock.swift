// When a take's samples were captured, by the wall clock: the first sample's time from the
// JACK cycle that took it, corrected by the capture latency of the sources, and any take
// frame's time, date and `bext` TimeReference from there. Plain values: any thread.

import Platform

/// The wall-clock time of a take's frames.
///
/// The realtime thread notes when the cycle that took the take's first frame started
/// (`CaptureCounters.firstCycleMicroseconds`, JACK's clock: `jack_get_cycle_times`). That
/// period's first sample reached the graph's edge `captureLatencyFrames` earlier (the largest
/// capture latency JACK reports for the source ports: for a driver's capture port, the period
/// it buffers plus the device's own). The JACK time is put on the wall clock by reading both
/// clocks together, off the realtime thread (`init(cycleStartMicroseconds:…)`).
///
/// A take frame F is `F / rate` seconds after frame 0, plus the frames of graph-wide server
/// gaps before F (cycles the server skipped for every client: the take's timeline does not hold
/// them, the clock ran on).
public struct TakeClock: Sendable, Equatable {
    public let sampleRate: Int
    /// The first sample's wall-clock time, nanoseconds since the Unix epoch.
    public let firstSampleNanoseconds: Int64
    /// The capture latency the time was corrected by, in frames.
    public let captureLatencyFrames: Int

    public init(sampleRate: Int, firstSampleNanoseconds: Int64, captureLatencyFrames: Int = 0) {
        self.sampleRate = sampleRate
        self.firstSampleNanoseconds = firstSampleNanoseconds
        self.captureLatencyFrames = captureLatencyFrames
    }

    /// From the first cycle's start on JACK's clock (µs), with JACK's clock and the wall clock
    /// read at one moment (`jackNowMicroseconds`, `wallNowNanoseconds`).
    public init(
        cycleStartMicroseconds: UInt64, jackNowMicroseconds: UInt64, wallNowNanoseconds: Int64, sampleRate: Int,
        captureLatencyFrames: Int
    ) {
        let sinceCycle = Int64(bitPattern: jackNowMicroseconds &- cycleStartMicroseconds) * 1000
        let latency = Int64(captureLatencyFrames) * 1_000_000_000 / Int64(max(sampleRate, 1))
        self.init(
            sampleRate: sampleRate, firstSampleNanoseconds: wallNowNanoseconds - sinceCycle - latency,
            captureLatencyFrames: captureLatencyFrames)
    }

    /// The wall-clock time of `takeFrame`, with `serverGapFrames` skipped by the server before it.
    public func nanoseconds(ofTakeFrame takeFrame: UInt64, serverGapFrames: UInt64 = 0) -> Int64 {
        let frames = takeFrame + serverGapFrames
        let rate = UInt64(max(sampleRate, 1))
        let whole = frames / rate
        let rest = frames % rate
        return firstSampleNanoseconds + Int64(whole) * 1_000_000_000 + Int64(rest * 1_000_000_000 / rate)
    }

    /// `takeFrame`'s time on the local calendar.
    public func localTime(ofTakeFrame takeFrame: UInt64, serverGapFrames: UInt64 = 0) -> LocalTime {
        WallClock.localTime(ofNanoseconds: nanoseconds(ofTakeFrame: takeFrame, serverGapFrames: serverGapFrames))
    }

    /// `takeFrame`'s `bext` TimeReference: samples since local midnight (by the clock face),
    /// rounded to the nearest sample.
    public func timeReference(ofTakeFrame takeFrame: UInt64, serverGapFrames: UInt64 = 0) -> UInt64 {
        Self.timeReference(
            of: localTime(ofTakeFrame: takeFrame, serverGapFrames: serverGapFrames), sampleRate: sampleRate)
    }

    /// Samples since midnight of a local time at `sampleRate`, rounded.
    public static func timeReference(of time: LocalTime, sampleRate: Int) -> UInt64 {
        let seconds = UInt64(time.hour * 3600 + time.minute * 60 + time.second)
        let rate = UInt64(sampleRate)
        return seconds * rate + (UInt64(time.nanosecond) * rate + 500_000_000) / 1_000_000_000
    }
}
