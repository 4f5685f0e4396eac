// The wall-clock time of the take's frames, for naming files and placing `--split-on-clock`
// boundaries. One function over one stored time, so that it can be rewired onto the take's
// clock (the wall-clock time of its first sample) where that is kept. Writer thread (made on
// the main thread).

import Platform

/// The wall-clock time of take frame 0 and the sample rate: every other frame's time follows
/// from them (the take's timeline runs on the server's sample clock).
struct SplitClock: Sendable {
    /// Seconds since the epoch at take frame 0: read by the main thread just before arming (the
    /// first frame is taken at the next cycle, so it is late by at most a period and the graph's
    /// latency).
    var firstFrameWallClock: Double
    var sampleRate: Int

    /// The wall-clock time of `takeFrame`: of the middle of the frame, so that a frame placed on
    /// a whole second by `nextBoundary` (rounded to the nearest frame) is named by that second.
    func wallClock(ofTakeFrame takeFrame: UInt64) -> Double {
        firstFrameWallClock + (Double(takeFrame) + 0.5) / Double(sampleRate)
    }

    /// The first take frame after `takeFrame` whose wall-clock time is a whole multiple of
    /// `seconds` in local time (`--split 1h --split-on-clock`: the top of each hour).
    func nextBoundary(after takeFrame: UInt64, every seconds: Double) -> UInt64 {
        let time = wallClock(ofTakeFrame: takeFrame)
        let offset = CalendarTime.localOffset(at: time)
        var boundary = ((time + offset) / seconds).rounded(.down) * seconds + seconds - offset
        while true {
            let frame = ((boundary - firstFrameWallClock) * Double(sampleRate)).rounded()
            if frame > Double(takeFrame) { return UInt64(frame) }
            boundary += seconds
        }
    }
}
