// The one timeline rule: the server's frame counter against the frames a client was given, cycle
// by cycle, telling a late read of the counter (jitter) from frames the server's clock ran past the
// client (a loss), and who lost them. Pure and realtime-safe: the realtime thread owns one and
// steps it once a cycle; tests step it by hand. docs/timeline.md states the rule and the
// measurements behind it.

/// Judges a client's timeline from what the server says each cycle: its frame counter at the
/// cycle start (`jack_get_cycle_times`), the frames the client was given, the wall clock and the
/// driver's own lateness stamp (`jack_get_xrun_delayed_usecs`: it changes only when the driver
/// itself reported being late, which every client sees).
///
/// The account is cumulative: the counter's advance since the last cycle against the frames the
/// last cycle was given. An advance of one period more, given back at once by an advance of
/// nothing (+2N then +0: the cycle read the next cycle's counter), nets to zero: jitter, counted,
/// never a gap. An excess that is not given back within `confirmationCycles` further cycles is
/// settled as a loss: frames the server ran without this client (`missedFrames`), or, as far as
/// the driver's own lateness accounts for them when its stamp changed meanwhile and the counter
/// ran ahead of the server's own cycle clock by as much, cycles the whole graph lost
/// (`graphFrames`). While an excess
/// is pending (`isHolding`), the caller holds back what it was given since `pendingSince`, so that
/// a settled loss can still be placed where it happened. One thread at a time.
@frozen public struct TimelineJudge {
    /// What one step settled. Several things can settle in one cycle (a loss, then a new excess).
    @frozen public struct Verdict: Equatable {
        /// Frames the server's clock ran past this client, not given back: its own loss.
        public var missedFrames: UInt64 = 0
        /// Frames the whole graph lost (the driver itself was late): a server gap.
        public var graphFrames: UInt64 = 0
        /// Frames of excess given back at once (+2N then +0): nothing lost.
        public var jitterFrames: UInt64 = 0
        /// The held excess was settled this step (lost, graph-wide or jitter): the caller releases
        /// what it held, after placing any loss at the pending position.
        public var releasesHold = false
        /// The counter jumped backwards or further than the wall clock allows: a reset, not a gap.
        public var counterReset = false
        /// This cycle repeats the last one's position without data (PipeWire's second call after a
        /// late one, `deliveredNothing`): the caller takes none of its frames.
        public var discardsCycle = false

        @inlinable public init() {}
    }

    /// Further cycles an excess may wait to be given back before it is a loss.
    public let confirmationCycles: Int
    /// Frames per microsecond (the sample rate / 10⁶), for the wall-clock bound on a jump.
    public let framesPerMicrosecond: Double

    // The state below is public for inlining and for tests to read; only `step`, `settleNow`
    // and `restart` change it.
    public var hasLastCycle = false
    public var lastCounter: UInt32 = 0
    public var lastFrames: UInt32 = 0
    public var lastMicroseconds: UInt64 = 0
    public var lastDriverStamp: Float = 0
    /// The last cycle's start by the server's clock (`jack_get_cycle_times`, µs; 0 unknown).
    public var lastCycleStartMicroseconds: UInt64 = 0
    /// The excess not yet given back (frames), and how many cycles it has waited.
    public var pendingFrames: UInt64 = 0
    public var pendingAge = 0
    /// The driver's stamp just before the excess appeared.
    public var driverStampBeforePending: Float = 0
    /// The counter and the cycle's start (µs, 0 unknown) of the cycle before the excess appeared:
    /// how far the counter ran ahead of the server's clock since then bounds the graph's share.
    public var counterBeforePending: UInt32 = 0
    public var cycleStartBeforePending: UInt64 = 0
    /// Whether a cycle that added to the pending excess was entered a period or more after its
    /// own start: this client was late, so the excess is its own whatever the driver's stamp says.
    public var pendingEnteredLate = false
    /// Jitter events (+2N then +0 pairs, or longer chains that net to zero) so far.
    public var jitterEvents: UInt64 = 0
    /// Cycles that repeated the last position with no data (`deliveredNothing`), each settling a
    /// loss, so far.
    public var repeatedPositions: UInt64 = 0

