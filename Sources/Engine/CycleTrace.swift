// Test-only: a record of what the capture glue saw in each cycle (`MICMON_TEST_CYCLE_TRACE=PATH`),
// for tracing a timeline fault against a witness recorded beside micmon (docs/timeline.md). The
// realtime thread fills entries prepared before activation and stops when they are full; the main
// thread writes them out after the stop handshake. Never set otherwise.

import Realtime

/// One cycle as the capture glue saw it. Plain values.
struct CycleTraceEntry {
    /// When the callback was entered and when it left (JACK µs), and when the cycle began.
    var entered: UInt64 = 0
    var left: UInt64 = 0
    var cycleStart: UInt64 = 0
    /// The frame counter read first, and the one the kernel was given (on PipeWire re-read
    /// after the port buffers).
    var counterAtEntry: UInt32 = 0
    var counterGiven: UInt32 = 0
    var frames: UInt32 = 0
    /// Input 0's buffer (its address) and whether it was the port's idle buffer.
    var buffer: UInt = 0
    var isIdle = false
    /// Input 0's first and last samples.
    var firstSample: Float = 0
    var lastSample: Float = 0
    /// The take's frames and the frames counted missed after the cycle.
    var framesTaken: UInt64 = 0
    var framesMissed: UInt64 = 0
    /// The counter read again before and after the copy (off PipeWire), and the driver's
    /// lateness stamp (µs).
    var counterBeforeCopy: UInt32 = 0
    var counterAfterCopy: UInt32 = 0
    var driverStamp: Float = 0
    /// After the cycle: the frames held uncommitted, the frames pending in the judge, and whether
    /// a later excess's place is known.
    var heldFrames: UInt32 = 0
    var pendingFrames: UInt32 = 0
    var laterExcessIsKnown = true
}

/// The entries and how many are filled. Realtime thread while the client runs; main thread after
/// the stop handshake.
struct CycleTrace {
    let entries: UnsafeMutablePointer<CycleTraceEntry>
    let capacity: Int
    var count = 0

    /// Notes one cycle; nothing once full. Realtime thread.
    @_noLocks @_noAllocation
    mutating func note(_ entry: CycleTraceEntry) {
        guard count < capacity else { return }
        entries[count] = entry
        count += 1
    }

    /// The entries as text, a line each (a header first). Main thread, after the stop handshake.
    func lines() -> [String] {
        var lines = [
            "entered_us left_us cycle_start_us counter_at_entry counter_given frames buffer idle first last taken missed"
                + " before_copy after_copy stamp held pending later_known"
        ]
        for index in 0 ..< count {
            let e = entries[index]
            lines.append(
                "\(e.entered) \(e.left) \(e.cycleStart) \(e.counterAtEntry) \(e.counterGiven) \(e.frames) "
                    + "\(String(e.buffer, radix: 16)) \(e.isIdle ? 1 : 0) \(e.firstSample) \(e.lastSample) "
                    + "\(e.framesTaken) \(e.framesMissed) \(e.counterBeforeCopy) \(e.counterAfterCopy) "
                    + "\(e.driverStamp) \(e.heldFrames) \(e.pendingFrames) \(e.laterExcessIsKnown ? 1 : 0)")
        }
        return lines
    }
}

extension CaptureKernel {
    /// Notes this cycle in `trace` (the glue calls it last, with what it read). Realtime thread.
    @_noLocks @_noAllocation
    func noteCycle(
        in trace: UnsafeMutablePointer<CycleTrace>, stamp: CycleStamp, left: UInt64, counterGiven: UInt32,
        counters read: (beforeCopy: UInt32, afterCopy: UInt32), driverStamp: Float, frameCount: UInt32
    ) {
        guard channelCount > 0 else { return }
        // SAFETY: `inputs` holds one entry per channel, each `frameCount` samples long this cycle.
        let buffer = inputs[0]
        var entry = CycleTraceEntry()
        entry.entered = stamp.entered
        entry.left = left
        entry.cycleStart = stamp.startUsecs
        entry.counterAtEntry = stamp.startFrame
        entry.counterGiven = counterGiven
        entry.frames = frameCount
        entry.buffer = UInt(bitPattern: buffer)
        // SAFETY: `idleInputs` holds one entry per channel.
        entry.isIdle = idleInputs.map { $0[0] == buffer } ?? false
        entry.firstSample = frameCount > 0 ? buffer[0] : 0
        entry.lastSample = frameCount > 0 ? buffer[Int(frameCount) - 1] : 0
        entry.framesTaken = framesTaken
        entry.framesMissed = counters.pointee.framesMissed.load(ordering: .relaxed)
        entry.counterBeforeCopy = read.beforeCopy
        entry.counterAfterCopy = read.afterCopy
        entry.driverStamp = driverStamp
        entry.heldFrames = UInt32(truncatingIfNeeded: heldFrames)
        entry.pendingFrames = UInt32(truncatingIfNeeded: timeline.pendingFrames)
        entry.laterExcessIsKnown = laterExcessIsKnown
        trace.pointee.note(entry)
    }
}
