// What a capture kernel tells the other threads, beyond what every session shares
// (`SessionState`), and the drop events it logs. Atomics in memory the session owns: the
// realtime thread writes, the main and writer threads read.

import Synchronization

/// The capture kernel's own counters. The realtime thread writes (the main thread arms); the main
/// and writer threads read.
public struct CaptureCounters: ~Copyable {
    /// The take's timeline in frames: every frame taken, queued or dropped. Released after each
    /// period, so a reader that sees N also sees the ring and drop-log writes for those frames.
    public let framesTaken = Atomic<UInt64>(0)
    /// Set by the main thread once the sources are connected: the take starts at the next cycle,
    /// so it never begins with the silence of not-yet-connected inputs.
    public let isArmed = Atomic<Bool>(false)
    /// Frames that will be silence in the file: periods that did not fit the ring, and the
    /// frames the server's clock ran past micmon (`framesMissed`).
    public let framesDropped = Atomic<UInt64>(0)
    /// micmon's own timeline losses (`TimelineJudge`): the server's frame counter ran ahead of
    /// the frames micmon was given and did not give them back; how many gaps and frames. Part of
    /// `framesDropped` when recording (silence in their place).
    public let missedGaps = Atomic<UInt64>(0)
    public let framesMissed = Atomic<UInt64>(0)
    /// Graph-wide gaps (the driver itself reported being late, so every client lost those
    /// cycles), and the frames they span. Not drops: nothing is written in their place.
    public let serverGaps = Atomic<UInt64>(0)
    public let framesSkippedByServer = Atomic<UInt64>(0)
    /// Late reads of the frame counter that netted out (+2N then +0): nothing lost, never a gap.
    public let timelineJitter = Atomic<UInt64>(0)
    /// Cycles micmon was given late: the next period early, then the same position with no data
    /// (PipeWire) or the same samples (jackd2). Each settled a loss of micmon's own (counted in
    /// `missedGaps`).
    public let lateCycles = Atomic<UInt64>(0)
    /// PipeWire only: periods of digital silence on every input, from a buffer that carried data,
    /// between periods that were not silent (`CaptureKernel.noteSilentCycle`): what the graph gave
    /// micmon there, which another reader of the same port may have got as sound. How many runs
    /// and frames; each means exit 75.
    public let uncertainGaps = Atomic<UInt64>(0)
    public let framesUncertain = Atomic<UInt64>(0)
    /// NaN and ±∞ samples monitoring sent to its outputs as 0 (`CaptureKernel.monitorPass`).
    public let monitorNonFiniteReplaced = Atomic<UInt64>(0)
    /// Frames the analysis ring had no room for (the analysis thread fell behind): the loudness
    /// and statistics of the take miss them.
    public let analysisFramesMissed = Atomic<UInt64>(0)
    /// When the cycle that took the take's first frame started, in JACK microseconds
    /// (`jack_get_cycle_times`, else the callback's entry time); 0 until then. Stored before
    /// `framesTaken` is released, so a reader that sees frames taken sees it (`TakeClock`).
    public let firstCycleMicroseconds = Atomic<UInt64>(0)
    /// Set once the frames asked for with `--duration` have all been taken.
    public let isComplete = Atomic<Bool>(false)

    public init() {}
}

/// A period the ring could not take: where it starts on the take's timeline, and how long it is.
/// Consecutive dropped periods are merged into one event.
@frozen public struct DropEvent: BitwiseCopyable, Equatable, Sendable {
    public var startFrame: UInt64
    public var frameCount: UInt64
    @inlinable public init(startFrame: UInt64, frameCount: UInt64) {
        self.startFrame = startFrame
        self.frameCount = frameCount
    }
}
