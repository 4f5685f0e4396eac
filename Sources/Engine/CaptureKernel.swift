// The capture kernel: meters, the noise suppressor, the capture ring and monitoring, for one
// process cycle. Compiler-checked (`@_noLocks @_noAllocation`); its JACK glue is
// CaptureCallbacks.swift, its offline glue OfflineDriver.swift. Realtime thread only, once the
// client is active (or the offline driver's thread).

import DSP
import Realtime

/// Everything the capture process callback touches, as plain values and unsafe pointers into
/// memory prepared before activation (`CaptureMemory` makes it, the session's `SessionMemory`
/// frees it). Realtime thread only, once the client is active.
struct CaptureKernel {
    /// The session core's part (first: the glue reads its clock fields first thing).
    let link: SessionLink
    let channelCount: Int
    /// The input ports (libjack handles), one per channel; read only by the C glue.
    let ports: UnsafeMutablePointer<OpaquePointer>
    /// This cycle's input buffers, one per channel, filled by the C glue before `process`.
    let inputs: UnsafeMutablePointer<UnsafePointer<Float>>
    /// One meter state per channel.
    let meters: UnsafeMutablePointer<ChannelMeter>
    let meterCoefficients: MeterCoefficients
    /// Latest meter states for the UI (one per channel).
    let meterMailbox: LatestValueMailbox<ChannelMeter>.Writer
    /// Interleaved frames for the writer thread, or nil when nothing is recorded.
    let samples: SPSCRing<Float>.Producer?
    /// Where dropped periods go, for the writer to fill with silence.
    let drops: SPSCRing<DropEvent>.Producer?
    /// The recorded channels, interleaved, for the analysis thread (loudness, statistics), or nil
    /// when nothing is analysed. A period that does not fit is counted, not waited for.
    var analysis: SPSCRing<Float>.Producer? = nil
    /// Where graph-wide gaps go (cycles every client lost: the driver itself was late), for the
    /// summary; nothing is written in their place (`TimelineJudge`).
    let serverGaps: SPSCRing<DropEvent>.Producer
    /// Where micmon's own timeline losses go (the server's clock ran past micmon), for the
    /// summary; each is also a drop, written as silence in its place (`TimelineJudge`).
    let missedGaps: SPSCRing<DropEvent>.Producer
    /// Where uncertain periods go (`noteSilentCycle`), for the summary.
    let uncertainGaps: SPSCRing<DropEvent>.Producer
    let counters: UnsafeMutablePointer<CaptureCounters>
    /// Frames to take in all (`--duration`), or `UInt64.max`.
    let frameLimit: UInt64
    /// Monitoring: the inputs (× gain) on output ports in the same cycle, or nil.
    let monitor: MonitorRoute?
    /// Meters to run: the inputs, plus the clean channel when denoising (`inputs[channelCount]`).
    let meterCount: Int
    /// What the file records: `recordedChannelCount` buffers from here (a window of `inputs`).
    let recordSources: UnsafeMutablePointer<UnsafePointer<Float>>
    let recordedChannelCount: Int
    /// Dual-mic noise suppression of inputs 0 (primary) and 1 (reference) into the clean buffer
    /// `inputs[channelCount]`, or nil. A pointer (into the session's `NoiseSuppressor`), not the
    /// suppressor's kernel inline: an optional struct that large is copied and tested every cycle,
    /// denoising or not; a pointer costs one compare.
    let suppressor: UnsafePointer<NoiseSuppressorKernel>?

    /// The longest period the clean buffer holds: jack2's own limit (BUFFER_SIZE_MAX; jackd
    /// caps `-p 16384` to 8192, checked), so no period is ever longer.
    static let maximumPeriod = 8192
    /// Test-only (`MICMON_TEST_PLANT_RT_ALLOCATION=1`): the glue allocates on every cycle, so a
    /// test can prove that the RealtimeSanitizer check catches a violation. Never set otherwise.
    var plantsAllocation = false
    /// Test-only (`MICMON_TEST_CYCLE_TRACE=PATH`): what the glue saw in each cycle, or nil.
    var trace: UnsafeMutablePointer<CycleTrace>? = nil
    /// PipeWire's libjack only: each input port's own silent buffer, what `jack_port_get_buffer`
    /// returns when the port holds no data this cycle (taken before activation,
    /// `JackPortBuffer.idleBuffer`), one per channel; nil on other platforms.
    var idleInputs: UnsafeMutablePointer<UnsafePointer<Float>>? = nil

    /// Whether the take has begun (see `CaptureCounters.isArmed`). Realtime thread only.
    var isTaking = false
    /// Frames taken so far (the timeline), private to the realtime thread.
    var framesTaken: UInt64 = 0
    /// The timeline rule over the server's frame counter (docs/timeline.md). Realtime thread only.
    /// (Made for 48 kHz; `CaptureMemory` sets the session's rate.)
    var timeline = TimelineJudge(sampleRate: 48000)
    /// While the judge holds an excess: where on the take's timeline it appeared, and the frames
    /// written into the ring since but not committed, so that a settled loss goes in before them.
    var holdStart: UInt64?
    var heldFrames = 0
    /// Off PipeWire, with the counter known (`process(…, defersCommit: true)`): this cycle's
    /// period, written into the ring but committed only by `finishCycle`, once the glue has read
    /// the counter again just before the inputs were copied. 0 when nothing waits.
    var stagedFrames = 0
    /// The input frames of the staged cycle (what its fingerprint covers).
    var stagedCycleFrames = 0
    /// Whether this cycle stages its period (see `stagedFrames`).
    var stagesCommit = false
    /// Late cycles (PipeWire's repeats with nothing) whose loss lies within the take.
    var lateCyclesInTake: UInt64 = 0
    /// PipeWire only: a run of cycles that got no data (every input the port's idle buffer) after
    /// a cycle that did: where it began on the take, its frames and cycles so far, and whether it
    /// is still counted (a run longer than `emptyRunLimit` is a source that stopped or left).
    var emptyRunStart: UInt64 = 0
    var emptyRunFrames: UInt64 = 0
    var emptyRunCycles = 0
    var emptyRunIsOpen = false
    /// Losses the timeline judge settled while an empty run was open (a late cycle inside it):
    /// counted at once, but logged with the run as one entry, since the run's silence and theirs
    /// are one stretch of the take. Where the first one went, and their frames.
    var emptyRunInsertedStart: UInt64 = 0
    var emptyRunInserted: UInt64 = 0
    /// Whether the last cycle had data on an input (PipeWire only).
    var lastCycleHadData = false
    /// PipeWire only: a run of cycles whose every input carried digital silence from a buffer
    /// with data, after a cycle that was not silent (`noteSilentCycle`): where it began on the
    /// take, its frames and cycles so far; and whether the last cycle carried sound.
    var silentRunStart: UInt64 = 0
    var silentRunFrames: UInt64 = 0
    var silentRunCycles = 0
    var silentRunIsOpen = false
    var lastCycleHadSound = false
    /// Cycles an empty run may last and still be a loss: a source that stops delivering for
    /// longer (it left, or was disconnected) is the route's business (`RouteWatch`), not a gap.
    static let emptyRunLimit = 16
    /// Cycles a run of digital silence may last and still be uncertain (`noteSilentCycle`): the
    /// graph's silent periods came one or two at a time; a source that goes silent for longer
    /// (a gate, a pause) is no fault.
    static let silentRunLimit = 4
    /// PipeWire only: input 0's buffer in the last steady cycle with data and the position it
    /// held, and the other buffer seen before it (nil when not known). The graph's nodes
    /// alternate two buffers by period, so a buffer's parity tells which period it holds.
    var lastBuffer: UnsafePointer<Float>? = nil
    var lastBufferPosition: UInt32 = 0
    var otherBuffer: UnsafePointer<Float>? = nil
    /// The held late cycle holds its own period (see `lastBuffer`): the period lost is the one
    /// after it, so the loss goes after what is held.
    var heldPeriodIsOwn = false
    /// Not PipeWire: while the judge holds an excess, a fingerprint of the last cycle's inputs
    /// (every sample's bits) and whether they varied within the period. A +0 after +2N whose
    /// inputs are the very same period is a repeat, not a give-back (`inputsFingerprint`).
    var heldInputsFingerprint: UInt64 = 0
    var heldInputsVary = false
    /// Not PipeWire: while an excess is held, one further excess a later cycle brought (its
    /// frames, and the frames held before that cycle's period), to be placed there rather than
    /// with the first when the whole is settled as micmon's loss (`apply`). A third cannot join
    /// the hold: the confirmation window settles it on the cycle that would bring it, whose excess
    /// starts a hold of its own. A give-back or a move of the counter within a cycle makes the
    /// places unknown (`laterExcessIsKnown` false): the whole then goes where the first appeared.
    var laterExcessFrames: UInt64 = 0
    var laterExcessOffset = 0
    var laterExcessIsKnown = true
    /// Not PipeWire: where the last held period starts among the held frames, and what was
    /// pending before the cycle that took it. A repeat of that period shows it to be the
    /// repeating cycle's: what became pending from that cycle on was lost just before it, not
    /// where the first excess appeared (`apply`). `pendingBeforeCycle` is this cycle's.
    var lastHeldOffset = 0
    var pendingBeforeLastHeld: UInt64 = 0
    var pendingBeforeCycle: UInt64 = 0
    /// Frames of this cycle in the clean buffer (0 when the suppressor did not run this cycle),
    /// so monitoring never replays an old period. Realtime thread only.
    var cleanFrameCount = 0
    /// Dropped frames not yet reported to the drop log (merged while periods keep dropping).
    var pendingDrop = DropEvent(startFrame: 0, frameCount: 0)

