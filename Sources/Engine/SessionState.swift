// What every session shares between its threads, whatever its kernel: the stop handshake, the
// cycle and timing counters, and what JACK's notifications report. Memory owned by `JackSession`
// (allocated before activation, freed after the client is closed). The realtime thread, JACK's
// notification thread and the main thread touch it, each field saying who writes it.

import Realtime
import Synchronization

/// The session state the notification callbacks write and every kernel shares: atomics and the
/// producers of the notification rings. The notification callbacks get a pointer to this as
/// their context, never the kernel (rust-jack's split of `NotificationHandler` and
/// `ProcessHandler`).
struct SessionState: ~Copyable {
    /// Set by the main thread to end the session: the kernel stops on its next cycle.
    let stopRequested = Atomic<Bool>(false)
    /// Set by the realtime thread on the first cycle that saw `stopRequested`: nothing more will
    /// be queued after it.
    let hasStopped = Atomic<Bool>(false)
    /// Process cycles run (all of them, before a take or measurement started too). Written only
    /// by the realtime thread.
    let cycles = Atomic<UInt64>(0)
    /// Cycle timings the statistics missed because their ring was full.
    let timingsMissed = Atomic<UInt64>(0)
    /// The last period size, in frames (set by the buffer-size callback and by each cycle).
    let periodFrames = Atomic<UInt32>(0)
    /// Xrun events: notifications within four periods of each other are one event (jackd2 calls
    /// once per late client per cycle; `XrunCoalescer`). The raw callbacks are counted apart, and
    /// so are events whose time did not fit the xrun-time ring. JACK's notification thread.
    let xruns = Atomic<UInt64>(0)
    let xrunCallbacks = Atomic<UInt64>(0)
    let xrunTimesMissed = Atomic<UInt64>(0)
    /// Groups the notifications into events. JACK's notification thread only.
    var xrunCoalescer = XrunCoalescer()
    /// Set when the server shut down or kicked the client out (any thread, even the realtime one).
    let serverIsGone = Atomic<Bool>(false)
    /// Set when the sample rate changed under a running session (notification thread).
    let sampleRateChanged = Atomic<Bool>(false)
    /// The rate it changed to (stored before `sampleRateChanged` is raised; notification thread).
    let changedSampleRate = Atomic<UInt32>(0)

    /// The rate the session was prepared for; another one raises `sampleRateChanged`.
    let sampleRate: UInt32
    /// When each xrun event began (JACK µs). Written by the notification thread only.
    let xrunTimes: SPSCRing<UInt64>.Producer
    /// When a port or connection changed somewhere in the graph (JACK µs), for `RouteWatch`.
    /// Written by the notification thread only; a full ring drops the note.
    let routeChanges: SPSCRing<UInt64>.Producer

    init(sampleRate: UInt32, xrunTimes: SPSCRing<UInt64>.Producer, routeChanges: SPSCRing<UInt64>.Producer) {
        self.sampleRate = sampleRate
        self.xrunTimes = xrunTimes
        self.routeChanges = routeChanges
    }
}
