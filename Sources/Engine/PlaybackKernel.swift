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
    var framesPlayed: UInt64 = 0
    /// Non-finite samples replaced by 0 so far (see `PlaybackCounters.nonFiniteReplaced`).
    var nonFiniteReplaced: UInt64 = 0
    /// Whether playback has begun (see `PlaybackCounters.isArmed`). Realtime thread only.
    var isPlaying = false

    /// Fills both outputs for one cycle. Realtime thread.
    @_noLocks @_noAllocation
    mutating func process(frameCount: Int) {
        let left = outputs[0]
        let right = outputs[1]
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
        } else if !counters.pointee.isPaused.load(ordering: .relaxed) {
            let available = frames.availableToRead() / 2
            let count = available < frameCount ? available : frameCount
            if count > 0, let slices = frames.readableSlices(count: count * 2) {
                var replaced: UInt64 = 0
                written = deinterleave(slices.first, into: left, right, at: 0, replaced: &replaced)
                written += deinterleave(slices.second, into: left, right, at: written, replaced: &replaced)
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
        }
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