    /// One process cycle: judge the timeline, queue the period for the writer (whole or not at
    /// all), meter it, publish the readings and counters. `cycleStartFrame` is the server's frame
    /// counter (when `knowsCycleFrame`), `cycleMicroseconds` when the cycle ran and `driverStamp`
    /// the driver's lateness stamp, for `TimelineJudge`; `cycleStartMicroseconds` when the cycle
    /// began (noted once, for the take's first frame: `TakeClock`). Realtime thread.
    @_noLocks @_noAllocation
    mutating func process(
        frameCount: Int, cycleStartFrame: UInt32 = 0, knowsCycleFrame: Bool = false, cycleMicroseconds: UInt64 = 0,
        driverStamp: Float = 0, cycleStartMicroseconds: UInt64 = 0, defersCommit: Bool = false
    ) {
        let counters = self.counters
        cleanFrameCount = 0
        // A period staged by a cycle whose end was not seen (`finishCycle`) is committed as it was.
        if stagedFrames > 0, let samples {
            samples.commitWrite(count: stagedFrames &* recordedChannelCount)
            stagedFrames = 0
            counters.pointee.framesTaken.store(framesTaken, ordering: .releasing)
            if framesTaken == frameLimit { counters.pointee.isComplete.store(true, ordering: .releasing) }
        }
        stagesCommit = defersCommit && knowsCycleFrame && idleInputs == nil
        if isTaking && timeline.isHolding && link.state.pointee.sampleRateChanged.load(ordering: .acquiring) {
            releaseHoldAtRateChange()
        }
        // The last cycle settles what the judge still holds, before the stop is confirmed (the
        // writer finishes once it is): this cycle's counter first, then whatever is left.
        if isTaking && timeline.isHolding && link.state.pointee.stopRequested.load(ordering: .acquiring) {
            if knowsCycleFrame {
                apply(
                    timeline.step(
                        counter: cycleStartFrame, frames: UInt32(truncatingIfNeeded: frameCount),
                        microseconds: cycleMicroseconds, driverStamp: driverStamp))
            }
            apply(timeline.settleNow())
        }
        // A run still open at the stop is not counted; the losses inside it are logged.
        if emptyRunInserted > 0 && link.state.pointee.stopRequested.load(ordering: .acquiring) {
            endEmptyRunUncounted()
        }
        if link.beginCycle(frameCount: frameCount) { return }
        // A take never mixes rates: from the first cycle after a rate change nothing is taken,
        // so the take ends at the last frame of its own rate (the session then ends it).
        if link.state.pointee.sampleRateChanged.load(ordering: .acquiring) { return }
        // The cycle that first sees the flag may have started before the connections were made;
        // the take begins with the one after it.
        if !isTaking {
            if counters.pointee.isArmed.load(ordering: .relaxed) {
                isTaking = true
                // The sources are connected once the take is armed: a take that begins with empty
                // cycles (PipeWire brings a link up after `jack_connect` returns) lacks periods
                // the graph delivered, counted as any empty run is.
                lastCycleHadData = true
            }
            return
        }
        // Every input the port's idle buffer (PipeWire only), asked once a cycle.
        let inputsIdle = inputsAreIdle()
        if knowsCycleFrame {
            let frames = UInt32(truncatingIfNeeded: frameCount)
            // Across a period change the account starts afresh.
            if timeline.hasLastCycle && frames != timeline.lastFrames { apply(timeline.restart()) }
            // This cycle's own position, where the counter was steady so far.
            let ownPosition = timeline.lastCounter &+ timeline.lastFrames
            // Not PipeWire: while an excess is held, a cycle whose inputs are the held cycle's
            // very samples. The late cycle read ahead (its source had already run again) and this
            // one reads the same period: what lies between is lost, nothing is given back.
            let mayRepeat = idleInputs == nil && timeline.isHolding && frames == timeline.lastFrames
            let repeatsWholly =
                mayRepeat && heldInputsVary && inputsFingerprint(frameCount: frameCount).hash == heldInputsFingerprint
            // Or in part: the held copy was taken while the source wrote this period (torn).
            let repeatsInPart = mayRepeat && !repeatsWholly && lastHeldCopyIsTorn(frameCount: frameCount)
            let repeatsHeldInputs = repeatsWholly || repeatsInPart
            let pendingBefore = timeline.pendingFrames
            pendingBeforeCycle = pendingBefore
            let verdict = timeline.step(
                counter: cycleStartFrame, frames: frames, microseconds: cycleMicroseconds, driverStamp: driverStamp,
                deliveredNothing: (timeline.isHolding
                    || (timeline.hasLastCycle && cycleStartFrame == timeline.lastCounter))
                    && inputsHoldNothing(frameCount: frameCount),
                cycleStartMicroseconds: cycleStartMicroseconds, repeatsLastCycle: repeatsHeldInputs)
            if pendingBefore > 0 && !verdict.releasesHold && timeline.pendingFrames != pendingBefore {
                noteLaterExcess(timeline.pendingFrames > pendingBefore ? timeline.pendingFrames &- pendingBefore : 0)
            }
            // A late cycle counts where its loss lies within the take (`apply` logs it only there).
            let lossIsInTake = (holdStart ?? framesTaken) < frameLimit
            // The torn copy stands for this cycle's period: the whole of it goes in its place.
            if repeatsInPart && verdict.discardsCycle { rewriteLastHeldPeriod(frameCount: frameCount) }
            apply(verdict, repeatsLastHeld: repeatsHeldInputs && pendingBefore > 0)
            if verdict.discardsCycle {
                // PipeWire repeated the last position without data: nothing of it is taken.
                if lossIsInTake {
                    lateCyclesInTake &+= 1
                    counters.pointee.lateCycles.store(lateCyclesInTake, ordering: .relaxed)
                }
                return
            }
            // A ring already dropping cannot hold: settle at once (the loss joins the drop). Nor can
            // an empty cycle (PipeWire's idle buffers, `noteEmptyCycle`) give the excess back: it
            // is a loss, placed before this cycle's own.
            if timeline.isHolding && (pendingDrop.frameCount > 0 || inputsIdle) { apply(timeline.settleNow()) }
            if timeline.isHolding && holdStart == nil {
                holdStart = framesTaken
                heldPeriodIsOwn = holdsOwnPeriod(position: ownPosition, frames: frames)
            }
            // (Where the file holds the inputs, the held period's fingerprint is taken from its
            // copy in the ring, as it is queued: `queue`.)
            if idleInputs == nil && timeline.isHolding && !recordsInputs {
                (heldInputsFingerprint, heldInputsVary) = inputsFingerprint(frameCount: frameCount)
            }
            noteBuffer(
                position: cycleStartFrame, inputsIdle: inputsIdle,
                steady: !timeline.isHolding && !verdict.releasesHold && verdict.jitterFrames == 0
                    && !verdict.counterReset)
        }
        if idleInputs != nil {
            noteEmptyCycle(frameCount: UInt64(frameCount), inputsIdle: inputsIdle)
            noteSilentCycle(frameCount: frameCount, inputsIdle: inputsIdle)
        }
        let remaining = frameLimit - framesTaken
        if remaining == 0 { return }
        let frames = UInt64(frameCount) < remaining ? frameCount : Int(truncatingIfNeeded: remaining)
        if framesTaken == 0 {
            counters.pointee.firstCycleMicroseconds.store(cycleStartMicroseconds, ordering: .relaxed)
        }

        if let suppressor, frames <= Self.maximumPeriod {
            // SAFETY: inputs[channelCount] is the clean buffer (maximumPeriod floats), made by the
            // session; inputs 0 and 1 hold ≥ frames samples this cycle.
            suppressor.pointee.process(
                primary: inputs[0], reference: inputs[1],
                clean: UnsafeMutablePointer(mutating: inputs[channelCount]), frameCount: frames)
            cleanFrameCount = frames
        }

        // The analysis ring gets the period too: copied from the capture ring's slots just
        // written when the period was queued (one copy of interleaved data), interleaved afresh
        // otherwise (metering only, or a dropped period: the analysis still sees it).
        var analysed = false
        if let samples, let drops {
            var queued = queue(frames: frames, samples: samples, drops: drops, analysis: analysis)
            if !queued && timeline.isHolding {
                // No room to hold more: settle now, release what is held, and try again.
                apply(timeline.settleNow())
                queued = queue(frames: frames, samples: samples, drops: drops, analysis: analysis)
            }
            if queued {
                analysed = true
            } else {
                if pendingDrop.frameCount == 0 { pendingDrop.startFrame = framesTaken }
                pendingDrop.frameCount &+= UInt64(frames)
                counters.pointee.framesDropped.add(UInt64(frames), ordering: .relaxed)
            }
        }

        if !analysed, let analysis { pushAnalysis(frames: frames, into: analysis) }

        let readings = meterMailbox.writeBuffer()
        // The inputs, and the clean channel when denoising (`inputs[channelCount]`): four
        // channels per SIMD pass, then a pair, then one.
        // SAFETY: `meters` and `inputs` hold `meterCount` entries; each input has ≥ frames samples.
        ChannelMeter.processChannels(
            meters, inputs: inputs, channelCount: meterCount, count: frames, coefficients: meterCoefficients)
        var channel = 0
        while channel < meterCount {
            // SAFETY: the mailbox slots hold `meterCount` readings.
            readings[channel] = meters[channel]
            channel &+= 1
        }
        meterMailbox.publish()

        framesTaken &+= UInt64(frames)
        if stagedFrames > 0 {
            stagedCycleFrames = frameCount
            return
        }
        // Releasing: the ring and drop-log commits above happen-before a reader that sees this.
        counters.pointee.framesTaken.store(framesTaken, ordering: .releasing)
        if framesTaken == frameLimit { counters.pointee.isComplete.store(true, ordering: .releasing) }
    }

