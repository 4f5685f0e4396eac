// The latency kernel: the measurement signal out, the return into a ring, the run's timeline,
// for one process cycle. Compiler-checked (`@_noLocks @_noAllocation`); its JACK glue is
// LatencyCallbacks.swift. Realtime thread only, once the client is active.

import Realtime

/// Everything the latency process callback touches, as plain values and unsafe pointers into
/// memory prepared before activation (`LatencySession` owns and frees it). Realtime thread only,
/// once the client is active.
///
/// Each cycle after the start it counts the frames (the run's timeline). Once the loop is closed
/// (`LatencyCounters.emissionArmed`), it copies the return (`in_1`) into a ring for the main
/// thread, whole periods or nothing, and then writes the next period of the measurement signal
/// to `out_1`. The order matters: on a software loop libjack may hand `in_1` the very buffer of
/// `out_1`, which still holds the previous cycle's output until it is overwritten here.
struct LatencyKernel {
    enum Stage {
        /// Before the main thread armed the measurement: silence out, nothing in.
        case waiting
        /// The first cycle that saw the arm flag may have started before the connections were
        /// made; the measurement starts with the next one.
        case armed
        /// Counting the timeline (`framesRun`); emitting and returning once the loop is closed.
        case running
        /// Asked to stop: silence out.
        case stopped
    }

    /// The session core's part (first: the glue reads its clock fields first thing).
    let link: SessionLink
    /// `out_1` and `in_1` (libjack handles); read only by the C glue.
    let outputPort: OpaquePointer
    let inputPort: OpaquePointer
    /// This cycle's buffers, fetched by the glue before `process`.
    var output: UnsafeMutablePointer<Float>
    var input: UnsafePointer<Float>
    /// One period of the measurement signal; `signalPeriod` is a power of two.
    let signal: UnsafePointer<Float>
    let signalPeriod: Int
    /// Whether a round trip is measured (else out_1 stays silent and nothing is queued).
    let measures: Bool
    /// The returned samples, for the estimator on the main thread.
    let returns: SPSCRing<Float>.Producer
    /// Periods the return ring could not take (the main thread fell behind): the estimator skips them.
    let gaps: SPSCRing<DropEvent>.Producer
    let counters: UnsafeMutablePointer<LatencyCounters>

    var stage = Stage.waiting
    /// Frames since the measurement started.
    var framesRun: UInt64 = 0
    /// A cycle saw `emissionArmed`; the signal starts with the next one (its connections may
    /// have been made while that cycle ran).
    var emissionArmSeen = false
    var isEmitting = false
    /// Frames since the first emitted sample: the timeline of both the signal and the return.
    var framesEmitted: UInt64 = 0
    /// Lost return frames not yet reported to the gap log (merged while periods keep failing).
    var pendingGap = DropEvent(startFrame: 0, frameCount: 0)
    /// PipeWire's libjack only: `in_1`'s own silent buffer, the one a cycle gets when no period
    /// reached the port (`JackPortBuffer.idleBuffer`); nil elsewhere.
    var idleInput: UnsafePointer<Float>? = nil
    /// Whether the last cycle's return had data (PipeWire only): a cycle with the idle buffer
    /// after it lost its period (see `queueReturn`).
    var lastReturnHadData = false
    var emptyReturnCycles = 0
    static let emptyReturnLimit = 16
    /// PipeWire's libjack: after a cycle that ran late (+2N), the graph reads the output of the
    /// cycle that repeats its position (+0), so the late cycle's period of the signal never
    /// reached the output (as for `play`, docs/platforms.md). Such a repeat is logged as a
    /// disturbance of the signal (a gap of no frames at the emission position) for the estimator
    /// to skip where it returns; so is any other step of the counter than the last period (an
    /// excess with no repeat after it: cycles the graph ran without micmon, whose output then
    /// held no period of the signal), and so is a cycle entered a period or more after its
    /// start while the counter stepped by the period: the graph had already read that cycle's
    /// output, so its period of the signal was lost there too.
    var lateRepeatIsRead = false
    /// The server's frame counter of the last cycle, once one was read, and that cycle's length.
    var lastCycleFrame: UInt32 = 0
    var lastCycleFrames: UInt32 = 0
    var knowsLastCycleFrame = false

