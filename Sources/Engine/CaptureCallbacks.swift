import Jack
import Platform

// The C callbacks of a capture session. Each is a named, nonisolated function (a closure literal
// in main.swift would be inferred @MainActor and trap on JACK's thread). `context` is the
// session's `CaptureKernel` pointer, prepared before activation.

/// The process callback: the only glue that calls C (port buffers), then the checked kernel.
/// Realtime thread.
nonisolated func captureProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: the session passed a pointer to its initialized CaptureKernel and frees it only
    // after the client is deactivated or closed.
    let kernel = context.assumingMemoryBound(to: CaptureKernel.self)
    let readsSystemClock = kernel.pointee.readsSystemClock
    let entered = JackClock.now(fromSystemClock: readsSystemClock)
    RealtimeHooks.enter()
    let cycle = JackClock.cycle(kernel.pointee.client)
    var channel = 0
    while channel < kernel.pointee.channelCount {
        // SAFETY: `ports` and `inputs` hold one entry per channel.
        kernel.pointee.inputs[channel] = UnsafePointer(JackPortBuffer.samples(kernel.pointee.ports[channel], frames: frameCount))
        channel += 1
    }
    // The take (and the noise suppressor) first, so that monitoring can play this cycle's clean channel.
    kernel.pointee.process(frameCount: Int(frameCount), cycleStartFrame: cycle.startFrame, knowsCycleFrame: cycle.startUsecs > 0)
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
    let left = JackClock.now(fromSystemClock: readsSystemClock)
    kernel.pointee.recordTiming(cycleStart: cycle.startUsecs, periodUsecs: cycle.periodUsecs, entered: entered, left: left, frames: frameCount)
    RealtimeHooks.exit()
    return 0
}

/// The deliberate realtime violation behind `CaptureKernel.plantsAllocation`: a heap allocation
/// inside the process callback, which RealtimeSanitizer must report. Test-only.
@inline(never)
nonisolated func plantedAllocation() {
    let block = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
    block.deallocate()
}

/// Xrun notification: counts it. JACK's notification thread.
nonisolated func captureXrun(_ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: as in captureProcess; counters outlive the client.
    let kernel = context.assumingMemoryBound(to: CaptureKernel.self)
    kernel.pointee.counters.pointee.xruns.add(1, ordering: .relaxed)
    return 0
}

/// Period-size change: nothing to reallocate (the kernel keeps no per-period buffers and the ring
/// is sized in seconds); records the new size. JACK's notification thread, never concurrent with
/// a process cycle.
nonisolated func captureBufferSize(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: as in captureXrun.
    let kernel = context.assumingMemoryBound(to: CaptureKernel.self)
    kernel.pointee.counters.pointee.periodFrames.store(frameCount, ordering: .relaxed)
    return 0
}

/// Sample-rate change: a take cannot change rate, so the session ends. Notification thread.
nonisolated func captureSampleRate(_ rate: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: as in captureXrun.
    let kernel = context.assumingMemoryBound(to: CaptureKernel.self)
    if UInt32(kernel.pointee.meterCoefficients.sampleRate) != rate {
        kernel.pointee.counters.pointee.sampleRateChanged.store(true, ordering: .releasing)
    }
    return 0
}

/// The server went away. May run on any thread, the realtime one included: only a flag.
nonisolated func captureShutdown(_ status: UInt32, _ reason: UnsafePointer<CChar>?, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    // SAFETY: as in captureXrun.
    let kernel = context.assumingMemoryBound(to: CaptureKernel.self)
    kernel.pointee.counters.pointee.serverIsGone.store(true, ordering: .releasing)
}

/// First thing on JACK's process thread: denormals flush to zero. Realtime thread.
nonisolated func captureThreadInit(_ context: UnsafeMutableRawPointer?) {
    ThreadEnvironment.enableFlushToZero()
}

/// A port appeared or went away somewhere in the graph: queue the time for the main thread's
/// `RouteWatch`. JACK's notification thread; never blocks (a full ring drops the note, and the
/// main thread looks once a second anyway).
nonisolated func capturePortRegistration(_ port: UInt32, _ registered: Int32, _ context: UnsafeMutableRawPointer?) {
    noteRouteChange(context)
}

/// A connection was made or broken somewhere in the graph. JACK's notification thread.
nonisolated func capturePortConnect(_ a: UInt32, _ b: UInt32, _ connected: Int32, _ context: UnsafeMutableRawPointer?) {
    noteRouteChange(context)
}

nonisolated func noteRouteChange(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    // SAFETY: as in captureXrun; the ring outlives the client.
    let changes = context.assumingMemoryBound(to: CaptureKernel.self).pointee.routeChanges
    if let slot = changes.writableSlices(count: 1) {
        slot.first[0] = JackClock.now()
        changes.commitWrite(count: 1)
    }
}