    @inlinable
    public init(sampleRate: Int, confirmationCycles: Int = 2) {
        self.confirmationCycles = confirmationCycles
        framesPerMicrosecond = Double(sampleRate) / 1_000_000
    }

    /// Whether an excess is pending: the caller holds what it takes until a step releases it.
    @inlinable public var isHolding: Bool { pendingFrames > 0 }

    /// One cycle: the counter at its start, the frames it gives, when it ran (µs) and the
    /// driver's lateness stamp. `deliveredNothing`: the platform gave this cycle no data on any
    /// input (PipeWire's libjack hands a port its own silent buffer when its peer's period was
    /// already taken). On PipeWire a late cycle reads the *next* cycle's counter and data, and the
    /// cycle after it repeats that position with nothing: an advance of nothing that delivered
    /// nothing after an excess is no give-back. The excess was then a loss of this client's own
    /// (the data of the skipped position was never taken), settled at once, and this cycle is
    /// discarded (`Verdict.discardsCycle`). So is such a repeat with nothing pending: the last cycle
    /// read ahead where the account had just started afresh (a period change).
    /// `repeatsLastCycle`: this cycle's inputs are the last cycle's very samples (off PipeWire, an
    /// asynchronous or overloaded jackd2: the late cycle read the source's next period). While an
    /// excess is pending, the last cycle's samples belong to this cycle's position: the excess and
    /// this cycle's advance are lost, and this cycle is discarded. Realtime-safe.
    @inlinable
    public mutating func step(
        counter: UInt32, frames: UInt32, microseconds: UInt64, driverStamp: Float, deliveredNothing: Bool = false,
        cycleStartMicroseconds: UInt64 = 0, repeatsLastCycle: Bool = false
    ) -> Verdict {
        var verdict = Verdict()
        defer {
            hasLastCycle = true
            lastCounter = counter
            lastFrames = frames
            lastMicroseconds = microseconds
            lastDriverStamp = driverStamp
            lastCycleStartMicroseconds = cycleStartMicroseconds
        }
        guard hasLastCycle else { return verdict }
        let advance = Int64(Int32(bitPattern: counter &- lastCounter))
        let excess = advance - Int64(lastFrames)
        // What the wall clock allows since the last cycle, with a period of slack either way.
        // (Unknown, 0, on either side: only an absurd jump, past 2²⁴ frames, is a reset.)
        let knowsTime = microseconds > 0 && lastMicroseconds > 0
        let elapsed = microseconds > lastMicroseconds ? Double(microseconds &- lastMicroseconds) : 0
        let plausible =
            knowsTime
            ? Int64(elapsed * framesPerMicrosecond) + 2 * Int64(lastFrames) + 2 * Int64(frames) : 1 << 24
        if advance < 0 || excess > plausible {
            verdict.counterReset = true
            settle(
                into: &verdict, driverStamp: driverStamp, counter: lastCounter, cycleStart: lastCycleStartMicroseconds)
            return verdict
        }
        if repeatsLastCycle && pendingFrames > 0 {
            // The held cycle read ahead: its samples are this position's (this cycle brings
            // them again), so everything from the held cycle's own position to this one is lost.
            discardRepeat(losing: pendingFrames + UInt64(advance), into: &verdict)
            return verdict
        }
        if advance == 0 && deliveredNothing && (pendingFrames > 0 || lastFrames > 0) {
            // A repeat of the last position with no data: the last cycle's data was this
            // position's own, so what it skipped is lost. With nothing pending (the last cycle
            // was the first of the account: after a period change, whose jump is not judged),
            // what it skipped is one period, its own.
            discardRepeat(losing: pendingFrames > 0 ? pendingFrames : UInt64(lastFrames), into: &verdict)
            return verdict
        }
        if excess < 0 {
            // A give-back: the counter advanced less than a period, after running ahead.
            let given = UInt64(-excess)
            let cancelled = given < pendingFrames ? given : pendingFrames
            verdict.jitterFrames = cancelled
            pendingFrames -= cancelled
            if pendingFrames == 0 {
                if cancelled > 0 {
                    jitterEvents &+= 1
                    verdict.releasesHold = true
                }
                pendingAge = 0
            } else {
                pendingAge += 1
            }
            return verdict
        }
        if pendingFrames > 0 {
            pendingAge += 1
            if pendingAge >= confirmationCycles {
                settle(into: &verdict, driverStamp: driverStamp, counter: counter, cycleStart: cycleStartMicroseconds)
            }
        }
        if excess > 0 {
            if pendingFrames == 0 {
                notePendingStart()
                pendingEnteredLate = false
            }
            pendingFrames += UInt64(excess)
            // Entered a period or more after the cycle began: the driver woke on time and this
            // client did not (a client stopped while the server ran on), whatever the stamp says.
            if cycleStartMicroseconds > 0 && framesPerMicrosecond > 0
                && microseconds >= cycleStartMicroseconds &+ UInt64(Double(frames) / framesPerMicrosecond)
            {
                pendingEnteredLate = true
            }
        }
        return verdict
    }

