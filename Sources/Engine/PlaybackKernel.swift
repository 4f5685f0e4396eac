// The playback kernel: the reader's ring to the two outputs, with gains and meters, for one
// process cycle, and its own counters. Compiler-checked (`@_noLocks @_noAllocation`); its JACK
// glue is PlaybackCallbacks.swift. Realtime thread only, once the client is active.

import DSP
import Realtime
import Synchronization

/// What the playback kernel tells the other threads, beyond what every session shares
/// (`SessionState`). The realtime, reader and main threads, as each field says.
public struct PlaybackCounters: ~Copyable {
    /// Frames sent to the outputs (silence for underruns and pauses not counted).
    public let framesPlayed = Atomic<UInt64>(0)
    /// Frames the ring could not supply while the reader was still going (played as silence).
    public let framesStarved = Atomic<UInt64>(0)
    /// Total frames the reader will deliver, set once it has read the last loop; `.max` before.
    public let framesTotal = Atomic<UInt64>(.max)
    /// Set by the realtime thread once every frame of the take has been played.
    public let isFinished = Atomic<Bool>(false)
    /// Set by the main thread to hold playback (route loss): the callback plays silence and
    /// keeps its place.
    public let isPaused = Atomic<Bool>(false)
    /// NaN and ±∞ samples (after the gains) sent to the outputs as 0: nothing non-finite ever
    /// reaches JACK.
    public let nonFiniteReplaced = Atomic<UInt64>(0)
    /// Set by the main thread once the outputs are connected: playback starts on the cycle after
    /// the one that first sees it, so no frame is played into a port not yet connected.
    public let isArmed = Atomic<Bool>(false)
    /// The timeline rule on the outputs (docs/timeline.md): frames of the server's clock that
    /// micmon's output did not reach in time (it was late or stopped), in `missedGaps` at their
    /// playback positions. Realtime thread.
    public let missedGapCount = Atomic<UInt64>(0)
    public let framesMissed = Atomic<UInt64>(0)
    /// PipeWire only: cycles micmon ran late and was then called again for the same position,
    /// whose output the graph reads instead (each one is in `framesMissed`), and cycles it entered
    /// a period or more after they began (each one is in `framesUncertain`). Realtime thread.
    public let lateCycles = Atomic<UInt64>(0)
    /// PipeWire only: periods of cycles micmon entered a period or more after they began, with
    /// the counter showing +N. Their output reached the outputs if the whole graph ran late with
    /// it (a late driver), and never did if the graph ran its readers without it (micmon alone
    /// late); nothing a client sees tells the two apart (docs/platforms.md). And the frames of a
    /// counter excess that no repeat of the position followed: the readers, all downstream of
    /// micmon, run only after it, so mostly they got the file whole while the clock ran past it
    /// (micmon woken late, or a late driver catching up). In `uncertainGaps` at their playback
    /// positions; non-zero means exit 75, never 0. Realtime thread.
    public let uncertainGapCount = Atomic<UInt64>(0)
    public let framesUncertain = Atomic<UInt64>(0)
    /// Late reads of the frame counter that netted out (+2N then +0, jackd2): nothing missed.
    public let timelineJitter = Atomic<UInt64>(0)
    public init() {}
}

/// The playback callback's state: plain values and pointers into memory prepared before
/// activation. Realtime thread only, once active.
struct PlaybackKernel {
    /// The session core's part (first: the glue reads its clock fields first thing).
    let link: SessionLink
    /// The two output ports (libjack handles); read only by the C glue.
    let ports: UnsafeMutablePointer<OpaquePointer>
    /// This cycle's two output buffers, set by the glue.
    let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Interleaved stereo frames from the reader thread.
    let frames: SPSCRing<Float>.Consumer
    let gains: PanLaw
    let meters: UnsafeMutablePointer<ChannelMeter>
    let meterCoefficients: MeterCoefficients
    let meterMailbox: LatestValueMailbox<ChannelMeter>.Writer
    let counters: UnsafeMutablePointer<PlaybackCounters>
    /// Where the outputs' timeline losses go, for the summary: `startFrame` is the playback
    /// position (frames played) from which the file reached the outputs late.
    var missedGaps: SPSCRing<DropEvent>.Producer? = nil
    /// Where the periods of late entries go (`PlaybackCounters.framesUncertain`), the same way.
    var uncertainGaps: SPSCRing<DropEvent>.Producer? = nil
    /// PipeWire's libjack: after a cycle that ran late (+2N), the graph reads the output of the
    /// cycle that repeats its position (+0), so the late cycle's period never reaches the outputs
    /// (measured with witnesses downstream: docs/platforms.md). A repeat is then a loss. A cycle
    /// micmon enters a period or more after it began while the counter has not moved on is an
    /// uncertain loss: lost when the graph ran that cycle's readers without micmon's output, whole
    /// when the driver itself was that late and the graph with it.
    var lateRepeatIsRead = false
    /// Cycles entered a period or more after their start (PipeWire only, see above).
    var lateEntries: UInt64 = 0
    var framesPlayed: UInt64 = 0
    /// The timeline rule over the server's frame counter (docs/timeline.md). Realtime thread only.
    /// (Made for 48 kHz; the session sets its rate.)
    var timeline = TimelineJudge(sampleRate: 48000)
    /// The playback position where the excess the judge holds appeared (nil when none).
    var excessStart: UInt64?
    /// The last gap logged, reused as the next one's storage (DropEvent's initializer lives in
    /// another file, which a debug build's per-file check of `note` cannot see into).
    var lastMissedGap = DropEvent(startFrame: 0, frameCount: 0)
    /// Non-finite samples replaced by 0 so far (see `PlaybackCounters.nonFiniteReplaced`).
    var nonFiniteReplaced: UInt64 = 0
    /// Whether playback has begun (see `PlaybackCounters.isArmed`). Realtime thread only.
    var isPlaying = false

