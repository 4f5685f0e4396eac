// The capture kernel's held periods as copied into the ring: where a period lies among the
// frames written but not yet committed, whether the last held copy was torn (taken while the
// source wrote its next period into the same buffers, across inputs or within one), and its
// rewrite. Realtime thread only.

import Realtime

extension CaptureKernel {
    /// The slots of `frames` interleaved frames of `stride` channels that start `offset` frames
    /// into the two pieces of a ring's free space (`first` then `second`, split on a frame
    /// boundary): the part in the first piece, then the rest in the second.
    @_noLocks @_noAllocation
    static func periodSlots(
        first: UnsafeMutableBufferPointer<Float>, second: UnsafeMutableBufferPointer<Float>, offset: Int, frames: Int,
        stride: Int
    ) -> (first: UnsafeMutableBufferPointer<Float>, second: UnsafeMutableBufferPointer<Float>) {
        let framesInFirst = stride == 2 ? first.count >> 1 : first.count / stride
        let inFirst = offset >= framesInFirst ? 0 : (frames < framesInFirst - offset ? frames : framesInFirst - offset)
        var slotsFirst = UnsafeMutableBufferPointer<Float>(start: nil, count: 0)
        var slotsSecond = UnsafeMutableBufferPointer<Float>(start: nil, count: 0)
        if inFirst > 0, let base = first.baseAddress {
            // SAFETY: offset + inFirst frames fit in the first piece (inFirst is what is left of it).
            slotsFirst = UnsafeMutableBufferPointer(start: base + offset * stride, count: inFirst * stride)
        }
        if frames > inFirst, let base = second.baseAddress {
            let into = offset >= framesInFirst ? offset - framesInFirst : 0
            // SAFETY: the caller asked the ring for offset + frames frames; the rest of the
            // period starts `into` frames into the second piece.
            slotsSecond = UnsafeMutableBufferPointer(start: base + into * stride, count: (frames - inFirst) * stride)
        }
        return (slotsFirst, slotsSecond)
    }

    /// The slots of a copy of `frames` frames that starts `offset` frames into the frames written
    /// but not committed, or nil when the file does not hold the inputs or the ring has no such room.
    @_noLocks @_noAllocation
    func uncommittedSlots(offset: Int, frames: Int) -> (
        first: UnsafeMutableBufferPointer<Float>, second: UnsafeMutableBufferPointer<Float>
    )? {
        // (`recordsInputs`, spelled out: a debug build checks this file without seeing into that one.)
        guard recordSources == inputs, frames > 0, let samples,
            let slices = samples.writableSlices(count: (offset &+ frames) &* recordedChannelCount)
        else { return nil }
        return Self.periodSlots(
            first: slices.first, second: slices.second, offset: offset, frames: frames, stride: recordedChannelCount)
    }

    /// The last held period's slots (`lastHeldOffset`, `frames` frames), or nil when the held
    /// frames do not reach that far.
    @_noLocks @_noAllocation
    func lastHeldSlots(frames: Int) -> (
        first: UnsafeMutableBufferPointer<Float>, second: UnsafeMutableBufferPointer<Float>
    )? {
        guard heldFrames >= lastHeldOffset &+ frames else { return nil }
        return uncommittedSlots(offset: lastHeldOffset, frames: frames)
    }

    /// Whether the last held period's copy is this cycle's inputs on some inputs whose samples
    /// vary, and other samples on others: the copy was taken while the source wrote the period
    /// this cycle brings (a late cycle runs beside its source once the server has begun the next
    /// cycle), so it holds parts of two periods.
    @_noLocks @_noAllocation
    func lastHeldCopyIsTorn(frameCount: Int) -> Bool {
        guard let slots = lastHeldSlots(frames: frameCount) else { return false }
        return isTorn(slots, frameCount: frameCount)
    }

