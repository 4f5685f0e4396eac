// The realtime part every kernel shares with the session core: the stop handshake, the cycle
// count and the cycle timing. Compiler-checked (`@_noLocks @_noAllocation`); the clock reads that
// call C are in SessionCallbacks.swift. Realtime thread, once the client is active (or the
// offline driver's thread).

import Realtime

/// What the session core hands every kernel: its shared state, the timing ring, and what the
/// process glue needs to read the clock. A kernel keeps one as its first field (the glue reads
/// `readsSystemClock` and `client` first thing in a cycle). Plain values; valid while the
/// session's memory is.
struct SessionLink {
    /// Whether the glue reads JACK's clock straight from CLOCK_MONOTONIC_RAW
    /// (`JackClock.now(fromSystemClock:)`), which the session checked is the server's clock; else
    /// through `jack_get_time`.
    let readsSystemClock: Bool
    /// The client, for the glue's `jack_get_cycle_times`. Never read by the kernel itself, so the
    /// offline driver, which runs no glue, passes a stand-in.
    let client: OpaquePointer
    let state: UnsafeMutablePointer<SessionState>
    /// Per-cycle timing for the statistics on the main thread.
    let timings: SPSCRing<CycleTiming>.Producer
    /// Test-only (`MICMON_TEST_LATE_WAKE_UP_EVERY=N`, `MICMON_TEST_LATE_WAKE_UP_US`): every Nth
    /// cycle the glue waits that long before it reads the clock and the port buffers, as a thread
    /// woken and then preempted would (`enterCycle`). 0: never. Never set otherwise.
    var lateWakeUpEvery: UInt64 = 0
    var lateWakeUpMicroseconds: UInt64 = 0

    /// The start of every kernel's cycle: counts the cycle, notes its length, and answers the
    /// stop handshake. Returns true once the main thread asked the session to stop (and
    /// confirms it with `hasStopped`): the kernel then queues nothing more. Realtime thread.
    @_noLocks @_noAllocation
    func beginCycle(frameCount: Int) -> Bool {
        state.pointee.cycles.incrementBySoleWriter()
        state.pointee.periodFrames.store(UInt32(truncatingIfNeeded: frameCount), ordering: .relaxed)
        if state.pointee.stopRequested.load(ordering: .acquiring) {
            state.pointee.hasStopped.store(true, ordering: .releasing)
            return true
        }
        return false
    }

    /// The rate the client reads at a cycle's start: another than the session's is a rate change,
    /// raised here as the sample-rate callback raises it. PipeWire's libjack may run a cycle at
    /// the new rate before that callback (docs/platforms.md): the cycle that sees it takes
    /// nothing, so a take never holds a period of another rate. 0 (unknown) changes nothing.
    /// Realtime thread.
    @_noLocks @_noAllocation
    func noteSampleRate(_ rate: UInt32) {
        guard rate != 0, rate != state.pointee.sampleRate,
            !state.pointee.sampleRateChanged.load(ordering: .relaxed)
        else { return }
        state.pointee.changedSampleRate.store(rate, ordering: .relaxed)
        state.pointee.sampleRateChanged.store(true, ordering: .releasing)
    }

    /// Whether the glue waits before this cycle (the test-only late wake-up). Realtime thread,
    /// before the cycle's first libjack call.
    @_noLocks @_noAllocation
    func wakesUpLate() -> Bool {
        lateWakeUpEvery > 0 && state.pointee.cycles.load(ordering: .relaxed) % lateWakeUpEvery == lateWakeUpEvery - 1
    }

    /// Queues one cycle's timing (measured by the glue); counts it as missed when the ring is
    /// full. Realtime thread.
    @_noLocks @_noAllocation
    func recordTiming(cycleStart: UInt64, periodUsecs: Float, entered: UInt64, left: UInt64, frames: UInt32) {
        let recorder = CycleTimingRecorder(timings: timings)
        let queued = recorder.record(
            cycleStart: cycleStart, periodUsecs: periodUsecs, entered: entered, left: left,
            frames: frames)
        if !queued {
            state.pointee.timingsMissed.add(1, ordering: .relaxed)
        }
    }
}