    /// Fills both outputs for one cycle. `cycleStartFrame` is the server's frame counter (when
    /// `knowsCycleFrame`), `cycleMicroseconds` when the cycle ran and `driverStamp` the driver's
    /// lateness stamp, for `TimelineJudge`. Realtime thread.
    @_noLocks @_noAllocation
    mutating func process(
        frameCount: Int, cycleStartFrame: UInt32 = 0, knowsCycleFrame: Bool = false, cycleMicroseconds: UInt64 = 0,
        driverStamp: Float = 0, cycleStartMicroseconds: UInt64 = 0, periodMicroseconds: UInt64 = 0
    ) {
        var written = 0
        if link.beginCycle(frameCount: frameCount) {
            // Asked to stop: silence, keeping the place.
        } else if link.state.pointee.sampleRateChanged.load(ordering: .acquiring) {
            // The conversion ratio was made for the old rate: from the first cycle after a rate
            // change nothing more is played (the session then ends it).
        } else if !isPlaying {
            // The cycle that first sees the flag may have started before the connections were
            // made: play from the next one.
            if counters.pointee.isArmed.load(ordering: .relaxed) { isPlaying = true }
        } else {
            if knowsCycleFrame {
                judge(
                    frameCount: frameCount, counter: cycleStartFrame, microseconds: cycleMicroseconds,
                    driverStamp: driverStamp, cycleStartMicroseconds: cycleStartMicroseconds)
                if lateRepeatIsRead
                    && entersAPeriodLate(
                        entered: cycleMicroseconds, cycleStart: cycleStartMicroseconds, period: periodMicroseconds)
                {
                    noteLateEntry(frameCount: frameCount)
                }
            }
            if !counters.pointee.isPaused.load(ordering: .relaxed) { written = play(frameCount: frameCount) }
        }
        let left = outputs[0]
        let right = outputs[1]
        var i = written
        while i < frameCount {
            // SAFETY: both outputs hold frameCount samples this cycle.
            left[i] = 0
            right[i] = 0
            i += 1
        }
        // SAFETY: two meters, two mailbox slots.
        meters[0].process(left, count: frameCount, coefficients: meterCoefficients)
        meters[1].process(right, count: frameCount, coefficients: meterCoefficients)
        let readings = meterMailbox.writeBuffer()
        readings[0] = meters[0]
        readings[1] = meters[1]
        meterMailbox.publish()
    }

    /// Plays what the ring holds, up to `frameCount` frames, to both outputs and counts it.
    /// Returns the frames written. Realtime thread.
    @_noLocks @_noAllocation
    private mutating func play(frameCount: Int) -> Int {
        var written = 0
        let available = frames.availableToRead() / 2
        let count = available < frameCount ? available : frameCount
        if count > 0, let slices = frames.readableSlices(count: count * 2) {
            var replaced: UInt64 = 0
            written = deinterleave(slices.first, into: outputs[0], outputs[1], at: 0, replaced: &replaced)
            written += deinterleave(slices.second, into: outputs[0], outputs[1], at: written, replaced: &replaced)
            frames.commitRead(count: count * 2)
            if replaced > 0 {
                nonFiniteReplaced &+= replaced
                counters.pointee.nonFiniteReplaced.store(nonFiniteReplaced, ordering: .relaxed)
            }
        }
        framesPlayed &+= UInt64(written)
        counters.pointee.framesPlayed.store(framesPlayed, ordering: .relaxed)
        let total = counters.pointee.framesTotal.load(ordering: .acquiring)
        if framesPlayed >= total {
            counters.pointee.isFinished.store(true, ordering: .releasing)
        } else if written < frameCount {
            counters.pointee.framesStarved.add(UInt64(frameCount - written), ordering: .relaxed)
        }
        return written
    }

