// What the latency kernel tells the main thread, beyond what every session shares
// (`SessionState`). Atomics in memory the session owns: the realtime thread writes (the main
// thread arms), the main thread reads.

import Synchronization

/// The latency kernel's own counters.
struct LatencyCounters: ~Copyable {
    /// Set by the main thread once the loop is connected: the measurement starts a cycle later.
    let isArmed = Atomic<Bool>(false)
    /// Set by the main thread once out_1 and in_1 are both connected (at once for a software loop
    /// or --send with --return): the signal starts a cycle later, so frame 0 of the return is the
    /// first emitted frame and the returned onset is the round trip itself.
    let emissionArmed = Atomic<Bool>(false)
    /// Frames since the measurement started. Released after each cycle's ring commits.
    let framesRun = Atomic<UInt64>(0)
    /// When the first emitting cycle started (JACK µs); 0 until then.
    let firstCycleUsecs = Atomic<UInt64>(0)
    /// Returned frames the ring could not take (skipped by the estimator).
    let returnFramesLost = Atomic<UInt64>(0)

    init() {}
}
