import DSP
import Jack
import Platform

/// A bare client beside micmon for the soaks (MicmonSoak's diagnosis, micmon-bench's soak): one
/// input fed by the source's first output, like micmon's in_1, that notes for each cycle what the server said (frame counter,
/// frames since the cycle start, when) and which source frame it found at the start of its
/// buffer. It shows what a downstream client of the source is given around an xrun, which
/// micmon's take alone cannot (the take has no per-cycle timestamps). Main thread, except the
/// callbacks.
public final class Witness {
    public struct Cycle: BitwiseCopyable {
        public var cycleStartFrame: UInt32 = 0
        public var framesSinceCycleStart: UInt32 = 0
        public var enteredUsecs: UInt64 = 0
        /// The low 16 bits of the source frame in the first sample of the buffer (the ramp).
        public var firstSourceFrameLowBits: UInt32 = 0
        /// Xruns reported to this client so far (notification thread), when the cycle ran.
        public var xrunsSoFar: UInt32 = 0
    }

    struct State {
        let client: OpaquePointer
        let port: OpaquePointer
        let cycles: UnsafeMutablePointer<Cycle>
        let capacity: Int
        var count = 0
        var xruns: UInt32 = 0
    }

    public let client: JackClient
    private let state: UnsafeMutablePointer<State>

    public init(serverName: String, source: String, capacity: Int) throws {
        client = try JackClient(name: "soak-witness", serverName: serverName)
        let port = try client.registerPort(name: "in_1", direction: .input)
        let cycles = UnsafeMutablePointer<Cycle>.allocate(capacity: capacity)
        cycles.initialize(repeating: Cycle(), count: capacity)
        state = .allocate(capacity: 1)
        state.initialize(to: State(client: client.handle, port: port.handle, cycles: cycles, capacity: capacity))
        try client.setProcessCallback(witnessProcess, context: UnsafeMutableRawPointer(state))
        try client.setXrunCallback(witnessXrun, context: UnsafeMutableRawPointer(state))
        try client.activate()
        try client.connect(source: source, destination: port.fullName)
    }

    /// The cycles noted, after `stop()`.
    public func cycles() -> [Cycle] {
        Array(UnsafeBufferPointer(start: state.pointee.cycles, count: min(state.pointee.count, state.pointee.capacity)))
    }

    public var xruns: Int { Int(state.pointee.xruns) }

    public func stop() { client.close() }

    deinit {
        client.close()
        state.pointee.cycles.deallocate()
        state.deallocate()
    }
}

/// Realtime thread.
private func witnessProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: the witness frees its state only after closing the client.
    let state = context.assumingMemoryBound(to: Witness.State.self)
    guard state.pointee.count < state.pointee.capacity else { return 0 }
    let entered = JackClock.now()
    let cycle = JackClock.cycle(state.pointee.client)
    let since = JackClock.framesSinceCycleStart(state.pointee.client)
    let buffer = JackPortBuffer.samples(state.pointee.port, frames: frameCount)
    // SAFETY: count < capacity; only this thread writes the trace.
    state.pointee.cycles[state.pointee.count] = Witness.Cycle(
        cycleStartFrame: cycle.startFrame, framesSinceCycleStart: since, enteredUsecs: entered,
        firstSourceFrameLowBits: UInt32(ReferenceSignal.frameLowBits(rampSample: buffer[0])),
        xrunsSoFar: state.pointee.xruns)
    state.pointee.count += 1
    return 0
}

/// Notification thread.
private func witnessXrun(_ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: as in witnessProcess.
    context.assumingMemoryBound(to: Witness.State.self).pointee.xruns &+= 1
    return 0
}