    /// Steps the timeline rule for this cycle and logs what it settled: a loss (the server ran
    /// periods while micmon gave the outputs nothing) at the playback position where its excess
    /// appeared. On PipeWire (`lateRepeatIsRead`) a cycle that repeats the last position after a
    /// late one is a loss at once: the graph reads the repeat's output for that position, so
    /// the late cycle's period never reached the outputs. Realtime thread.
    @_noLocks @_noAllocation
    private mutating func judge(
        frameCount: Int, counter: UInt32, microseconds: UInt64, driverStamp: Float, cycleStartMicroseconds: UInt64
    ) {
        let frames = UInt32(truncatingIfNeeded: frameCount)
        // Across a period change the account starts afresh (docs/timeline.md).
        if timeline.hasLastCycle && frames != timeline.lastFrames { note(timeline.restart()) }
        let verdict = timeline.step(
            counter: counter, frames: frames, microseconds: microseconds, driverStamp: driverStamp,
            deliveredNothing: lateRepeatIsRead, cycleStartMicroseconds: cycleStartMicroseconds)
        note(verdict)
        if verdict.discardsCycle {
            counters.pointee.lateCycles.store(timeline.repeatedPositions &+ lateEntries, ordering: .relaxed)
        }
        // The excess appeared in this cycle: its loss belongs before what this cycle plays.
        if timeline.isHolding && excessStart == nil { excessStart = framesPlayed }
    }

    /// A cycle entered a period or more after it began (PipeWire): this cycle's period of the
    /// file may not have reached the outputs, at the playback position. Realtime thread.
    @_noLocks @_noAllocation
    private mutating func noteLateEntry(frameCount: Int) {
        lateEntries &+= 1
        counters.pointee.lateCycles.store(timeline.repeatedPositions &+ lateEntries, ordering: .relaxed)
        noteUncertain(UInt64(frameCount), at: framesPlayed)
    }

    /// Counts and logs `frames` of the server's clock that may not have reached the outputs, at
    /// playback position `position` (`PlaybackCounters.framesUncertain`). Realtime thread.
    @_noLocks @_noAllocation
    private mutating func noteUncertain(_ frames: UInt64, at position: UInt64) {
        counters.pointee.uncertainGapCount.add(1, ordering: .relaxed)
        counters.pointee.framesUncertain.add(frames, ordering: .relaxed)
        lastMissedGap.startFrame = position
        lastMissedGap.frameCount = frames
        _ = uncertainGaps?.pushOne(lastMissedGap)
    }

    /// Logs and counts what the judge settled. Realtime thread.
    @_noLocks @_noAllocation
    private mutating func note(_ verdict: TimelineJudge.Verdict) {
        if verdict.jitterFrames > 0 {
            counters.pointee.timelineJitter.store(timeline.jitterEvents, ordering: .relaxed)
        }
        // The outputs lost the periods either way: a graph-wide gap is silence there too.
        let missed = verdict.missedFrames &+ verdict.graphFrames
        if missed > 0 && lateRepeatIsRead && !verdict.discardsCycle {
            // PipeWire, an excess no repeat followed: every reader of the outputs runs only after
            // micmon, so mostly the file reached them whole while the clock ran past it (micmon
            // woken late, or a late driver catching up); a reader woken between two of micmon's
            // cycles loses a period. Nothing here tells which (docs/timeline.md, "play: an
            // excess that no repeat follows").
            noteUncertain(missed, at: excessStart ?? framesPlayed)
        } else if missed > 0 {
            counters.pointee.missedGapCount.add(1, ordering: .relaxed)
            counters.pointee.framesMissed.add(missed, ordering: .relaxed)
            lastMissedGap.startFrame = excessStart ?? framesPlayed
            lastMissedGap.frameCount = missed
            // A full log loses the entry, never the counts.
            _ = missedGaps?.pushOne(lastMissedGap)
        }
        if verdict.releasesHold || verdict.counterReset { excessStart = nil }
    }

    /// Copies interleaved stereo frames to the two outputs from frame `start`, applying the
    /// gains; a product that is not finite (NaN, ±∞, an overflow) goes out as 0 and is counted
    /// in `replaced`. Returns the frames copied. Realtime thread.
    @_noLocks @_noAllocation
    private func deinterleave(
        _ source: UnsafeBufferPointer<Float>, into left: UnsafeMutablePointer<Float>,
        _ right: UnsafeMutablePointer<Float>, at start: Int, replaced: inout UInt64
    ) -> Int {
        let count = source.count / 2
        guard count > 0, let base = source.baseAddress else { return 0 }
        let gainLeft = gains.left
        let gainRight = gains.right
        var bad: UInt64 = 0
        var frame = 0
        while frame < count {
            // SAFETY: frame < count = source.count / 2, and start + count ≤ this cycle's frames.
            let l = base[2 * frame] * gainLeft
            let r = base[2 * frame + 1] * gainRight
            let isLeftFinite = l.isFinite
            let isRightFinite = r.isFinite
            left[start + frame] = isLeftFinite ? l : 0
            right[start + frame] = isRightFinite ? r : 0
            bad &+= (isLeftFinite ? 0 : 1) &+ (isRightFinite ? 0 : 1)
            frame += 1
        }
        replaced &+= bad
        return count
    }
}
