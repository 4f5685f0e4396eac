// The process glue of the demo source: the only demo-source code that calls C (the two output
// buffers, the clock through `SessionLink.enterCycle`/`leaveCycle`, and the frame position for
// the trace), around the checked `DemoSourceKernel`. Named and nonisolated (see
// CaptureCallbacks.swift); `context` is the source's `DemoSourceKernel`. Notifications are the
// session core's (SessionCallbacks.swift). Realtime thread.

import Jack

/// The demo source's process callback. Realtime thread.
nonisolated func demoSourceProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: DemoSource passes its initialized kernel and frees it only after closing the client.
    let kernel = context.assumingMemoryBound(to: DemoSourceKernel.self)
    let stamp = kernel.pointee.link.enterCycle()
    var noted = SourceCycle()
    if kernel.pointee.isTracing {
        let sinceStart = JackClock.framesSinceCycleStart(kernel.pointee.link.client)
        noted = SourceCycle(
            cycleStartFrame: stamp.startFrame, framesSinceCycleStart: sinceStart,
            cycleStartUsecs: stamp.startUsecs, enteredUsecs: stamp.entered)
    }
    kernel.pointee.primary = JackPortBuffer.samples(kernel.pointee.primaryPort, frames: frameCount)
    kernel.pointee.reference = JackPortBuffer.samples(kernel.pointee.referencePort, frames: frameCount)
    kernel.pointee.process(frameCount: Int(frameCount), noted: noted)
    kernel.pointee.link.leaveCycle(stamp, frameCount: frameCount)
    return 0
}
