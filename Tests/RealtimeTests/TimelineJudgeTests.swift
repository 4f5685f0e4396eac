// The timeline rule and the xrun coalescer, stepped by hand over sequences of cycles:
// (frame counter, frames given, wall time, driver stamp). No server.

import Realtime
import Testing

@Suite("Timeline rule")
struct TimelineJudgeTests {
    /// One cycle of a sequence.
    struct Cycle {
        var counter: UInt32
        var frames: UInt32 = 256
        /// Microseconds; 0 when unknown.
        var microseconds: UInt64 = 0
        var driverStamp: Float = 0
        /// When the cycle began (µs); 0 when unknown.
        var cycleStart: UInt64 = 0
    }

    /// Steps a judge through `cycles` and sums what it settled.
    static func run(_ cycles: [Cycle], judge: inout TimelineJudge) -> TimelineJudge.Verdict {
        var total = TimelineJudge.Verdict()
        for cycle in cycles {
            let verdict = judge.step(
                counter: cycle.counter, frames: cycle.frames, microseconds: cycle.microseconds,
                driverStamp: cycle.driverStamp, cycleStartMicroseconds: cycle.cycleStart)
            total.missedFrames += verdict.missedFrames
            total.graphFrames += verdict.graphFrames
            total.jitterFrames += verdict.jitterFrames
            total.counterReset = total.counterReset || verdict.counterReset
        }
        return total
    }

    /// Counters 256 apart from `start`, `count` cycles, 5333 µs apart.
    static func steady(from start: UInt32, count: Int, at time: UInt64 = 1_000_000) -> [Cycle] {
        (0 ..< count).map {
            Cycle(counter: start &+ UInt32($0) * 256, microseconds: time + UInt64($0) * 5333)
        }
    }

    @Test("a steady timeline settles nothing")
    func steadyTimeline() {
        var judge = TimelineJudge(sampleRate: 48000)
        let total = Self.run(Self.steady(from: 4096, count: 50), judge: &judge)
        #expect(total == TimelineJudge.Verdict())
        #expect(!judge.isHolding && judge.jitterEvents == 0)
    }

    @Test("a counter that moved on during a cycle: given back by the next, jitter; kept, micmon's own loss")
    func counterMovedDuringACycle() {
        var judge = TimelineJudge(sampleRate: 48000)
        _ = Self.run(Self.steady(from: 0, count: 4), judge: &judge)
        judge.counterMoved(to: 1024)  // the last cycle began at 768 and read on into 1024's
        #expect(judge.isHolding && judge.pendingFrames == 256 && judge.lastCounter == 1024)
        let givenBack = Self.run([Cycle(counter: 1024, microseconds: 1_000_000 + 4 * 5333)], judge: &judge)
        #expect(givenBack.jitterFrames == 256 && givenBack.missedFrames == 0 && !judge.isHolding)
        judge.counterMoved(to: 1280)
        // Not given back (the next cycles go on a period at a time), with the driver's stamp
        // changed meanwhile: micmon was late, so the loss is its own, never graph-wide.
        let kept = Self.run(
            [
                Cycle(counter: 1536, microseconds: 1_000_000 + 6 * 5333, driverStamp: 6000),
                Cycle(counter: 1792, microseconds: 1_000_000 + 7 * 5333, driverStamp: 6000),
            ], judge: &judge)
        #expect(kept.missedFrames == 256 && kept.graphFrames == 0 && !judge.isHolding)
        // A counter that did not move (or went back) changes nothing.
        judge.counterMoved(to: 1792)
        judge.counterMoved(to: 1700)
        #expect(!judge.isHolding && judge.lastCounter == 1792)
        // Two periods on counts one: the next cycle (2048) gives it back, not a counter reset.
        judge.counterMoved(to: 2304)
        #expect(judge.pendingFrames == 256 && judge.lastCounter == 2048)
        let next = Self.run([Cycle(counter: 2048, microseconds: 1_000_000 + 8 * 5333)], judge: &judge)
        #expect(next.jitterFrames == 256 && !next.counterReset && !judge.isHolding)
    }

