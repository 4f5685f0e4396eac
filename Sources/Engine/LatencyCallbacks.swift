// The process glue of a latency session: the only latency code that calls C (port buffers, and
// the clock through `SessionLink.enterCycle`/`leaveCycle`), around the checked `LatencyKernel`.
// Named and nonisolated (see CaptureCallbacks.swift); `context` is the session's
// `LatencyKernel`. Notifications are the session core's (SessionCallbacks.swift). Realtime thread.

import Jack

/// The process callback: port buffers, then the checked kernel. Realtime thread.
nonisolated func latencyProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: the session passed a pointer to its initialized LatencyKernel and frees it only
    // after the client is closed.
    let kernel = context.assumingMemoryBound(to: LatencyKernel.self)
    let stamp = kernel.pointee.link.enterCycle()
    kernel.pointee.input = UnsafePointer(JackPortBuffer.samples(kernel.pointee.inputPort, frames: frameCount))
    kernel.pointee.output = JackPortBuffer.samples(kernel.pointee.outputPort, frames: frameCount)
    // A server that cannot tell the cycle start: the callback's entry stands in for it.
    let cycleStart = stamp.startUsecs > 0 ? stamp.startUsecs : stamp.entered
    kernel.pointee.process(
        frameCount: Int(frameCount), cycleStartUsecs: cycleStart, cycleStartFrame: stamp.startFrame,
        knowsCycleFrame: stamp.startUsecs > 0, enteredUsecs: stamp.entered,
        periodUsecs: stamp.periodMicroseconds)
    kernel.pointee.link.leaveCycle(stamp, frameCount: frameCount)
    return 0
}
