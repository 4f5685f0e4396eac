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

    public init(serverName: String, clientName: String = "micmon-demo-voice", signal: Signal = .demoVoice(seed: 1)) throws(JackError) {
        client = try JackClient(name: clientName, serverName: serverName)
        let primary = try client.registerPort(name: "out_1", direction: .output)
        let reference = try client.registerPort(name: "out_2", direction: .output)
        outputPorts = [primary.fullName, reference.fullName]
        state = .allocate(capacity: 1)
        let seed: UInt64
        if case .demoVoice(let chosen) = signal { seed = chosen } else { seed = 1 }
        var isReference = false
        if case .reference = signal { isReference = true }
        state.initialize(to: DemoSourceState(
            primary: primary.handle, reference: reference.handle,
            voice: DemoVoiceSource(sampleRate: Double(client.sampleRate), seed: seed),
            playsReference: isReference, frame: 0))
        try client.setProcessCallback(demoProcess, context: UnsafeMutableRawPointer(state))
        try client.activate()
    }

    /// Stops and closes the client. Safe to call twice.
    public func stop() {
        client.close()
    }

    deinit {
        client.close()
        state.deinitialize(count: 1)
        state.deallocate()
    }
}

struct DemoSourceState {
    let primary: OpaquePointer
    let reference: OpaquePointer
    var voice: DemoVoiceSource
    let playsReference: Bool
    var frame: UInt64
}

/// The demo source's process callback. Realtime thread.
nonisolated func demoProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: DemoSource passes its state and frees it only after closing the client.
    let state = context.assumingMemoryBound(to: DemoSourceState.self)
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
