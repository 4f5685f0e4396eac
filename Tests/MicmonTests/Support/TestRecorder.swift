import Jack

/// A JACK client in the test process with inputs `in_1`, `in_2` that records everything it
/// receives from activation on into memory prepared up front (no allocation in its callback).
final class TestRecorder: @unchecked Sendable {
    let client: JackClient
    let inputPorts: [String]
    private let state: UnsafeMutablePointer<TestRecorderState>

    init(serverName: String, clientName: String, capacityFrames: Int) throws {
        client = try JackClient(name: clientName, serverName: serverName)
        let first = try client.registerPort(name: "in_1", direction: .input)
        let second = try client.registerPort(name: "in_2", direction: .input)
        inputPorts = [first.fullName, second.fullName]
        state = .allocate(capacity: 1)
        state.initialize(
            to: TestRecorderState(
                ports: (first.handle, second.handle),
                left: .allocate(capacity: capacityFrames), right: .allocate(capacity: capacityFrames),
                capacity: capacityFrames, frames: 0))
        try client.setProcessCallback(testRecorderProcess, context: UnsafeMutableRawPointer(state))
        try client.activate()
    }

    /// Stops recording and returns what arrived (left, right). Closes the client.
    func finish() -> (left: [Float], right: [Float]) {
        client.close()
        let count = state.pointee.frames
        return (
            Array(UnsafeBufferPointer(start: state.pointee.left, count: count)),
            Array(UnsafeBufferPointer(start: state.pointee.right, count: count))
        )
    }

    deinit {
        client.close()
        state.pointee.left.deallocate()
        state.pointee.right.deallocate()
        state.deallocate()
    }
}

struct TestRecorderState {
    let ports: (OpaquePointer, OpaquePointer)
    let left: UnsafeMutablePointer<Float>
    let right: UnsafeMutablePointer<Float>
    let capacity: Int
    var frames: Int
}

/// The recorder's process callback. Realtime thread.
nonisolated func testRecorderProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    let state = context.assumingMemoryBound(to: TestRecorderState.self)
    let first = JackPortBuffer.samples(state.pointee.ports.0, frames: frameCount)
    let second = JackPortBuffer.samples(state.pointee.ports.1, frames: frameCount)
    let start = state.pointee.frames
    let count = min(Int(frameCount), state.pointee.capacity - start)
    for i in 0 ..< count {
        state.pointee.left[start + i] = first[i]
        state.pointee.right[start + i] = second[i]
    }
    state.pointee.frames = start + count
    return 0
}