    @Test("+2N then +0 nets to zero: one jitter event, no loss, no gap")
    func lateReadIsJitter() {
        var judge = TimelineJudge(sampleRate: 48000)
        var cycles = Self.steady(from: 0, count: 4)
        cycles.append(Cycle(counter: 1280, microseconds: 1_000_000 + 4 * 5333 + 5000))  // +2N
        #expect(Self.run(cycles, judge: &judge) == TimelineJudge.Verdict())
        #expect(judge.isHolding)  // an excess of one period waits
        let after = Self.run(
            [Cycle(counter: 1280, microseconds: 1_000_000 + 4 * 5333 + 5050)]  // +0: given back
                + Self.steady(from: 1536, count: 4, at: 1_000_000 + 6 * 5333),
            judge: &judge)
        #expect(after.missedFrames == 0 && after.graphFrames == 0 && after.jitterFrames == 256)
        #expect(judge.jitterEvents == 1 && !judge.isHolding)
    }

    @Test("PipeWire: +2N then a repeat of that position with no data is a loss of N, and the repeat is discarded")
    func repeatWithoutDataIsMissed() {
        var judge = TimelineJudge(sampleRate: 48000)
        _ = Self.run(Self.steady(from: 0, count: 4), judge: &judge)
        let early = judge.step(counter: 1280, frames: 256, microseconds: 1_030_000, driverStamp: 0)  // +2N
        #expect(early == TimelineJudge.Verdict() && judge.isHolding)
        let repeated = judge.step(
            counter: 1280, frames: 256, microseconds: 1_030_100, driverStamp: 0, deliveredNothing: true)
        #expect(repeated.missedFrames == 256 && repeated.jitterFrames == 0 && repeated.graphFrames == 0)
        #expect(repeated.releasesHold && repeated.discardsCycle)
        #expect(!judge.isHolding && judge.jitterEvents == 0 && judge.repeatedPositions == 1)
        // The next cycle is steady again: nothing more to settle.
        let next = judge.step(counter: 1536, frames: 256, microseconds: 1_035_400, driverStamp: 0)
        #expect(next == TimelineJudge.Verdict() && !judge.isHolding)
    }

