// The process glue of a capture session: the only capture code that calls C (port buffers, and
// the clock through `SessionLink.enterCycle`/`leaveCycle`), around the checked `CaptureKernel`.
// A named, nonisolated function (a closure literal in main.swift would be inferred @MainActor
// and trap on JACK's thread); `context` is the session's `CaptureKernel`, prepared before
// activation. Notifications are the session core's (SessionCallbacks.swift). Realtime thread.

import Jack
import Platform

/// The process callback: port buffers in, the kernel, monitor buffers out. Realtime thread.
nonisolated func captureProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: the session passed a pointer to its initialized CaptureKernel and frees it only
    // after the client is closed.
    let kernel = context.assumingMemoryBound(to: CaptureKernel.self)
    let stamp = kernel.pointee.link.enterCycle()
    var channel = 0
    while channel < kernel.pointee.channelCount {
        // SAFETY: `ports` and `inputs` hold one entry per channel.
        let buffer = JackPortBuffer.samples(kernel.pointee.ports[channel], frames: frameCount)
        kernel.pointee.inputs[channel] = UnsafePointer(buffer)
        channel += 1
    }
    // The frame counter once more, after the buffers and before the kernel copies them. On
    // PipeWire it is the cycle's position: its libjack reads it live and an input holds its
    // peer's latest period, so a thread held up between the two reads would otherwise hold the
    // next cycle's data under this cycle's counter, with nothing to tell; read last, the counter
    // is never behind the data. Elsewhere it tells whether a later cycle began before the copy
    // (`finishCycle`, below): only then can the source have written its next period into these
    // buffers before they were copied.
    let counted = JackClock.cycle(kernel.pointee.link.client)
    var cycleStartFrame = stamp.startFrame
    if kernel.pointee.idleInputs != nil && counted.startUsecs > 0 { cycleStartFrame = counted.startFrame }
    // The take (and the noise suppressor) first, so that monitoring can play this cycle's clean channel.
    let driverStamp = JackClock.driverLateness(kernel.pointee.link.client)
    kernel.pointee.process(
        frameCount: Int(frameCount), cycleStartFrame: cycleStartFrame,
        knowsCycleFrame: stamp.startUsecs > 0,
        cycleMicroseconds: stamp.entered, driverStamp: driverStamp,
        cycleStartMicroseconds: stamp.startUsecs > 0 ? stamp.startUsecs : stamp.entered,
        defersCommit: kernel.pointee.idleInputs == nil)
    // Off PipeWire, the counter once more after the copy: commit the period, or hold it when a
    // later cycle may have written into the buffers before the copy (until the next cycle tells).
    var counterAfterCopy = counted.startFrame
    if kernel.pointee.stagedFrames > 0 || kernel.pointee.timeline.isHolding {
        let afterCopy = JackClock.cycle(kernel.pointee.link.client)
        counterAfterCopy = afterCopy.startFrame
        kernel.pointee.finishCycle(
            counterBeforeCopy: counted.startFrame, counterAfterCopy: afterCopy.startFrame,
            knowsCounter: counted.startUsecs > 0 && afterCopy.startUsecs > 0)
    }
    if let monitor = kernel.pointee.monitor {
        var output = 0
        while output < monitor.count {
            // SAFETY: the route holds `count` ports and output slots.
            monitor.outputs[output] = JackPortBuffer.samples(monitor.ports[output], frames: frameCount)
            output += 1
        }
        kernel.pointee.monitorPass(frameCount: Int(frameCount))
    }
    if kernel.pointee.plantsAllocation { plantedAllocation() }
    if let trace = kernel.pointee.trace {
        kernel.pointee.noteCycle(
            in: trace, stamp: stamp, left: JackClock.now(fromSystemClock: kernel.pointee.link.readsSystemClock),
            counterGiven: cycleStartFrame, counters: (counted.startFrame, counterAfterCopy), driverStamp: driverStamp,
            frameCount: frameCount)
    }
    kernel.pointee.link.leaveCycle(stamp, frameCount: frameCount)
    return 0
}

/// The deliberate realtime violation behind `CaptureKernel.plantsAllocation`: a heap allocation
/// inside the process callback, which RealtimeSanitizer must report. Test-only.
@inline(never)
nonisolated func plantedAllocation() {
    let block = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
    block.deallocate()
}
