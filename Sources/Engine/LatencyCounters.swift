import Synchronization

/// What the latency kernel and JACK's notification thread tell the main thread, as atomics in
/// memory the session owns.
struct LatencyCounters: ~Copyable {
    /// Set by the main thread once the loop is connected: the measurement starts a cycle later.
    let isArmed = Atomic<Bool>(false)
    /// Set by the main thread once out_1 and in_1 are both connected (at once for a software loop
    /// or --send with --return): the signal starts a cycle later, so frame 0 of the return is the
    /// first emitted frame and the returned onset is the round trip itself.
    let emissionArmed = Atomic<Bool>(false)
    /// Set by the main thread to end the measurement; the realtime side goes silent.
    let stopRequested = Atomic<Bool>(false)
    /// Set by the realtime thread on the first cycle that saw `stopRequested`.
    let hasStopped = Atomic<Bool>(false)
    /// Process cycles run (all of them, before the measurement started too). Written only by the
    /// realtime thread.
    let cycles = Atomic<UInt64>(0)
    /// Frames since the measurement started. Released after each cycle's ring commits.
    let framesRun = Atomic<UInt64>(0)
    /// When the first emitting cycle started (JACK µs); 0 until then.
    let firstCycleUsecs = Atomic<UInt64>(0)
    /// Returned frames the ring could not take (skipped by the estimator).
    let returnFramesLost = Atomic<UInt64>(0)
    /// Cycle timings the statistics missed because their ring was full.
    let timingsMissed = Atomic<UInt64>(0)
    /// Xruns the server reported, and those whose time did not fit the xrun-time ring.
    let xruns = Atomic<UInt64>(0)
    let xrunTimesMissed = Atomic<UInt64>(0)
    /// The last period size, in frames.
    let periodFrames = Atomic<UInt32>(0)
    /// Set when the server shut down or kicked the client out.
    let serverIsGone = Atomic<Bool>(false)

    init() {}
}