    /// The same of the period this cycle staged (at the start of the ring's unwritten slots,
    /// nothing held), against the inputs at the cycle's end: the counter moved on during the
    /// copy, and the source wrote its next period while the copy was taken.
    @_noLocks @_noAllocation
    func stagedCopyIsTorn(frames: Int) -> Bool {
        guard heldFrames == 0, let slots = uncommittedSlots(offset: 0, frames: frames) else { return false }
        return isTorn(slots, frameCount: frames)
    }

    /// Whether a copy of `frameCount` frames in `slots` was torn between the period it was taken
    /// from and the one the inputs hold now: it equals them on some inputs whose samples vary and
    /// differs on others, or, within one input, it equals them on a run of varying samples at
    /// the start or the end of the period and differs on the rest (the source wrote that input
    /// while it was copied). Samples that do not vary say nothing (silence, a clipped run), and a
    /// run within an input must be `tornRunMinimum` frames long: 8 equal samples of a varying
    /// signal at the same places of two periods do not come by chance.
    @_noLocks @_noAllocation
    func isTorn(
        _ slots: (first: UnsafeMutableBufferPointer<Float>, second: UnsafeMutableBufferPointer<Float>),
        frameCount: Int
    ) -> Bool {
        let stride = recordedChannelCount
        let framesInFirst = slots.first.count / stride
        let runMinimum = Self.tornRunMinimum(frameCount: frameCount)
        var sameChannels = 0
        var otherChannels = 0
        var channel = 0
        while channel < channelCount {
            // SAFETY: `inputs` holds one entry per channel, each with frameCount samples this cycle.
            let buffer = inputs[channel]
            let firstBits = buffer[0].bitPattern
            var varies = false
            // The run of equal samples that ends at this frame, whether its samples vary, and
            // the run the period starts with.
            var run = 0
            var runFirstBits: UInt32 = 0
            var runVaries = false
            var leadingRun = 0
            var leadingRunVaries = false
            var i = 0
            while i < frameCount {
                let bits = buffer[i].bitPattern
                varies = varies || bits != firstBits
                // SAFETY: the slots hold frameCount frames of `stride` samples, framesInFirst of
                // them in the first; channel < channelCount ≤ stride.
                let copied =
                    i < framesInFirst
                    ? slots.first[i &* stride &+ channel].bitPattern
                    : slots.second[(i &- framesInFirst) &* stride &+ channel].bitPattern
                if copied == bits {
                    if run == 0 {
                        runFirstBits = bits
                        runVaries = false
                    } else {
                        runVaries = runVaries || bits != runFirstBits
                    }
                    run &+= 1
                    if leadingRun == i {
                        leadingRun = run
                        leadingRunVaries = runVaries
                    }
                } else {
                    run = 0
                }
                i &+= 1
            }
            if run == frameCount {
                if varies { sameChannels &+= 1 }
            } else {
                otherChannels &+= 1
                if (run >= runMinimum && runVaries) || (leadingRun >= runMinimum && leadingRunVaries) { return true }
            }
            channel &+= 1
        }
        return sameChannels > 0 && otherChannels > 0
    }

    /// The shortest run of equal samples within one input that makes a copy torn: 8 frames, or
    /// half a period shorter than 16.
    @_noLocks @_noAllocation
    static func tornRunMinimum(frameCount: Int) -> Int {
        frameCount >= 16 ? 8 : max(frameCount >> 1, 2)
    }

    /// Writes this cycle's inputs over the last held period's copy (still uncommitted, so the
    /// writer has not seen it): a torn copy gives way to the whole period it was partly taken
    /// from.
    @_noLocks @_noAllocation
    func rewriteLastHeldPeriod(frameCount: Int) {
        guard let slots = lastHeldSlots(frames: frameCount) else { return }
        let stride = recordedChannelCount
        let inFirst = slots.first.count / stride
        Self.interleave(recordSources, channelCount: stride, into: slots.first, fromFrame: 0, frameCount: inFirst)
        Self.interleave(
            recordSources, channelCount: stride, into: slots.second, fromFrame: inFirst,
            frameCount: frameCount - inFirst)
    }
}
