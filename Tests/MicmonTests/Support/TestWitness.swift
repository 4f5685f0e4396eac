import DSP
import Jack

/// A bare client beside micmon on the source's first output, as the soak's witness: for each
/// cycle it notes the server's frame counter and the low 16 bits of the source frame at the start
/// of its buffer (the ramp). It shows which source frames the graph delivered to a client other
/// than micmon. Main thread, except the process callback.
final class TestWitness {
    struct Cycle: BitwiseCopyable {
        var counter: UInt32 = 0
        var frames: UInt32 = 0
        var sourceLowBits: UInt32 = 0
    }

    struct State {
        let client: OpaquePointer
        let port: OpaquePointer
        let cycles: UnsafeMutablePointer<Cycle>
        let capacity: Int
        var count = 0
    }

    let client: JackClient
    private let state: UnsafeMutablePointer<State>

    init(serverName: String, source: String, capacity: Int = 1 << 16) throws {
        client = try JackClient(name: "micmon-test-witness", serverName: serverName)
        let port = try client.registerPort(name: "in_1", direction: .input)
        let cycles = UnsafeMutablePointer<Cycle>.allocate(capacity: capacity)
        cycles.initialize(repeating: Cycle(), count: capacity)
        state = .allocate(capacity: 1)
        state.initialize(to: State(client: client.handle, port: port.handle, cycles: cycles, capacity: capacity))
        try client.setProcessCallback(testWitnessProcess, context: UnsafeMutableRawPointer(state))
        try client.activate()
        try client.connect(source: source, destination: port.fullName)
    }

    /// The cycles noted (after `stop()`).
    func cycles() -> [Cycle] {
        Array(UnsafeBufferPointer(start: state.pointee.cycles, count: min(state.pointee.count, state.pointee.capacity)))
    }

    /// The runs of source frames the witness was never given, as absolute source frames
    /// (start, count), between its first and last cycle: its buffers' first frames unwrapped
    /// step by step (each step is taken as a signed 16-bit difference), anchored at the largest
    /// frame ≤ `anchor` with the first cycle's low bits. Cycles before the source was connected
    /// (silence reads as frame 32768) are skipped by starting where the steps become one period.
    func framesNotGiven(anchor: UInt64) -> [(start: UInt64, count: UInt64)] {
        let traced = cycles()
        guard
            let first = traced.indices.first(where: { index in
                index + 1 < traced.count
                    && (traced[index + 1].sourceLowBits &- traced[index].sourceLowBits) & 0xFFFF == traced[index].frames
            })
        else { return [] }
        let low = UInt64(traced[first].sourceLowBits)
        var previous = anchor >= low ? anchor - ((anchor - low) & 0xFFFF) : low
        var lost: [(UInt64, UInt64)] = []
        for index in (first + 1) ..< traced.count {
            let step = Int64(Int16(truncatingIfNeeded: Int(traced[index].sourceLowBits) - Int(previous & 0xFFFF)))
            let period = Int64(traced[index - 1].frames)
            if step > period { lost.append((previous + UInt64(period), UInt64(step - period))) }
            previous = UInt64(Int64(previous) + step)
        }
        return lost
    }

    func stop() { client.close() }

    deinit {
        client.close()
        state.pointee.cycles.deallocate()
        state.deallocate()
    }
}

/// The witness's process callback. Realtime thread.
private func testWitnessProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: the witness frees its state only after closing the client.
    let state = context.assumingMemoryBound(to: TestWitness.State.self)
    guard state.pointee.count < state.pointee.capacity else { return 0 }
    let cycle = JackClock.cycle(state.pointee.client)
    let buffer = JackPortBuffer.samples(state.pointee.port, frames: frameCount)
    // SAFETY: count < capacity; only this thread writes the trace.
    state.pointee.cycles[state.pointee.count] = TestWitness.Cycle(
        counter: cycle.startFrame, frames: frameCount,
        sourceLowBits: UInt32(ReferenceSignal.frameLowBits(rampSample: buffer[0])))
    state.pointee.count += 1
    return 0
}
