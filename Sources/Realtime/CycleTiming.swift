// One processing cycle's timing, and its realtime-safe recorder. Any audio driver's cycle: the
// clock is whatever microsecond clock the caller reads. The recorder runs on the realtime
// thread (a ring's producer); the timings are folded on another thread.

/// One processing cycle as its caller saw it, in microseconds of the caller's clock. A kernel
/// queues one per cycle through `CycleTimingRecorder`; the statistics fold them on a normal
/// thread. It lives here, below the kernels' module, so that their compiler-checked code can
/// call it in every build (debug builds check `@_noLocks` file by file, and only see other
/// files' code through a lower module's inlinable bodies).
@frozen public struct CycleTiming: BitwiseCopyable, Sendable {
    /// When the cycle started, as the audio server reports it (0: it cannot tell).
    public var cycleStartUsecs: UInt64
    /// How late the cycle's code began, after the cycle start.
    public var latenessUsecs: Float
    /// How long the cycle's code ran.
    public var executionUsecs: Float
    /// The cycle's length, in frames and in microseconds.
    public var periodFrames: UInt32
    public var periodUsecs: Float

    @inlinable
    public init(
        cycleStartUsecs: UInt64, latenessUsecs: Float, executionUsecs: Float, periodFrames: UInt32, periodUsecs: Float
    ) {
        self.cycleStartUsecs = cycleStartUsecs
        self.latenessUsecs = latenessUsecs
        self.executionUsecs = executionUsecs
        self.periodFrames = periodFrames
        self.periodUsecs = periodUsecs
    }
}

/// The realtime end of the cycle statistics, shared by every kernel: turns the clock readings at
/// a cycle's entry and exit into a `CycleTiming` and queues it. Realtime thread (the ring's
/// producer).
@frozen public struct CycleTimingRecorder {
    public let timings: SPSCRing<CycleTiming>.Producer

    @inlinable
    public init(timings: SPSCRing<CycleTiming>.Producer) {
        self.timings = timings
    }

    /// Queues one cycle's timing; returns false (and queues nothing) when the ring is full, so
    /// the caller can count the miss. Lateness is 0 when the server cannot tell the cycle start
    /// (`cycleStart` 0). Inlinable, and checked `@_noLocks @_noAllocation` in the kernels that
    /// call it (like the ring's own methods, see Tests/RealtimeTests/NoLocksCallers.swift).
    @inlinable
    public func record(cycleStart: UInt64, periodUsecs: Float, entered: UInt64, left: UInt64, frames: UInt32) -> Bool {
        // The differences are small and positive: converted as signed, which is one instruction.
        let lateness = cycleStart > 0 && entered > cycleStart ? Float(Int64(bitPattern: entered &- cycleStart)) : 0
        let execution = left > entered ? Float(Int64(bitPattern: left &- entered)) : 0
        return timings.pushOne(
            CycleTiming(
                cycleStartUsecs: cycleStart, latenessUsecs: lateness, executionUsecs: execution,
                periodFrames: frames, periodUsecs: periodUsecs))
    }
}