    /// The counter read once more at the end of the last cycle, after its inputs were taken, was
    /// `counter`, past the one it began with: the server began a later cycle meanwhile, so that
    /// cycle's data may be the next period's. The move is an excess of this client's own (it was
    /// late), judged as any: given back by the next cycle (+0 from here) it was jitter; the same
    /// samples again (`repeatsLastCycle`) and its own period was lost. A move of more than a
    /// period counts one: the next cycle is the one after this (a later one is judged from there),
    /// and a counter taken two periods on would read that next cycle as going back. Realtime-safe.
    @inlinable
    public mutating func counterMoved(to counter: UInt32) {
        let moved = min(Int64(Int32(bitPattern: counter &- lastCounter)), Int64(lastFrames))
        guard hasLastCycle, moved > 0 else { return }
        if pendingFrames == 0 { notePendingStart() }
        pendingFrames += UInt64(moved)
        pendingEnteredLate = true
        lastCounter = lastCounter &+ UInt32(moved)
    }

    /// A cycle that repeats a position already taken: `frames` are lost, the hold is released
    /// and the cycle is discarded.
    @inlinable
    mutating func discardRepeat(losing frames: UInt64, into verdict: inout Verdict) {
        verdict.missedFrames += frames
        verdict.releasesHold = true
        verdict.discardsCycle = true
        repeatedPositions &+= 1
        pendingFrames = 0
        pendingAge = 0
    }

    /// Settles whatever is pending now (the session is stopping, or the caller cannot hold any
    /// longer): an excess not given back is a loss. Realtime-safe.
    @inlinable
    public mutating func settleNow() -> Verdict {
        var verdict = Verdict()
        settle(
            into: &verdict, driverStamp: lastDriverStamp, counter: lastCounter, cycleStart: lastCycleStartMicroseconds)
        return verdict
    }

    /// Ends the pending excess unjudged (the caller cannot weigh it: the graph changed its rate
    /// meanwhile, and its counter jumps while it re-clocks): a verdict that releases the hold
    /// with nothing lost, nothing given back. The caller reports the frames as it sees fit.
    /// Realtime-safe.
    @inlinable
    public mutating func releaseUnjudged() -> Verdict {
        var verdict = Verdict()
        guard pendingFrames > 0 else { return verdict }
        verdict.releasesHold = true
        pendingFrames = 0
        pendingAge = 0
        return verdict
    }

    /// An excess starts pending after the last cycle: what the settlement compares against.
    @inlinable
    mutating func notePendingStart() {
        driverStampBeforePending = lastDriverStamp
        counterBeforePending = lastCounter
        cycleStartBeforePending = lastCycleStartMicroseconds
        pendingAge = 0
    }

    /// Starts the account afresh at the next cycle (the period changed, or the take restarted);
    /// anything pending is settled first. Realtime-safe.
    @inlinable
    public mutating func restart() -> Verdict {
        let verdict = settleNow()
        hasLastCycle = false
        return verdict
    }