    /// The end of a cycle whose period `process` staged (`defersCommit`), with the server's frame
    /// counter read once more just before the kernel copied the inputs (`counterBeforeCopy`) and
    /// again after (`counterAfterCopy`). Unchanged both times, the period is committed. Moved on
    /// before the copy, the server began a later cycle first, and its source may already have
    /// written its next period into these very buffers (seen on jackd -S under load: the counter
    /// steady, the period the next one's, and the next cycle the same period again): the period
    /// is held. Moved on only by the second read (during or after the copy, or the thread stopped
    /// in between), the buffers tell: other samples than the copy's, and the source wrote after
    /// the copy, which is then the cycle's own period, committed; the same samples, and the copy
    /// may be newer than the cycle (a thread stopped just before it): held. A held period's move
    /// is an excess for the judge (`TimelineJudge.counterMoved`), and the next cycle settles it:
    /// the same samples again, and this period was the next one's (its own is lost, placed before
    /// it); the counter given back with other samples, and it was its own (jitter). Realtime
    /// thread, inside the process callback.
    @_noLocks @_noAllocation
    mutating func finishCycle(counterBeforeCopy: UInt32, counterAfterCopy: UInt32, knowsCounter: Bool) {
        let judged = knowsCounter && stagesCommit && timeline.hasLastCycle && isTaking
        let movedBefore = judged && Int32(bitPattern: counterBeforeCopy &- timeline.lastCounter) > 0
        let movedAfter = judged && Int32(bitPattern: counterAfterCopy &- timeline.lastCounter) > 0
        if stagedFrames > 0 {
            let staged = stagedFrames
            stagedFrames = 0
            var holds = movedBefore
            var copied = (hash: UInt64(0), varies: false)
            if movedBefore || movedAfter {
                copied = stagedPeriodFingerprint(frames: staged)
                // (When the file does not hold the inputs, the copy cannot be compared: held.)
                // (A copy torn between the cycle's period and the next, which the buffers now
                // hold, is held too: the next cycle's repeat settles it.)
                holds =
                    holds || !recordsInputs || copied.hash == inputsFingerprint(frameCount: stagedCycleFrames).hash
                    || stagedCopyIsTorn(frames: staged)
            }
            if holds && holdStart == nil && framesTaken >= UInt64(staged) {
                (heldInputsFingerprint, heldInputsVary) = copied
                holdStart = framesTaken &- UInt64(staged)
                heldFrames = staged
                lastHeldOffset = 0
                pendingBeforeLastHeld = 0
                heldPeriodIsOwn = false
                // The held period may be a later one than the cycle's: where a further excess
                // belongs is unknown.
                laterExcessIsKnown = false
                timeline.counterMoved(to: counterAfterCopy)
            } else if let samples {
                samples.commitWrite(count: staged &* recordedChannelCount)
            }
            counters.pointee.framesTaken.store(framesTaken, ordering: .releasing)
            if framesTaken == frameLimit { counters.pointee.isComplete.store(true, ordering: .releasing) }
        } else if (movedBefore || movedAfter) && timeline.isHolding {
            // Already held (an excess at the cycle's start): the move adds to it.
            noteLaterExcess(0)
            timeline.counterMoved(to: counterAfterCopy)
        }
    }

