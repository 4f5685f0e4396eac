/// One process cycle as the realtime glue saw it, in JACK microseconds. Every session's kernel
/// (capture, latency) queues one per cycle through `CycleTimingRecorder`; the statistics fold
/// them on a normal thread. It lives here, below `Engine`, so that the kernels' compiler-checked
/// code can call it in every build (debug builds check `@_noLocks` file by file, and only see
/// other files' code through a lower module's inlinable bodies).
@frozen public struct CycleTiming: BitwiseCopyable, Sendable {
    /// When the cycle started (`jack_get_cycle_times`).
    public var cycleStartUsecs: UInt64
    /// How late the callback woke, after the cycle start.
    public var latenessUsecs: Float
    /// How long the callback ran.
    public var executionUsecs: Float
    public var periodFrames: UInt32
    public var periodUsecs: Float

    @inlinable
    public init(cycleStartUsecs: UInt64, latenessUsecs: Float, executionUsecs: Float, periodFrames: UInt32, periodUsecs: Float) {
        self.cycleStartUsecs = cycleStartUsecs
        self.latenessUsecs = latenessUsecs
        self.executionUsecs = executionUsecs
        self.periodFrames = periodFrames
        self.periodUsecs = periodUsecs
    }
}

/// The realtime end of the callback statistics, shared by every session's kernel: turns the
/// glue's clock readings into a `CycleTiming` and queues it. Realtime thread (the ring's producer).
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
        return timings.pushOne(CycleTiming(cycleStartUsecs: cycleStart, latenessUsecs: lateness, executionUsecs: execution,
                                           periodFrames: frames, periodUsecs: periodUsecs))
    }
}
