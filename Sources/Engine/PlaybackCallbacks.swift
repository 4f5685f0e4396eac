import Jack

// The C callbacks of a playback session (named, nonisolated; see CaptureCallbacks.swift).

/// The process callback: fetches the two output buffers (the only C calls), then the checked
/// kernel. Realtime thread.
nonisolated func playbackProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    RealtimeHooks.enter()
    // SAFETY: the session passes its initialized PlaybackKernel and frees it after closing.
    let kernel = context.assumingMemoryBound(to: PlaybackKernel.self)
    kernel.pointee.outputs[0] = JackPortBuffer.samples(kernel.pointee.ports[0], frames: frameCount)
    kernel.pointee.outputs[1] = JackPortBuffer.samples(kernel.pointee.ports[1], frames: frameCount)
    kernel.pointee.process(frameCount: Int(frameCount))
    RealtimeHooks.exit()
    return 0
}

/// Xrun notification. JACK's notification thread.
nonisolated func playbackXrun(_ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: as in playbackProcess; the counters outlive the client.
    context.assumingMemoryBound(to: PlaybackKernel.self).pointee.counters.pointee.xruns.add(1, ordering: .relaxed)
    return 0
}

/// The server went away. Any thread: only a flag.
nonisolated func playbackShutdown(_ status: UInt32, _ reason: UnsafePointer<CChar>?, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    // SAFETY: as in playbackProcess.
    context.assumingMemoryBound(to: PlaybackKernel.self).pointee.counters.pointee.serverIsGone.store(true, ordering: .releasing)
}