    /// The part of `excess` the driver's own lateness (its stamp, µs late) accounts for: that
    /// lateness in whole periods of `frames`, to the nearest. A driver a few µs late accounts for
    /// none of it (jackd2's dummy driver reports 36–96 µs when stalled, and its counter never
    /// jumps for that: docs/timeline.md); the rest of the excess is the client's own loss.
    @inlinable
    public func graphShare(of excess: UInt64, driverStamp: Float, frames: UInt32) -> UInt64 {
        guard frames > 0, driverStamp.isFinite, driverStamp > 0 else { return 0 }
        let late = Double(driverStamp) * framesPerMicrosecond / Double(frames)
        guard late < Double(UInt32.max) else { return excess }
        let share = UInt64(late + 0.5) &* UInt64(frames)
        return share < excess ? share : excess
    }

    /// The part of `excess` the server's own clock allows to be graph-wide: how far the counter
    /// (`counter`, at `cycleStart` µs) ran ahead of that clock since the cycle before the excess,
    /// in whole periods of `frames`, to the nearest. A cycle that ran without this client moves
    /// counter and clock together; a jump of the counter that no time backs (the driver resetting
    /// its frame time after an xrun) moves the counter alone. jackd2's dummy driver never jumps
    /// (docs/timeline.md): a driver xrun there while micmon was stopped is its loss, not the
    /// graph's. Unknown cycle starts (0) bound nothing.
    @inlinable
    public func clockShare(of excess: UInt64, counter: UInt32, cycleStart: UInt64, frames: UInt32) -> UInt64 {
        guard frames > 0, cycleStart > 0, cycleStartBeforePending > 0, cycleStart >= cycleStartBeforePending else {
            return excess
        }
        let counted = Double(counter &- counterBeforePending)
        let clocked = Double(cycleStart &- cycleStartBeforePending) * framesPerMicrosecond
        let ahead = (counted - clocked) / Double(frames)
        guard ahead >= 0.5 else { return 0 }
        guard ahead < Double(UInt32.max) else { return excess }
        let share = UInt64(ahead + 0.5) &* UInt64(frames)
        return share < excess ? share : excess
    }

    @inlinable
    mutating func settle(into verdict: inout Verdict, driverStamp: Float, counter: UInt32, cycleStart: UInt64) {
        guard pendingFrames > 0 else { return }
        let stampShare =
            driverStamp != driverStampBeforePending && !pendingEnteredLate
            ? graphShare(of: pendingFrames, driverStamp: driverStamp, frames: lastFrames) : 0
        let graph =
            stampShare > 0
            ? min(
                stampShare, clockShare(of: pendingFrames, counter: counter, cycleStart: cycleStart, frames: lastFrames))
            : 0
        verdict.graphFrames += graph
        verdict.missedFrames += pendingFrames - graph
        verdict.releasesHold = true
        pendingFrames = 0
        pendingAge = 0
    }
}

/// Xrun notifications as events: jackd2 calls the xrun callback once per late client per cycle
/// (and a netjack2 cycle several times), so notifications that follow each other within one
/// period are one event. The notification thread owns one. Realtime-safe.
@frozen public struct XrunCoalescer {
    public var lastMicroseconds: UInt64 = 0
    public var hasSeenOne = false

    @inlinable public init() {}

    /// One notification at `microseconds`; returns true when it starts a new event (more than
    /// four periods after the previous notification, or the first). A client asleep for several
    /// periods is reported in more than one cycle, not always consecutive ones: on an async
    /// jackd2 a client asleep for 3.75 periods was reported at t and about two periods later, so
    /// with a window of one period 5 such episodes read 7–8 events, and with two still 6–8.
    @inlinable
    public mutating func note(atMicroseconds microseconds: UInt64, periodMicroseconds: UInt64) -> Bool {
        defer {
            lastMicroseconds = microseconds
            hasSeenOne = true
        }
        guard hasSeenOne else { return true }
        let since = microseconds > lastMicroseconds ? microseconds &- lastMicroseconds : 0
        return since > 4 * periodMicroseconds
    }
}
