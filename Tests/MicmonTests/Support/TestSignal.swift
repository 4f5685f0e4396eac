import DSP
import Jack

typealias TestSignal = ReferenceSignal

/// A JACK client that plays `TestSignal` on `out_1`, `out_2`, counting frames from its first cycle.
final class TestSignalSource: @unchecked Sendable {
    let client: JackClient
    let outputPorts: [String]
    private let state: UnsafeMutablePointer<TestSourceState>

    init(serverName: String, clientName: String = "micmon-test-source") throws {
        client = try JackClient(name: clientName, serverName: serverName)
        let first = try client.registerPort(name: "out_1", direction: .output)
        let second = try client.registerPort(name: "out_2", direction: .output)
        outputPorts = [first.fullName, second.fullName]
        state = .allocate(capacity: 1)
        state.initialize(to: TestSourceState(ports: (first.handle, second.handle), frame: 0))
        try client.setProcessCallback(testSourceProcess, context: UnsafeMutableRawPointer(state))
        try client.activate()
    }

    func stop() { client.close() }

    deinit {
        client.close()
        state.deallocate()
    }
}

struct TestSourceState {
    let ports: (OpaquePointer, OpaquePointer)
    var frame: UInt64
}

/// The source's process callback. Realtime thread.
nonisolated func testSourceProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    let state = context.assumingMemoryBound(to: TestSourceState.self)
    let first = JackPortBuffer.samples(state.pointee.ports.0, frames: frameCount)
    let second = JackPortBuffer.samples(state.pointee.ports.1, frames: frameCount)
    let start = state.pointee.frame
    ReferenceSignal.render(into: first, second, count: Int(frameCount), startFrame: start)
    state.pointee.frame = start + UInt64(frameCount)
    return 0
}
