// The C callbacks every session registers, in one place (`JackSession.init` registers them):
// JACK's notifications, whose context is the session's `SessionState` (never the kernel), and
// the thread-init callback that gives every realtime thread flush-to-zero. Also the clock path
// every process glue shares (`SessionLink.enterCycle`/`leaveCycle`). Each callback is a named,
// nonisolated function: a closure literal in main.swift would be inferred @MainActor and trap on
// JACK's thread. The thread each runs on is in its comment.

import Jack
import Platform

/// What the glue read at the start of a cycle, for `leaveCycle`.
struct CycleStamp {
    /// When the callback was entered (JACK µs).
    let entered: UInt64
    /// When the cycle started and how long a period is (JACK µs), from `jack_get_cycle_times`;
    /// zero when the server cannot tell.
    let startUsecs: UInt64
    let periodUsecs: Float
    /// The server's frame counter at the cycle start.
    let startFrame: UInt32

    /// The period in whole µs, or zero when the server gave none that is plausible (over 10 s).
    var periodMicroseconds: UInt64 {
        periodUsecs > 0 && periodUsecs < 10_000_000 ? UInt64(periodUsecs) : 0
    }
}

/// Whether a callback entered at `entered` came a period or more after its cycle's start (all in
/// JACK µs; false when the start or the period is unknown, zero). On PipeWire the graph has then
/// read that cycle's outputs already (docs/timeline.md). Realtime thread.
@_noLocks @_noAllocation
func entersAPeriodLate(entered: UInt64, cycleStart: UInt64, period: UInt64) -> Bool {
    period > 0 && cycleStart > 0 && entered >= cycleStart &+ period
}

extension SessionLink {
    /// First thing in every process glue: the entry time, the start of realtime context (for
    /// RealtimeSanitizer), the rate this cycle runs at, and the cycle times. Realtime thread,
    /// inside the process callback.
    @inline(__always)
    func enterCycle() -> CycleStamp {
        if wakesUpLate() { MonotonicClock.pause(microseconds: lateWakeUpMicroseconds) }
        let entered = JackClock.now(fromSystemClock: readsSystemClock)
        RealtimeHooks.enter()
        noteSampleRate(JackClock.sampleRate(client))
        let cycle = JackClock.cycle(client)
        return CycleStamp(
            entered: entered, startUsecs: cycle.startUsecs, periodUsecs: cycle.periodUsecs,
            startFrame: cycle.startFrame)
    }

    /// Last thing in every process glue: the exit time, the cycle's timing queued, the end of
    /// realtime context. Realtime thread, inside the process callback.
    @inline(__always)
    func leaveCycle(_ stamp: CycleStamp, frameCount: UInt32) {
        let left = JackClock.now(fromSystemClock: readsSystemClock)
        recordTiming(
            cycleStart: stamp.startUsecs, periodUsecs: stamp.periodUsecs, entered: stamp.entered, left: left,
            frames: frameCount)
        RealtimeHooks.exit()
    }
}

/// The session state behind a notification's context pointer.
@inline(__always)
private func sessionState(_ context: UnsafeMutableRawPointer) -> UnsafeMutablePointer<SessionState> {
    // SAFETY: `JackSession` registers its initialized SessionState as the context and frees it
    // only after the client is closed.
    context.assumingMemoryBound(to: SessionState.self)
}

/// Xrun notification: counts the callback, and an event when it is the first within four periods
/// (`XrunCoalescer`), noting when the event began. JACK's notification thread (the only producer
/// of the xrun-time ring and the only user of the coalescer).
nonisolated func sessionXrun(_ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    let state = sessionState(context)
    state.pointee.xrunCallbacks.add(1, ordering: .relaxed)
    let now = JackClock.now()
    let rate = UInt64(state.pointee.sampleRate > 0 ? state.pointee.sampleRate : 48000)
    let period = UInt64(state.pointee.periodFrames.load(ordering: .relaxed)) * 1_000_000 / rate
    guard state.pointee.xrunCoalescer.note(atMicroseconds: now, periodMicroseconds: period) else { return 0 }
    state.pointee.xruns.add(1, ordering: .relaxed)
    if let slot = state.pointee.xrunTimes.writableSlices(count: 1) {
        slot.first[0] = now
        state.pointee.xrunTimes.commitWrite(count: 1)
    } else {
        state.pointee.xrunTimesMissed.add(1, ordering: .relaxed)
    }
    return 0
}

/// Period-size change: records the new size. No kernel keeps per-period buffers (they are sized
/// for the longest period, rings in seconds), so nothing is reallocated. JACK's notification
/// thread, never concurrent with a process cycle.
nonisolated func sessionBufferSize(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    sessionState(context).pointee.periodFrames.store(frameCount, ordering: .relaxed)
    return 0
}

/// Sample-rate change: a take cannot change rate, so the session is told to end (the rate it
/// was prepared for raises nothing). JACK's notification thread.
nonisolated func sessionSampleRate(_ rate: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    let state = sessionState(context)
    if state.pointee.sampleRate != rate {
        state.pointee.changedSampleRate.store(rate, ordering: .relaxed)
        state.pointee.sampleRateChanged.store(true, ordering: .releasing)
    }
    return 0
}

/// The server went away. May run on any thread, the realtime one included: only a flag.
nonisolated func sessionShutdown(
    _ status: UInt32, _ reason: UnsafePointer<CChar>?, _ context: UnsafeMutableRawPointer?
) {
    guard let context else { return }
    sessionState(context).pointee.serverIsGone.store(true, ordering: .releasing)
}

/// First thing on JACK's process thread, for every session: denormals flush to zero.
/// Realtime thread.
nonisolated func sessionThreadInit(_ context: UnsafeMutableRawPointer?) {
    ThreadEnvironment.enableFlushToZero()
}

/// A port appeared or went away somewhere in the graph: queue the time for the main thread's
/// `RouteWatch`. JACK's notification thread; never blocks (a full ring drops the note, and the
/// main thread looks once a second anyway).
nonisolated func sessionPortRegistration(_ port: UInt32, _ registered: Int32, _ context: UnsafeMutableRawPointer?) {
    noteRouteChange(context)
}

/// A connection was made or broken somewhere in the graph. JACK's notification thread.
nonisolated func sessionPortConnect(_ a: UInt32, _ b: UInt32, _ connected: Int32, _ context: UnsafeMutableRawPointer?) {
    noteRouteChange(context)
}

/// Queues "the graph changed, now" on the route-change ring. JACK's notification thread.
nonisolated func noteRouteChange(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let changes = sessionState(context).pointee.routeChanges
    if let slot = changes.writableSlices(count: 1) {
        slot.first[0] = JackClock.now()
        changes.commitWrite(count: 1)
    }
}