    @Test(
        "PipeWire: after a period change, a first cycle that read ahead and a repeat with no data is a loss of one period"
    )
    func repeatAfterPeriodChangeIsMissed() {
        var judge = TimelineJudge(sampleRate: 48000)
        _ = Self.run(Self.steady(from: 0, count: 4), judge: &judge)
        // 256 → 128: the account starts afresh; PipeWire's counter jumps at the first cycle of the
        // new quantum (here by the old period and one new one, read late: the next cycle's), and
        // that jump is not judged.
        #expect(judge.restart() == TimelineJudge.Verdict())
        let first = judge.step(counter: 1024 + 384 + 128, frames: 128, microseconds: 1_040_000, driverStamp: 0)
        #expect(first == TimelineJudge.Verdict() && !judge.isHolding)
        // The repeat of that position with nothing: the period the late cycle skipped is lost.
        let repeated = judge.step(
            counter: 1024 + 384 + 128, frames: 128, microseconds: 1_040_100, driverStamp: 0, deliveredNothing: true)
        #expect(repeated.missedFrames == 128 && repeated.discardsCycle && repeated.releasesHold)
        #expect(judge.repeatedPositions == 1)
        // A repeat that carried data is still nothing to settle there (the late cycle read its own).
        var other = TimelineJudge(sampleRate: 48000)
        _ = Self.run(Self.steady(from: 0, count: 4), judge: &other)
        _ = other.restart()
        _ = other.step(counter: 1536, frames: 128, microseconds: 1_040_000, driverStamp: 0)
        #expect(
            other.step(counter: 1536, frames: 128, microseconds: 1_040_100, driverStamp: 0) == TimelineJudge.Verdict())
    }

    @Test(
        "PipeWire: a repeat that carried data is a give-back (jitter), and no data without an excess discards nothing")
    func repeatWithDataIsJitter() {
        var judge = TimelineJudge(sampleRate: 48000)
        _ = Self.run(Self.steady(from: 0, count: 4), judge: &judge)
        _ = judge.step(counter: 1280, frames: 256, microseconds: 1_030_000, driverStamp: 0)
        let given = judge.step(counter: 1280, frames: 256, microseconds: 1_030_100, driverStamp: 0)
        #expect(given.jitterFrames == 256 && given.missedFrames == 0 && !given.discardsCycle)
        // Silence on a steady cycle (a source that is not connected) is not a repeat.
        let silent = judge.step(
            counter: 1536, frames: 256, microseconds: 1_035_400, driverStamp: 0, deliveredNothing: true)
        #expect(silent == TimelineJudge.Verdict())
    }

    @Test("a late chain (+2N, +N, +0) is jitter too, within the confirmation window")
    func lateChainIsJitter() {
        var judge = TimelineJudge(sampleRate: 48000)
        let cycles = [
            Cycle(counter: 0), Cycle(counter: 256), Cycle(counter: 768), Cycle(counter: 1024), Cycle(counter: 1024),
            Cycle(counter: 1280),
        ]
        let total = Self.run(cycles, judge: &judge)
        #expect(total.missedFrames == 0 && total.jitterFrames == 256 && judge.jitterEvents == 1)
    }

    @Test("frames the counter ran past and never gave back are micmon's loss, settled after the window")
    func persistentExcessIsMissed() {
        var judge = TimelineJudge(sampleRate: 48000)
        // Stopped for 3 s: the counter jumps 144640 frames (565 periods) between two calls.
        var cycles = Self.steady(from: 0, count: 3)
        cycles.append(Cycle(counter: 512 + 256 + 144640, microseconds: 1_000_000 + 2 * 5333 + 3_013_333))
        let jump = Self.run(cycles, judge: &judge)
        #expect(jump.missedFrames == 0 && judge.isHolding)
        let first = judge.step(
            counter: 512 + 512 + 144640, frames: 256, microseconds: 4_030_000, driverStamp: 0)
        #expect(first.missedFrames == 0 && judge.isHolding)
        let second = judge.step(
            counter: 512 + 768 + 144640, frames: 256, microseconds: 4_035_333, driverStamp: 0)
        #expect(second.missedFrames == 144640 && second.releasesHold && !judge.isHolding)
    }

    @Test("an excess the driver's own xrun accounts for (5.3 ms late: one period) is graph-wide, not micmon's")
    func driverStampMakesItGraphWide() {
        var judge = TimelineJudge(sampleRate: 48000)
        let cycles = [
            Cycle(counter: 0), Cycle(counter: 256), Cycle(counter: 768, driverStamp: 5400),
            Cycle(counter: 1024, driverStamp: 5400), Cycle(counter: 1280, driverStamp: 5400),
        ]
        let total = Self.run(cycles, judge: &judge)
        #expect(total.graphFrames == 256 && total.missedFrames == 0)
    }

    /// jackd2 asynchronous, micmon stopped 2 s while the loaded host made the dummy driver report
    /// an xrun of 49 µs: the server and every other client ran on, so those frames are micmon's
    /// own loss. Before, any change of the stamp made the whole excess graph-wide: nothing
    /// inserted, the take 2 s short of the server's clock.
    @Test("a driver a few µs late accounts for none of a long excess: it is micmon's own loss")
    func smallDriverStampIsNoGraphGap() {
        var judge = TimelineJudge(sampleRate: 48000)
        let cycles = [
            Cycle(counter: 0), Cycle(counter: 256), Cycle(counter: 512 + 96000, driverStamp: 49),
            Cycle(counter: 512 + 96000 + 256, driverStamp: 49), Cycle(counter: 512 + 96000 + 512, driverStamp: 49),
        ]
        let total = Self.run(cycles, judge: &judge)
        #expect(total.graphFrames == 0 && total.missedFrames == 96000)
        // Lateness that accounts for part of an excess makes that part graph-wide, the rest missed.
        var partly = TimelineJudge(sampleRate: 48000)
        let split = Self.run(
            [
                Cycle(counter: 0), Cycle(counter: 256), Cycle(counter: 512 + 1024, driverStamp: 10_700),
                Cycle(counter: 512 + 1024 + 256, driverStamp: 10_700),
                Cycle(counter: 512 + 1024 + 512, driverStamp: 10_700),
            ], judge: &partly)
        #expect(split.graphFrames == 512 && split.missedFrames == 512)
    }

    /// jackd2 asynchronous, micmon stopped 0.6 s around a 1 s stop of the server itself: the
    /// driver's stamp read about a second late (it was), yet its counter does not jump for that;
    /// the excess is the 0.6 s the server ran while micmon slept. Such a cycle enters long after
    /// its own start (here 0.69 s): the driver woke on time and micmon did not, so no stamp makes
    /// it graph-wide. Before, it was a 0.6 s "server gap" with nothing inserted, exit 0.
    @Test("an excess seen by a cycle entered a period or more after its start is micmon's own, whatever the stamp")
    func lateEntryIsOwnLossWhateverTheStamp() {
        let stamp: Float = 1_000_000
        var judge = TimelineJudge(sampleRate: 48000)
        let cycles = [
            Cycle(counter: 0, microseconds: 1_000_000, cycleStart: 999_900),
            Cycle(counter: 256, microseconds: 1_005_333, cycleStart: 1_005_233),
            Cycle(counter: 512 + 28928, microseconds: 2_295_000, driverStamp: stamp, cycleStart: 1_605_000),
            Cycle(counter: 512 + 28928 + 256, microseconds: 2_295_100, driverStamp: stamp, cycleStart: 2_295_050),
            Cycle(counter: 512 + 28928 + 512, microseconds: 2_300_400, driverStamp: stamp, cycleStart: 2_300_350),
        ]
        let total = Self.run(cycles, judge: &judge)
        #expect(total.graphFrames == 0 && total.missedFrames == 28928)
        // The same stamp with the cycle entered just after its start, and the counter 1024
        // frames ahead of the server's cycle clock (a jump no time backs): graph-wide.
        var prompt = TimelineJudge(sampleRate: 48000)
        let driverLate = Self.run(
            [
                Cycle(counter: 0, microseconds: 1_000_000, cycleStart: 999_900),
                Cycle(counter: 256, microseconds: 1_005_333, cycleStart: 1_005_233),
                Cycle(counter: 512 + 1024, microseconds: 1_010_666, driverStamp: 21_400, cycleStart: 1_010_566),
                Cycle(counter: 512 + 1024 + 256, microseconds: 1_015_999, driverStamp: 21_400, cycleStart: 1_015_899),
                Cycle(counter: 512 + 1024 + 512, microseconds: 1_021_332, driverStamp: 21_400, cycleStart: 1_021_232),
            ], judge: &prompt)
        #expect(driverLate.graphFrames == 1024 && driverLate.missedFrames == 0)
    }

    /// jackd2 asynchronous under load, micmon stopped 2 s (CI): the dummy driver overran once
    /// meanwhile (its stamp moved by about a period), but its counter does not jump for that, so
    /// counter and cycle clock ran on together: every frame of the excess is micmon's, silence in
    /// place. Before, one period of it was a "server gap" with nothing written, the take a period
    /// short of the source (its frame after the silence 256 past the one the silence stands for).
    @Test("a driver stamp that moved while the counter kept with the server's clock makes nothing graph-wide")
    func stampWithoutAJumpIsOwnLoss() {
        var judge = TimelineJudge(sampleRate: 48000)
        let excess: UInt32 = 95_744
        // The stopped client is woken on time for the current cycle after its stop.
        let cycles = [
            Cycle(counter: 0, microseconds: 1_000_100, cycleStart: 1_000_000),
            Cycle(counter: 256, microseconds: 1_005_433, cycleStart: 1_005_333),
            Cycle(counter: 512 + excess, microseconds: 3_010_766, driverStamp: 3_100, cycleStart: 3_010_666),
            Cycle(counter: 768 + excess, microseconds: 3_016_099, driverStamp: 3_100, cycleStart: 3_015_999),
            Cycle(counter: 1024 + excess, microseconds: 3_021_432, driverStamp: 3_100, cycleStart: 3_021_332),
        ]
        let total = Self.run(cycles, judge: &judge)
        #expect(judge.graphShare(of: UInt64(excess), driverStamp: 3_100, frames: 256) == 256)
        #expect(total.graphFrames == 0 && total.missedFrames == UInt64(excess))
        // Unknown cycle starts bound nothing: the stamp's share stands, as before.
        var unknown = TimelineJudge(sampleRate: 48000)
        let unbounded = Self.run(
            cycles.map { Cycle(counter: $0.counter, microseconds: $0.microseconds, driverStamp: $0.driverStamp) },
            judge: &unknown)
        #expect(unbounded.graphFrames == 256 && unbounded.missedFrames == UInt64(excess) - 256)
    }

    @Test("settling now (the session stops) makes a held excess a loss")
    func settleNowIsALoss() {
        var judge = TimelineJudge(sampleRate: 48000)
        _ = Self.run([Cycle(counter: 0), Cycle(counter: 256), Cycle(counter: 1024)], judge: &judge)
        let verdict = judge.settleNow()
        #expect(verdict.missedFrames == 512 && verdict.releasesHold && !judge.isHolding)
    }

    @Test("a counter that goes back, or jumps further than the wall clock allows, is a reset, not a gap")
    func resets() {
        var judge = TimelineJudge(sampleRate: 48000)
        let back = Self.run(
            [Cycle(counter: 10000, microseconds: 1_000_000), Cycle(counter: 100, microseconds: 1_005_333)],
            judge: &judge)
        #expect(back.counterReset && back.missedFrames == 0)
        var other = TimelineJudge(sampleRate: 48000)
        // 10 s of frames in 5 ms of wall time.
        let far = Self.run(
            [Cycle(counter: 0, microseconds: 1_000_000), Cycle(counter: 480_256, microseconds: 1_005_333)],
            judge: &other)
        #expect(far.counterReset && far.missedFrames == 0 && !other.isHolding)
    }

    @Test("xrun notifications within four periods are one event; a later one starts another")
    func xrunsCoalesce() {
        var coalescer = XrunCoalescer()
        let period: UInt64 = 5333
        // jackd2 notifies once per late client: 8 at 1.635 s, then one a second later.
        let times: [UInt64] = [1_635_000, 1_635_010, 1_635_020, 1_635_100, 1_635_900, 1_636_500, 1_637_000, 1_637_400]
        let events = times.filter { coalescer.note(atMicroseconds: $0, periodMicroseconds: period) }
        #expect(events == [1_635_000])
        let later = coalescer.note(atMicroseconds: 2_635_000, periodMicroseconds: period)
        let close = coalescer.note(atMicroseconds: 2_636_000, periodMicroseconds: period)
        // More than four periods apart are two events.
        let apart = coalescer.note(atMicroseconds: 2_636_000 + 4 * period + 1, periodMicroseconds: period)
        #expect(later && !close && apart)
        // A client asleep for four periods: notified a period apart, then after a cycle without a
        // notification (10 ms after the first, as measured on an async jackd2).
        let burst: [UInt64] = [3_000_000, 3_000_000 + period + 600, 3_000_000 + 3 * period + 400]
        #expect(burst.filter { coalescer.note(atMicroseconds: $0, periodMicroseconds: period) } == [3_000_000])
    }
}
