import Jack
import Platform

// The C callbacks of a latency session. Each is a named, nonisolated function (a closure literal
// in main.swift would be inferred @MainActor and trap on JACK's thread). `context` is the
// session's `LatencyKernel` pointer, prepared before activation.

/// The process callback: the only glue that calls C (port buffers, clock), then the checked
/// kernel. Realtime thread.
nonisolated func latencyProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    let entered = JackClock.now()
    RealtimeHooks.enter()
    // SAFETY: the session passed a pointer to its initialized LatencyKernel and frees it only
    // after the client is closed.
    let kernel = context.assumingMemoryBound(to: LatencyKernel.self)
    let cycle = JackClock.cycle(kernel.pointee.client)
    kernel.pointee.input = UnsafePointer(JackPortBuffer.samples(kernel.pointee.inputPort, frames: frameCount))
    kernel.pointee.output = JackPortBuffer.samples(kernel.pointee.outputPort, frames: frameCount)
    // A server that cannot tell the cycle start: the callback's entry stands in for it.
    kernel.pointee.process(frameCount: Int(frameCount), cycleStartUsecs: cycle.startUsecs > 0 ? cycle.startUsecs : entered)
    let left = JackClock.now()
    kernel.pointee.recordTiming(cycleStart: cycle.startUsecs, periodUsecs: cycle.periodUsecs, entered: entered, left: left, frames: frameCount)
    RealtimeHooks.exit()
    return 0
}

/// Xrun notification: counts it and notes when. JACK's notification thread (the only producer
/// of the xrun-time ring).
nonisolated func latencyXrun(_ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: as in latencyProcess; the counters and the ring outlive the client.
    let kernel = context.assumingMemoryBound(to: LatencyKernel.self)
    kernel.pointee.counters.pointee.xruns.add(1, ordering: .relaxed)
    if let slot = kernel.pointee.xrunTimes.writableSlices(count: 1) {
        slot.first[0] = JackClock.now()
        kernel.pointee.xrunTimes.commitWrite(count: 1)
    } else {
        kernel.pointee.counters.pointee.xrunTimesMissed.add(1, ordering: .relaxed)
    }
    return 0
}

/// Period-size change: nothing to reallocate (the rings are sized in seconds). JACK's
/// notification thread.
nonisolated func latencyBufferSize(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: as in latencyXrun.
    let kernel = context.assumingMemoryBound(to: LatencyKernel.self)
    kernel.pointee.counters.pointee.periodFrames.store(frameCount, ordering: .relaxed)
    return 0
}

/// The server went away. May run on any thread, the realtime one included: only a flag.
nonisolated func latencyShutdown(_ status: UInt32, _ reason: UnsafePointer<CChar>?, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    // SAFETY: as in latencyXrun.
    let kernel = context.assumingMemoryBound(to: LatencyKernel.self)
    kernel.pointee.counters.pointee.serverIsGone.store(true, ordering: .releasing)
}

/// First thing on JACK's process thread: denormals flush to zero. Realtime thread.
nonisolated func latencyThreadInit(_ context: UnsafeMutableRawPointer?) {
    ThreadEnvironment.enableFlushToZero()
}