    /// Copies input c × gain to output c (c < the route's count) and meters the outputs, every
    /// cycle, whether or not a take is running (a non-finite sample goes out as 0, counted in
    /// `CaptureCounters.monitorNonFiniteReplaced`): what you hear is this cycle's input, with no
    /// added period. Realtime thread, after the glue fetched the output buffers. `mutating` only
    /// so that the call takes the kernel by reference: a non-mutating call through the glue's
    /// pointer copies the whole kernel first.
    @_noLocks @_noAllocation
    mutating func monitorPass(frameCount: Int) {
        guard let monitor else { return }
        let gain = monitor.gain
        let readings = monitor.meterMailbox.writeBuffer()
        var replaced: UInt64 = 0
        var channel = 0
        while channel < monitor.count {
            // SAFETY: the route holds `count` outputs and meters, count ≤ channelCount inputs;
            // every buffer holds frameCount samples this cycle. Denoising, every output gets the
            // clean channel (filled by `process`, which runs first, once the take has begun).
            let source = suppressor == nil ? inputs[channel] : inputs[channelCount]
            let destination = monitor.outputs[channel]
            let isSilent = suppressor != nil && cleanFrameCount != frameCount
            if isSilent {
                var i = 0
                while i < frameCount {
                    destination[i] = 0
                    i += 1
                }
            } else {
                replaced &+= Self.copyFinite(source, gain: gain, into: destination, count: frameCount)
            }
            monitor.meters[channel].process(destination, count: frameCount, coefficients: meterCoefficients)
            readings[channel] = monitor.meters[channel]
            channel += 1
        }
        monitor.meterMailbox.publish()
        if replaced > 0 { counters.pointee.monitorNonFiniteReplaced.add(replaced, ordering: .relaxed) }
    }

    /// Writes source × gain to `destination`, each product that is not finite (a NaN or ±∞
    /// input, or an overflow) as 0: nothing non-finite ever reaches JACK. Returns how many were
    /// replaced. Static, so the call does not copy the kernel. Realtime thread.
    @_noLocks @_noAllocation
    static func copyFinite(
        _ source: UnsafePointer<Float>, gain: Float, into destination: UnsafeMutablePointer<Float>, count: Int
    ) -> UInt64 {
        var replaced: UInt64 = 0
        var i = 0
        while i < count {
            // SAFETY: the caller passes buffers of `count` samples.
            let x = source[i] * gain
            let isFinite = x.isFinite
            destination[i] = isFinite ? x : 0
            replaced &+= isFinite ? 0 : 1
            i &+= 1
        }
        return replaced
    }

    /// Whether every input is digital silence this cycle on PipeWire (the idle buffers are known
    /// there only): the platform gave the cycle no data (its peer's period was already taken: the
    /// port's own idle buffer; or a node late itself left its output silent). Asked only of a
    /// repeat of the last position after an excess, where silence is never the repeat's own
    /// period. False where the idle buffers are not known. Realtime thread.
    @_noLocks @_noAllocation
    func inputsHoldNothing(frameCount: Int) -> Bool {
        guard idleInputs != nil else { return false }
        var channel = 0
        while channel < channelCount {
            // SAFETY: `inputs` holds one entry per channel.
            let buffer = inputs[channel]
            // The idle buffer, an input that mixes several peers, or a node's own output buffer
            // that it left silent: only silence there is PipeWire's "nothing".
            var i = 0
            while i < frameCount {
                // SAFETY: the buffer holds frameCount samples this cycle.
                if buffer[i] != 0 { return false }
                i &+= 1
            }
            channel += 1
        }
        return channelCount > 0
    }