    /// One process cycle. `cycleStartUsecs` is when the cycle began (JACK µs); `enteredUsecs`
    /// when the callback was entered and `periodUsecs` the period, zero where unknown.
    /// Realtime thread.
    @_noLocks @_noAllocation
    mutating func process(
        frameCount: Int, cycleStartUsecs: UInt64, cycleStartFrame: UInt32 = 0, knowsCycleFrame: Bool = false,
        enteredUsecs: UInt64 = 0, periodUsecs: UInt64 = 0
    ) {
        let counters = self.counters
        if link.beginCycle(frameCount: frameCount) { stage = .stopped }
        let emissionWasArmed = emissionArmSeen
        if measures && !emissionArmSeen && stage != .stopped {
            emissionArmSeen = counters.pointee.emissionArmed.load(ordering: .acquiring)
        }
        switch stage {
        case .waiting, .stopped:
            if stage == .waiting && counters.pointee.isArmed.load(ordering: .acquiring) { stage = .armed }
            silence(frameCount: frameCount)
            return
        case .armed:
            stage = .running
        case .running:
            break
        }
        if emissionWasArmed && !isEmitting {
            isEmitting = true
            counters.pointee.firstCycleUsecs.store(cycleStartUsecs, ordering: .relaxed)
        }
        if isEmitting {
            if lateRepeatIsRead && knowsCycleFrame {
                let stepIsOdd = knowsLastCycleFrame && cycleStartFrame &- lastCycleFrame != lastCycleFrames
                let enteredLate = entersAPeriodLate(
                    entered: enteredUsecs, cycleStart: cycleStartUsecs, period: periodUsecs)
                if stepIsOdd || enteredLate { noteDisturbance() }
            }
            queueReturn(frameCount: frameCount)
            emit(frameCount: frameCount)
            framesEmitted &+= UInt64(frameCount)
        } else {
            silence(frameCount: frameCount)
        }
        if knowsCycleFrame {
            lastCycleFrame = cycleStartFrame
            lastCycleFrames = UInt32(truncatingIfNeeded: frameCount)
            knowsLastCycleFrame = true
        }
        framesRun &+= UInt64(frameCount)
        // Releasing: the ring commits above happen-before a reader that sees this count.
        counters.pointee.framesRun.store(framesRun, ordering: .releasing)
    }

    /// Copies this cycle's return into the ring, after reporting any pending gap; a period that
    /// does not fit is counted (and later reported) as a gap instead. Realtime thread.
    @_noLocks @_noAllocation
    private mutating func queueReturn(frameCount: Int) {
        var queued = false
        // On PipeWire a cycle whose return is the port's idle buffer after one with data lost
        // that period (micmon's last cycle ran into the next one, or the period was taken by an
        // earlier call): its silence is no return of the signal, so it is a gap, which the
        // estimator skips, as a period the ring could not take.
        // (A return empty for longer than `emptyReturnLimit` cycles has no source: its silence
        // is what the loop returns.)
        let returnIsEmpty = idleInput != nil && input == idleInput
        let lostPeriod = returnIsEmpty && lastReturnHadData && emptyReturnCycles < Self.emptyReturnLimit
        if returnIsEmpty {
            emptyReturnCycles += 1
        } else if idleInput != nil {
            lastReturnHadData = true
            emptyReturnCycles = 0
        }
        if !lostPeriod, pendingGap.frameCount == 0 || gaps.availableToWrite() >= 1,
            let slices = returns.writableSlices(count: frameCount)
        {
            if pendingGap.frameCount > 0 {
                // SAFETY: one free slot was checked above; only this thread produces gap events.
                gaps.writableSlices(count: 1)!.first[0] = pendingGap
                gaps.commitWrite(count: 1)
                pendingGap.frameCount = 0
            }
            // SAFETY: the input buffer holds frameCount samples this cycle.
            slices.copy(from: UnsafeBufferPointer(start: input, count: frameCount))
            returns.commitWrite(count: frameCount)
            queued = true
        }
        if !queued {
            if pendingGap.frameCount == 0 { pendingGap.startFrame = framesEmitted }
            pendingGap.frameCount &+= UInt64(frameCount)
            counters.pointee.returnFramesLost.add(UInt64(frameCount), ordering: .relaxed)
        }
    }

    /// Logs a disturbance of the signal at this cycle's emission position: a gap of no frames
    /// (after any pending gap, which it cannot join). A full log loses it (the main thread drains
    /// the log every few tens of ms; it holds 256). Realtime thread.
    @_noLocks @_noAllocation
    private mutating func noteDisturbance() {
        guard gaps.availableToWrite() >= (pendingGap.frameCount > 0 ? 2 : 1) else { return }
        if pendingGap.frameCount > 0 {
            // A gap still pending lies before this position: it goes first, so the log stays in
            // timeline order.
            _ = gaps.pushOne(pendingGap)
            pendingGap.frameCount = 0
        }
        var disturbance = pendingGap
        disturbance.startFrame = framesEmitted
        disturbance.frameCount = 0
        _ = gaps.pushOne(disturbance)
    }

    /// Writes the next `frameCount` samples of the periodic measurement signal. Realtime thread.
    @_noLocks @_noAllocation
    private func emit(frameCount: Int) {
        let mask = signalPeriod - 1
        var position = Int(truncatingIfNeeded: framesEmitted) & mask
        var i = 0
        while i < frameCount {
            // SAFETY: position < signalPeriod; the output buffer holds frameCount samples.
            output[i] = signal[position]
            position = (position + 1) & mask
            i += 1
        }
    }

    @_noLocks @_noAllocation
    private func silence(frameCount: Int) {
        // SAFETY: the output buffer holds frameCount samples this cycle.
        output.update(repeating: 0, count: frameCount)
    }
}
