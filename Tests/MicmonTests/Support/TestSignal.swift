import Jack

/// The deterministic test signal: a value for every frame index `n` on each channel.
/// Channel 1 is a counter ramp on the 16-bit grid (k/32768), channel 2 a hashed (PRBS-like)
/// sequence on the 24-bit grid (k/2²³): both exact in float, so a float take must match bit for
/// bit, and a 16-bit take must hold channel 2 rounded to the nearest 16-bit step.
enum TestSignal {
    static let channelCount = 2

    @inline(__always)
    static func value(channel: Int, frame n: UInt64) -> Float {
        if channel == 0 {
            return Float(Int(n & 0xFFFF) - 32768) / 32768
        } else {
            var x = n &+ 0x9E37_79B9_7F4A_7C15
            x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
            x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
            x ^= x >> 31
            return Float(Int(x & 0xFF_FFFF) - 0x80_0000) / 0x80_0000
        }
    }
}

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
    for i in 0 ..< Int(frameCount) {
        first[i] = TestSignal.value(channel: 0, frame: start + UInt64(i))
        second[i] = TestSignal.value(channel: 1, frame: start + UInt64(i))
    }
    state.pointee.frame = start + UInt64(frameCount)
    return 0
}