    /// A 64-bit FNV-1a hash of every input's sample bits this cycle, and whether any input's
    /// samples vary within it: two cycles with the same hash and varying samples carried the same
    /// period (a constant period, digital silence above all, says nothing: every period of a
    /// silent port is the same). Asked only while an excess is held. Realtime thread.
    @_noLocks @_noAllocation
    func inputsFingerprint(frameCount: Int) -> (hash: UInt64, varies: Bool) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var varies = false
        guard frameCount > 0 else { return (hash, varies) }
        var channel = 0
        while channel < channelCount {
            // SAFETY: `inputs` holds one entry per channel, each with frameCount samples this cycle.
            let buffer = inputs[channel]
            let first = buffer[0].bitPattern
            var i = 0
            while i < frameCount {
                let bits = buffer[i].bitPattern
                varies = varies || bits != first
                hash = (hash ^ UInt64(bits)) &* 0x0000_0100_0000_01b3
                i &+= 1
            }
            channel &+= 1
        }
        return (hash, varies)
    }

    /// Whether the file records every input, in input order from its first channel (not the
    /// clean channel alone): then a held period's fingerprint comes from its copy in the ring.
    var recordsInputs: Bool { recordSources == inputs && samples != nil }

    /// The fingerprint of the staged period (`stagedFrames`, at the start of the ring's unwritten
    /// slots) from its copy, or of the inputs now when the file does not hold them. The copy, not
    /// the inputs: by the cycle's end the source may have written its next period into the very
    /// buffers the copy was taken from. Realtime thread.
    @_noLocks @_noAllocation
    func stagedPeriodFingerprint(frames: Int) -> (hash: UInt64, varies: Bool) {
        guard recordsInputs, heldFrames == 0, let samples,
            let slices = samples.writableSlices(count: frames &* recordedChannelCount)
        else { return inputsFingerprint(frameCount: stagedCycleFrames) }
        return Self.periodFingerprint(
            first: slices.first, second: slices.second, frames: frames, stride: recordedChannelCount,
            inputCount: channelCount)
    }

    /// `inputsFingerprint` of a period as copied into the ring: `frames` interleaved frames of
    /// `stride` channels in two pieces (split on a frame boundary), of which the first
    /// `inputCount` are the inputs. The same hash as `inputsFingerprint` of the same samples (each
    /// input's samples in turn). Realtime thread.
    @_noLocks @_noAllocation
    static func periodFingerprint(
        first: UnsafeMutableBufferPointer<Float>, second: UnsafeMutableBufferPointer<Float>, frames: Int, stride: Int,
        inputCount: Int
    ) -> (hash: UInt64, varies: Bool) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var varies = false
        guard frames > 0, stride > 0 else { return (hash, varies) }
        let framesInFirst = first.count / stride
        var channel = 0
        while channel < inputCount {
            // SAFETY: the two pieces hold `frames` frames of `stride` samples, `framesInFirst` of
            // them in the first (maybe none); channel < inputCount ≤ stride.
            let firstBits = (framesInFirst > 0 ? first[channel] : second[channel]).bitPattern
            var i = 0
            while i < frames {
                let bits =
                    i < framesInFirst
                    ? first[i &* stride &+ channel].bitPattern
                    : second[(i &- framesInFirst) &* stride &+ channel].bitPattern
                varies = varies || bits != firstBits
                hash = (hash ^ UInt64(bits)) &* 0x0000_0100_0000_01b3
                i &+= 1
            }
            channel &+= 1
        }
        return (hash, varies)
    }

    /// Whether every input got the port's idle buffer this cycle (PipeWire only): the pointer, not
    /// the samples, tells it; a silent period of a peer comes in the peer's own buffer. Realtime
    /// thread.
    @_noLocks @_noAllocation
    func inputsAreIdle() -> Bool {
        guard let idleInputs else { return false }
        var channel = 0
        while channel < channelCount {
            // SAFETY: `inputs` and `idleInputs` hold one entry per channel.
            if inputs[channel] != idleInputs[channel] { return false }
            channel += 1
        }
        return channelCount > 0
    }

    /// Remembers input 0's buffer of a steady cycle with data and its position, for
    /// `holdsOwnPeriod`. Realtime thread.
    @_noLocks @_noAllocation
    private mutating func noteBuffer(position: UInt32, inputsIdle: Bool, steady: Bool) {
        guard idleInputs != nil, channelCount > 0, steady, !inputsIdle else { return }
        if inputs[0] != lastBuffer { otherBuffer = lastBuffer }
        lastBuffer = inputs[0]
        lastBufferPosition = position
    }

    /// Whether this late cycle (its counter one period ahead of `position`, its own) holds its own
    /// period rather than the next one: its buffer's parity against the last steady cycle's, when
    /// it is one of the two buffers known. Unknown: false (the loss goes before it, the late
    /// cycle read ahead). Realtime thread.
    @_noLocks @_noAllocation
    private func holdsOwnPeriod(position: UInt32, frames: UInt32) -> Bool {
        guard idleInputs != nil, channelCount > 0, frames > 0, let lastBuffer, let otherBuffer else { return false }
        let buffer = inputs[0]
        guard buffer == lastBuffer || buffer == otherBuffer else { return false }
        let distance = position &- lastBufferPosition
        guard distance % frames == 0, distance < frames &* 1024 else { return false }
        let evenPeriods = (distance / frames) % 2 == 0
        return (buffer == lastBuffer) == evenPeriods
    }

    /// PipeWire's libjack hands a connected input its idle buffer when the period for this
    /// position never reached the port: micmon's previous cycle was still running when the peer
    /// delivered it (libjack clears the input when a cycle ends, losing what came meanwhile), or
    /// the peer's period was taken by an earlier call. The counter is steady, so nothing else
    /// tells it; the take holds the idle buffer's silence exactly in place. A run of such cycles
    /// after one with data, ended by data within `emptyRunLimit` cycles, is a loss of micmon's
    /// (JACK cannot tell whether other clients got those periods): counted in `missed` and
    /// logged at its place (nothing dropped: the silence came with the cycle). Realtime thread.
    @_noLocks @_noAllocation
    private mutating func noteEmptyCycle(frameCount: UInt64, inputsIdle: Bool) {
        if !inputsIdle {
            if emptyRunIsOpen && emptyRunCycles > 0 && emptyRunStart < frameLimit {
                let room = frameLimit - emptyRunStart
                // The losses settled inside the run are counted already; the entry spans both.
                let roomForEmpty = room > emptyRunInserted ? room - emptyRunInserted : 0
                let missed = emptyRunFrames < roomForEmpty ? emptyRunFrames : roomForEmpty
                counters.pointee.missedGaps.add(1, ordering: .relaxed)
                counters.pointee.framesMissed.add(missed, ordering: .relaxed)
                // A full log loses the entry, never the counts.
                _ = missedGaps.pushOne(gapEvent(start: emptyRunStart, frames: missed &+ emptyRunInserted))
                emptyRunInserted = 0
            }
            endEmptyRunUncounted()
            lastCycleHadData = true
            return
        }
        if timeline.isHolding {
            // Held periods move the place of what follows: such a run is not counted.
            endEmptyRunUncounted()
        } else if lastCycleHadData {
            emptyRunIsOpen = true
            emptyRunStart = framesTaken
            emptyRunFrames = 0
            emptyRunCycles = 0
        }
        lastCycleHadData = false
        guard emptyRunIsOpen else { return }
        emptyRunFrames &+= frameCount
        emptyRunCycles += 1
        if emptyRunCycles > Self.emptyRunLimit { endEmptyRunUncounted() }
    }

    /// PipeWire only. A period of digital silence on every input, from a buffer that carried data
    /// (not the port's idle one), at a steady counter, between periods that were not silent: under
    /// load the graph gave micmon such a period where a witness on the same port got the sound,
    /// and micmon's take ran a period behind it from there (docs/timeline.md, "A silent period").
    /// Nothing a client sees tells that from a source that really went silent for a moment, so a
    /// run of such cycles ended by sound soon after is reported as uncertain
    /// (`uncertainGaps`, exit 75), never as a loss, and nothing is moved. A longer silence (over
    /// `silentRunLimit` cycles), or one at the take's start or end, is the source's. Realtime
    /// thread.
    @_noLocks @_noAllocation
    private mutating func noteSilentCycle(frameCount: Int, inputsIdle: Bool) {
        if inputsIdle || timeline.isHolding {
            // The empty-run rule's business, or places that move: not counted.
            silentRunIsOpen = false
            lastCycleHadSound = false
            return
        }
        if !inputsAreSilent(frameCount: frameCount) {
            if silentRunIsOpen && silentRunStart < frameLimit {
                let room = frameLimit - silentRunStart
                noteUncertain(silentRunFrames < room ? silentRunFrames : room, at: silentRunStart)
            }
            silentRunIsOpen = false
            lastCycleHadSound = true
            return
        }
        if !silentRunIsOpen && lastCycleHadSound {
            silentRunIsOpen = true
            silentRunStart = framesTaken
            silentRunFrames = 0
            silentRunCycles = 0
        }
        lastCycleHadSound = false
        guard silentRunIsOpen else { return }
        silentRunFrames &+= UInt64(frameCount)
        silentRunCycles += 1
        if silentRunCycles > Self.silentRunLimit { silentRunIsOpen = false }
    }

    /// Whether every input holds digital silence (±0) for the whole period; the first sample of
    /// each input decides at once for a signal. Realtime thread.
    @_noLocks @_noAllocation
    func inputsAreSilent(frameCount: Int) -> Bool {
        guard channelCount > 0, frameCount > 0 else { return false }
        var channel = 0
        while channel < channelCount {
            // SAFETY: `inputs` holds one entry per channel, each `frameCount` samples this cycle.
            if inputs[channel][0] != 0 { return false }
            channel += 1
        }
        channel = 0
        while channel < channelCount {
            let samples = inputs[channel]
            var i = 1
            while i < frameCount {
                // SAFETY: as above.
                if samples[i] != 0 { return false }
                i += 1
            }
            channel += 1
        }
        return true
    }

    /// A log entry for `frames` frames from `start` on the take. Built from a copy of
    /// `pendingDrop`: DropEvent's initializer lives in another file, which a debug build's
    /// per-file check of the realtime functions cannot see into. Realtime thread.
    @_noLocks @_noAllocation
    private func gapEvent(start: UInt64, frames: UInt64) -> DropEvent {
        var event = pendingDrop
        event.startFrame = start
        event.frameCount = frames
        return event
    }

    /// Ends an empty run without counting its silence (no data followed it soon enough, or the
    /// take stops); the losses settled inside it, counted already, get their entry in the log.
    /// Realtime thread.
    @_noLocks @_noAllocation
    private mutating func endEmptyRunUncounted() {
        emptyRunIsOpen = false
        guard emptyRunInserted > 0 else { return }
        counters.pointee.missedGaps.add(1, ordering: .relaxed)
        _ = missedGaps.pushOne(gapEvent(start: emptyRunInsertedStart, frames: emptyRunInserted))
        emptyRunInserted = 0
    }

    /// The graph changed its rate while an excess was held: the excess is not judged (PipeWire's
    /// counter jumps while the graph re-clocks, for every client alike, as at a period change),
    /// nothing is inserted, and its frames are reported uncertain where it appeared
    /// (docs/timeline.md, "A rate change while an excess is held"); the held periods go to the
    /// file as they are. Realtime thread.
    @_noLocks @_noAllocation
    private mutating func releaseHoldAtRateChange() {
        let frames = timeline.pendingFrames
        let place = holdStart ?? framesTaken
        apply(timeline.releaseUnjudged())
        if place < frameLimit { noteUncertain(frames, at: place) }
    }

    /// Counts and logs `frames` of the take from `start` as uncertain (`uncertainGaps`): reported,
    /// never moved or dropped. Realtime thread.
    @_noLocks @_noAllocation
    private func noteUncertain(_ frames: UInt64, at start: UInt64) {
        counters.pointee.uncertainGaps.add(1, ordering: .relaxed)
        counters.pointee.framesUncertain.add(frames, ordering: .relaxed)
        // A full log loses the entry, never the counts.
        _ = uncertainGaps.pushOne(gapEvent(start: start, frames: frames))
    }

    /// A cycle changed what is pending while an excess was held: `frames` more (a later excess,
    /// placed after the periods held so far), or 0 for a change whose place is unknown (a
    /// give-back, a move within the cycle). Only the first later excess has a known place.
    /// Realtime thread.
    @_noLocks @_noAllocation
    private mutating func noteLaterExcess(_ frames: UInt64) {
        if frames > 0 && laterExcessIsKnown && laterExcessFrames == 0 {
            laterExcessFrames = frames
            laterExcessOffset = heldFrames
        } else {
            laterExcessIsKnown = false
        }
    }

    /// Carries out what the timeline judge settled: a graph-wide gap is logged and counted; a
    /// loss of micmon's own becomes a drop at the place the excess appeared, before the periods
    /// held since (silence the writer fills in, within `frameLimit`), or two when a later cycle
    /// brought a further excess of known place (`laterExcessFrames`), or when the cycle repeated
    /// the last of several held periods (`repeatsLastHeld`: what became pending from that
    /// period's cycle on goes just before it); then what was held is released to the writer.
    /// Realtime thread.
    @_noLocks @_noAllocation
    private mutating func apply(_ verdict: TimelineJudge.Verdict, repeatsLastHeld: Bool = false) {
        guard verdict.releasesHold || verdict.jitterFrames > 0 || verdict.counterReset else { return }
        let counters = self.counters
        if verdict.jitterFrames > 0 {
            counters.pointee.timelineJitter.store(timeline.jitterEvents, ordering: .relaxed)
        }
        let place = holdStart ?? framesTaken
        if verdict.graphFrames > 0 && place < frameLimit {
            counters.pointee.serverGaps.add(1, ordering: .relaxed)
            counters.pointee.framesSkippedByServer.add(verdict.graphFrames, ordering: .relaxed)
            // Filled field by field from a copy: DropEvent's initializer lives in another file,
            // which a debug build's per-file check of this function cannot see into.
            var event = pendingDrop
            event.startFrame = place
            event.frameCount = verdict.graphFrames
            // A full log loses the entry, never the counts.
            _ = serverGaps.pushOne(event)
        }
        var held = UInt64(heldFrames)
        // A late cycle that held its own period (`heldPeriodIsOwn`): the period lost is the
        // repeat's, after it.
        let lossFollowsHeld =
            verdict.discardsCycle && heldPeriodIsOwn && holdStart != nil && held == UInt64(timeline.lastFrames)
        if verdict.missedFrames > 0 && place < frameLimit {
            let room = frameLimit - place
            var missed = verdict.missedFrames < room ? verdict.missedFrames : room
            if lossFollowsHeld {
                if held > room { held = room }
                if missed > room - held { missed = room - held }
            } else if held > room - missed {
                held = room - missed
            }
            counters.pointee.framesMissed.add(missed, ordering: .relaxed)
            // A second stretch of known place, all of it micmon's and all within the take: a
            // later excess goes after the periods held before it; after a repeat of the last of
            // several held periods, what became pending from that period's cycle on goes just
            // before it (the period is the repeating cycle's, so that cycle's own was lost with
            // it). The rest goes where the first appeared. (Off PipeWire, so no empty run is
            // open; a ring with room for two drops is a take.)
            var second: (frames: UInt64, offset: Int) = (0, 0)
            if repeatsLastHeld {
                if lastHeldOffset > 0 && pendingBeforeLastHeld > 0 && pendingBeforeLastHeld < missed {
                    second = (missed &- pendingBeforeLastHeld, lastHeldOffset)
                }
            } else if laterExcessIsKnown && !verdict.discardsCycle {
                second = (laterExcessFrames, laterExcessOffset)
            }
            let later: UInt64 =
                idleInputs == nil && second.frames > 0 && second.frames < missed && missed == verdict.missedFrames
                    && verdict.graphFrames == 0 && !lossFollowsHeld && held == UInt64(heldFrames)
                    && UInt64(second.offset) <= held && samples != nil && pendingDrop.frameCount == 0
                    && (drops?.availableToWrite() ?? 0) >= 2
                ? second.frames : 0
            var event = pendingDrop
            event.startFrame = lossFollowsHeld ? place &+ held : place
            event.frameCount = missed &- later
            if emptyRunIsOpen && event.startFrame >= emptyRunStart {
                // Inside an empty run: logged with the run, as one stretch (`noteEmptyCycle`).
                if emptyRunInserted == 0 { emptyRunInsertedStart = event.startFrame }
                emptyRunInserted &+= missed
            } else {
                counters.pointee.missedGaps.add(1, ordering: .relaxed)
                _ = missedGaps.pushOne(event)
            }
            if samples != nil, let drops {
                if pendingDrop.frameCount > 0 {
                    // The ring is dropping (nothing is held): the loss continues that drop.
                    pendingDrop.frameCount &+= missed
                    counters.pointee.framesDropped.add(missed, ordering: .relaxed)
                } else if drops.pushOne(event) {
                    counters.pointee.framesDropped.add(event.frameCount, ordering: .relaxed)
                } else {
                    // No room in the drop log: what is held becomes silence with the loss, counted.
                    pendingDrop.startFrame = place
                    pendingDrop.frameCount = missed &+ held
                    counters.pointee.framesDropped.add(missed &+ held, ordering: .relaxed)
                    heldFrames = 0
                }
                if later > 0 {
                    // Room for both was checked above.
                    let laterEvent = gapEvent(start: place &+ event.frameCount &+ UInt64(second.offset), frames: later)
                    counters.pointee.missedGaps.add(1, ordering: .relaxed)
                    _ = missedGaps.pushOne(laterEvent)
                    if drops.pushOne(laterEvent) { counters.pointee.framesDropped.add(later, ordering: .relaxed) }
                }
            }
            framesTaken = place &+ missed &+ held
        } else if verdict.releasesHold && holdStart != nil {
            framesTaken = place &+ held
        }
        if verdict.releasesHold {
            heldPeriodIsOwn = false
            laterExcessFrames = 0
            laterExcessOffset = 0
            laterExcessIsKnown = true
            lastHeldOffset = 0
            pendingBeforeLastHeld = 0
            if let samples, heldFrames > 0, held > 0 {
                samples.commitWrite(count: Int(truncatingIfNeeded: held) &* recordedChannelCount)
            }
            heldFrames = 0
            holdStart = nil
        }
        counters.pointee.framesTaken.store(framesTaken, ordering: .releasing)
        if framesTaken >= frameLimit { counters.pointee.isComplete.store(true, ordering: .releasing) }
    }

    /// Interleaves `frames` frames of the recorded channels into the analysis ring, whole or not
    /// at all (then counted in `analysisFramesMissed`). Realtime thread.
    @_noLocks @_noAllocation
    private func pushAnalysis(frames: Int, into ring: SPSCRing<Float>.Producer) {
        let channelCount = recordedChannelCount
        guard let slices = ring.writableSlices(count: frames * channelCount) else {
            counters.pointee.analysisFramesMissed.add(UInt64(frames), ordering: .relaxed)
            return
        }
        let framesInFirst = channelCount == 2 ? slices.first.count >> 1 : slices.first.count / channelCount
        Self.interleave(
            recordSources, channelCount: channelCount, into: slices.first, fromFrame: 0, frameCount: framesInFirst)
        Self.interleave(
            recordSources, channelCount: channelCount, into: slices.second, fromFrame: framesInFirst,
            frameCount: frames - framesInFirst)
        ring.commitWrite(count: frames * channelCount)
    }

    /// Interleaves `frames` frames into the ring, after reporting any pending drop, behind the
    /// frames held for the timeline judge; commits them unless the judge holds (they then wait
    /// for `apply` to release them). Returns false (and writes nothing) when the ring or the drop
    /// log has no room. Realtime thread.
    @_noLocks @_noAllocation
    private mutating func queue(
        frames: Int, samples: SPSCRing<Float>.Producer, drops: SPSCRing<DropEvent>.Producer,
        analysis: SPSCRing<Float>.Producer?
    ) -> Bool {
        if pendingDrop.frameCount > 0 && drops.availableToWrite() < 1 { return false }
        let channelCount = recordedChannelCount
        let held = heldFrames
        guard let slices = samples.writableSlices(count: (held + frames) * channelCount) else { return false }
        if pendingDrop.frameCount > 0 {
            // SAFETY: one free slot was checked above; only this thread produces drop events.
            drops.writableSlices(count: 1)!.first[0] = pendingDrop
            drops.commitWrite(count: 1)
            pendingDrop.frameCount = 0
        }
        // The ring holds whole frames, so the wrap point falls on a frame boundary. This period
        // goes after the held frames: into the first slice from there, the rest into the second.
        let (periodFirst, periodSecond) = Self.periodSlots(
            first: slices.first, second: slices.second, offset: held, frames: frames, stride: channelCount)
        let inFirst = periodFirst.count / channelCount
        Self.interleave(recordSources, channelCount: channelCount, into: periodFirst, fromFrame: 0, frameCount: inFirst)
        Self.interleave(
            recordSources, channelCount: channelCount, into: periodSecond, fromFrame: inFirst,
            frameCount: frames - inFirst)
        if let analysis {
            Self.copy(
                first: periodFirst, second: periodSecond, frames: frames, channelCount: channelCount, into: analysis,
                counters: counters)
        }
        if timeline.isHolding {
            heldFrames = held + frames
            lastHeldOffset = held
            pendingBeforeLastHeld = pendingBeforeCycle
            if idleInputs == nil && recordsInputs {
                (heldInputsFingerprint, heldInputsVary) = Self.periodFingerprint(
                    first: periodFirst, second: periodSecond, frames: frames, stride: channelCount,
                    inputCount: self.channelCount)
            }
        } else if stagesCommit {
            stagedFrames = frames
        } else {
            samples.commitWrite(count: frames * channelCount)
        }
        return true
    }

    /// Copies the interleaved period just written into the capture ring's slots into the analysis
    /// ring, whole or not at all (then counted in `analysisFramesMissed`). Raw byte copies, up to
    /// three pieces where the two rings wrap at different places. Realtime thread.
    @_noLocks @_noAllocation
    private static func copy(
        first sourceFirst: UnsafeMutableBufferPointer<Float>, second sourceSecond: UnsafeMutableBufferPointer<Float>,
        frames: Int, channelCount: Int, into ring: SPSCRing<Float>.Producer,
        counters: UnsafeMutablePointer<CaptureCounters>
    ) {
        let count = frames &* channelCount
        guard let destination = ring.writableSlices(count: count) else {
            counters.pointee.analysisFramesMissed.add(UInt64(frames), ordering: .relaxed)
            return
        }
        var done = 0
        while done < count {
            let fromFirst = done < sourceFirst.count
            let fromOffset = fromFirst ? done : done - sourceFirst.count
            let fromPiece = fromFirst ? sourceFirst : sourceSecond
            let toFirst = done < destination.first.count
            let toOffset = toFirst ? done : done - destination.first.count
            let toPiece = toFirst ? destination.first : destination.second
            let n = min(fromPiece.count - fromOffset, toPiece.count - toOffset)
            // SAFETY: both pieces hold ≥ offset + n floats; the source was written this cycle, the
            // destination is the producer's until the commit below.
            UnsafeMutableRawPointer(toPiece.baseAddress! + toOffset).copyMemory(
                from: fromPiece.baseAddress! + fromOffset, byteCount: n &* 4)
            done &+= n
        }
        ring.commitWrite(count: count)
    }

    /// Interleaves `frameCount` frames of the recorded sources, from `start` on, into
    /// `destination` (frame-major: every channel of frame 0, then of frame 1, …). Two channels
    /// take `interleaveStereo`; otherwise each group of four channels is a 4 × 4 transpose of
    /// four frames at a time (`interleaveQuad`) and the last one to three channels go sample by
    /// sample. Static, so the call does not copy the kernel. Realtime thread.
    @_noLocks @_noAllocation
    static func interleave(
        _ sources: UnsafeMutablePointer<UnsafePointer<Float>>, channelCount: Int,
        into destination: UnsafeMutableBufferPointer<Float>, fromFrame start: Int, frameCount: Int
    ) {
        guard frameCount > 0, let base = destination.baseAddress else { return }
        if channelCount == 2 {
            // SAFETY: two sources, each holding ≥ start + frameCount samples this cycle.
            interleaveStereo(left: sources[0] + start, right: sources[1] + start, into: base, frameCount: frameCount)
            return
        }
        var channel = 0
        while channel &+ 4 <= channelCount {
            // SAFETY: channel + 4 ≤ channelCount sources, each holding ≥ start + frameCount samples;
            // the destination holds frameCount · channelCount floats.
            interleaveQuad(
                sources + channel, fromFrame: start, into: base + channel, stride: channelCount,
                frameCount: frameCount)
            channel &+= 4
        }
        while channel < channelCount {
            // SAFETY: each recorded source holds ≥ start + frameCount samples this cycle.
            let source = sources[channel] + start
            var frame = 0
            while frame < frameCount {
                // SAFETY: frame * channelCount + channel < frameCount * channelCount ≤ destination.count.
                base[frame &* channelCount &+ channel] = source[frame]
                frame &+= 1
            }
            channel &+= 1
        }
    }

    /// Four channels of `interleave`: `sources[0 ..< 4]` from frame `start` into
    /// `destination[frame · stride + k]`. Four frames at a time: four unaligned loads (one per
    /// channel), a 4 × 4 transpose, four unaligned stores (one per frame); then the rest one by
    /// one. The samples are moved as bits (loaded and stored as UInt32, so a NaN's payload
    /// stays). Realtime thread.
    @_noLocks @_noAllocation
    static func interleaveQuad(
        _ sources: UnsafeMutablePointer<UnsafePointer<Float>>, fromFrame start: Int,
        into destination: UnsafeMutablePointer<Float>, stride: Int, frameCount: Int
    ) {
        // SAFETY: the caller passes four sources of ≥ start + frameCount samples.
        let s0 = UnsafeRawPointer(sources[0] + start)
        // SAFETY: as above.
        let s1 = UnsafeRawPointer(sources[1] + start)
        // SAFETY: as above.
        let s2 = UnsafeRawPointer(sources[2] + start)
        // SAFETY: as above.
        let s3 = UnsafeRawPointer(sources[3] + start)
        let out = UnsafeMutableRawPointer(destination)
        let frameBytes = stride &* 4
        var frame = 0
        while frame &+ 4 <= frameCount {
            let offset = frame &* 4
            // SAFETY: frame + 4 ≤ frameCount samples in each source; unaligned loads.
            let a = s0.loadUnaligned(fromByteOffset: offset, as: SIMD4<UInt32>.self)
            // SAFETY: as above.
            let b = s1.loadUnaligned(fromByteOffset: offset, as: SIMD4<UInt32>.self)
            // SAFETY: as above.
            let c = s2.loadUnaligned(fromByteOffset: offset, as: SIMD4<UInt32>.self)
            // SAFETY: as above.
            let d = s3.loadUnaligned(fromByteOffset: offset, as: SIMD4<UInt32>.self)
            let row = frame &* frameBytes
            // SAFETY: frame k's four floats end at (frame + k) · stride + 4 ≤ frameCount · stride;
            // unaligned stores.
            out.storeBytes(of: SIMD4(a[0], b[0], c[0], d[0]), toByteOffset: row, as: SIMD4<UInt32>.self)
            // SAFETY: as above.
            out.storeBytes(
                of: SIMD4(a[1], b[1], c[1], d[1]), toByteOffset: row &+ frameBytes, as: SIMD4<UInt32>.self)
            // SAFETY: as above.
            out.storeBytes(
                of: SIMD4(a[2], b[2], c[2], d[2]), toByteOffset: row &+ 2 &* frameBytes, as: SIMD4<UInt32>.self)
            // SAFETY: as above.
            out.storeBytes(
                of: SIMD4(a[3], b[3], c[3], d[3]), toByteOffset: row &+ 3 &* frameBytes, as: SIMD4<UInt32>.self)
            frame &+= 4
        }
        while frame < frameCount {
            let offset = frame &* 4
            let row = frame &* frameBytes
            var k = 0
            while k < 4 {
                // SAFETY: frame < frameCount; k < 4 sources; (frame · stride + k) floats fit.
                let bits = UnsafeRawPointer(sources[k] + start).loadUnaligned(
                    fromByteOffset: offset, as: UInt32.self)
                // SAFETY: as above.
                out.storeBytes(of: bits, toByteOffset: row &+ k &* 4, as: UInt32.self)
                k &+= 1
            }
            frame &+= 1
        }
    }

    /// The two-channel case of `interleave`: left, right, left, right, … Four frames at a time
    /// (two unaligned loads, two shuffles, two stores), then the rest one by one. The samples
    /// are moved as bits. Realtime thread.
    @_noLocks @_noAllocation
    private static func interleaveStereo(
        left: UnsafePointer<Float>, right: UnsafePointer<Float>,
        into base: UnsafeMutablePointer<Float>, frameCount: Int
    ) {
        let rawLeft = UnsafeRawPointer(left)
        let rawRight = UnsafeRawPointer(right)
        let destination = UnsafeMutableRawPointer(base)
        var frame = 0
        while frame &+ 4 <= frameCount {
            // SAFETY: frame + 4 ≤ frameCount samples in each input; unaligned loads.
            let l = rawLeft.loadUnaligned(fromByteOffset: frame &* 4, as: SIMD4<Float>.self)
            // SAFETY: as above.
            let r = rawRight.loadUnaligned(fromByteOffset: frame &* 4, as: SIMD4<Float>.self)
            // SAFETY: 2 · (frame + 4) ≤ 2 · frameCount floats in `base`; unaligned stores.
            destination.storeBytes(of: SIMD4(l[0], r[0], l[1], r[1]), toByteOffset: frame &* 8, as: SIMD4<Float>.self)
            // SAFETY: as above.
            destination.storeBytes(
                of: SIMD4(l[2], r[2], l[3], r[3]), toByteOffset: frame &* 8 &+ 16, as: SIMD4<Float>.self)
            frame &+= 4
        }
        while frame < frameCount {
            // SAFETY: frame < frameCount; both inputs hold frameCount samples, `base` 2 · frameCount.
            base[2 &* frame] = left[frame]
            // SAFETY: as above.
            base[2 &* frame &+ 1] = right[frame]
            frame &+= 1
        }
    }
}

/// Where monitoring goes: output ports fed from the first `count` inputs. Memory owned by the
/// session. The glue fills `outputs` each cycle.
struct MonitorRoute {
    let count: Int
    let ports: UnsafeMutablePointer<OpaquePointer>
    let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let gain: Float
    let meters: UnsafeMutablePointer<ChannelMeter>
    let meterMailbox: LatestValueMailbox<ChannelMeter>.Writer
}
