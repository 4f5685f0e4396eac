// The process glue of a playback session: the only playback code that calls C (the two output
// buffers, and the clock through `SessionLink.enterCycle`/`leaveCycle`), around the checked
// `PlaybackKernel`. Named and nonisolated (see CaptureCallbacks.swift); `context` is the
// session's `PlaybackKernel`. Notifications are the session core's (SessionCallbacks.swift).
// Realtime thread.

import Jack
import Platform

/// The process callback: fetches the two output buffers, then the checked kernel. Realtime thread.
nonisolated func playbackProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: the session passes its initialized PlaybackKernel and frees it after closing.
    let kernel = context.assumingMemoryBound(to: PlaybackKernel.self)
    let stamp = kernel.pointee.link.enterCycle()
    kernel.pointee.outputs[0] = JackPortBuffer.samples(kernel.pointee.ports[0], frames: frameCount)
    kernel.pointee.outputs[1] = JackPortBuffer.samples(kernel.pointee.ports[1], frames: frameCount)
    kernel.pointee.process(
        frameCount: Int(frameCount), cycleStartFrame: stamp.startFrame, knowsCycleFrame: stamp.startUsecs > 0,
        cycleMicroseconds: stamp.entered, driverStamp: JackClock.driverLateness(kernel.pointee.link.client),
        cycleStartMicroseconds: stamp.startUsecs,
        periodMicroseconds: stamp.periodMicroseconds)
    kernel.pointee.link.leaveCycle(stamp, frameCount: frameCount)
    return 0
}
