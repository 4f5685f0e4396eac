import DSP
import Jack

/// A JACK client that plays a built-in two-channel signal on its outputs `out_1`, `out_2`: the
/// two-mic demo voice (`DemoVoiceSource`: primary mic, reference mic) for `micmon demo`, or the
/// `ReferenceSignal` for soak runs and benchmarks, counted from its first cycle. Main thread.
public final class DemoSource {
    public enum Signal: Sendable {
        case demoVoice(seed: UInt64)
        case reference
    }

    public let client: JackClient
    /// Full names of the two outputs, primary first.
    public let outputPorts: [String]
    private let state: UnsafeMutablePointer<DemoSourceState>
    private let trace: UnsafeMutablePointer<SourceCycle>?
    private let traceCapacity: Int

    /// With `traceCapacity` > 0 the source notes its first `traceCapacity` cycles (see
    /// `SourceCycle`) and the times of the xruns it is told about, for the soak's diagnosis.
    public init(serverName: String, clientName: String = "micmon-demo-voice", signal: Signal = .demoVoice(seed: 1),
                traceCapacity: Int = 0) throws(JackError) {
        client = try JackClient(name: clientName, serverName: serverName)
        let primary = try client.registerPort(name: "out_1", direction: .output)
        let reference = try client.registerPort(name: "out_2", direction: .output)
        outputPorts = [primary.fullName, reference.fullName]
        state = .allocate(capacity: 1)
        self.traceCapacity = max(0, traceCapacity)
        if traceCapacity > 0 {
            let memory = UnsafeMutablePointer<SourceCycle>.allocate(capacity: traceCapacity)
            // Touched now, so the realtime thread never faults a fresh page in.
            memory.initialize(repeating: SourceCycle(), count: traceCapacity)
            trace = memory
        } else {
            trace = nil
        }
        let seed: UInt64
        if case .demoVoice(let chosen) = signal { seed = chosen } else { seed = 1 }
        var isReference = false
        if case .reference = signal { isReference = true }
        state.initialize(to: DemoSourceState(
            primary: primary.handle, reference: reference.handle,
            voice: DemoVoiceSource(sampleRate: Double(client.sampleRate), seed: seed),
            playsReference: isReference, frame: 0, client: client.handle,
            trace: trace, traceCapacity: self.traceCapacity, traceCount: 0, xruns: 0))
        try client.setProcessCallback(demoProcess, context: UnsafeMutableRawPointer(state))
        try client.setXrunCallback(demoXrun, context: UnsafeMutableRawPointer(state))
        try client.activate()
    }

    /// Stops and closes the client. Safe to call twice.
    public func stop() {
        client.close()
    }

    /// The cycles noted so far (with `traceCapacity`), and the xruns the server reported to
    /// this client. Main thread, after `stop()` (the callbacks no longer run then).
    public func tracedCycles() -> [SourceCycle] {
        guard let trace else { return [] }
        return Array(UnsafeBufferPointer(start: trace, count: min(state.pointee.traceCount, traceCapacity)))
    }

    /// Cycles the source ran (whether traced or not). Main thread, after `stop()`.
    public var cyclesRun: Int { state.pointee.traceCount }
    /// Xruns the server reported to this client. Main thread, after `stop()`.
    public var xruns: Int { state.pointee.xruns }

    deinit {
        client.close()
        state.deinitialize(count: 1)
        state.deallocate()
        trace?.deallocate()
    }
}

/// One cycle of the source as it saw it: the server's frame counter at the cycle start
/// (`jack_get_cycle_times`), the frames since then when the callback began
/// (`jack_frames_since_cycle_start`), the cycle start and the callback's start in JACK µs. The
/// source's own frame index for cycle k is k × period (it counts the frames it rendered).
public struct SourceCycle: BitwiseCopyable, Sendable {
    public var cycleStartFrame: UInt32 = 0
    public var framesSinceCycleStart: UInt32 = 0
    public var cycleStartUsecs: UInt64 = 0
    public var enteredUsecs: UInt64 = 0
    public init(cycleStartFrame: UInt32 = 0, framesSinceCycleStart: UInt32 = 0, cycleStartUsecs: UInt64 = 0, enteredUsecs: UInt64 = 0) {
        self.cycleStartFrame = cycleStartFrame
        self.framesSinceCycleStart = framesSinceCycleStart
        self.cycleStartUsecs = cycleStartUsecs
        self.enteredUsecs = enteredUsecs
    }
}

struct DemoSourceState {
    let primary: OpaquePointer
    let reference: OpaquePointer
    var voice: DemoVoiceSource
    let playsReference: Bool
    var frame: UInt64
    let client: OpaquePointer
    let trace: UnsafeMutablePointer<SourceCycle>?
    let traceCapacity: Int
    /// Cycles run (and noted while below `traceCapacity`). Realtime thread.
    var traceCount: Int
    /// Xruns reported (JACK's notification thread).
    var xruns: Int
}

/// The demo source's process callback. Realtime thread.
nonisolated func demoProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: DemoSource passes its state and frees it only after closing the client.
    let state = context.assumingMemoryBound(to: DemoSourceState.self)
    if let trace = state.pointee.trace, state.pointee.traceCount < state.pointee.traceCapacity {
        let entered = JackClock.now()
        let cycle = JackClock.cycle(state.pointee.client)
        // SAFETY: traceCount < traceCapacity, the buffer's size; only this thread writes it.
        trace[state.pointee.traceCount] = SourceCycle(
            cycleStartFrame: cycle.startFrame, framesSinceCycleStart: JackClock.framesSinceCycleStart(state.pointee.client),
            cycleStartUsecs: cycle.startUsecs, enteredUsecs: entered)
    }
    state.pointee.traceCount &+= 1
    let primary = JackPortBuffer.samples(state.pointee.primary, frames: frameCount)
    let reference = JackPortBuffer.samples(state.pointee.reference, frames: frameCount)
    if state.pointee.playsReference {
        ReferenceSignal.render(into: primary, reference, count: Int(frameCount), startFrame: state.pointee.frame)
        state.pointee.frame &+= UInt64(frameCount)
    } else {
        state.pointee.voice.render(primary: primary, reference: reference, count: Int(frameCount))
    }
    return 0
}

/// The source's xrun notification: counts it. JACK's notification thread.
nonisolated func demoXrun(_ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: as in demoProcess; the count is read only after the client is closed.
    context.assumingMemoryBound(to: DemoSourceState.self).pointee.xruns &+= 1
    return 0
}
