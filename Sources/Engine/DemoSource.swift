// The demo source (`micmon demo`, the tests' and the soak's signal): the session core with the
// demo-source kernel plugged in, playing a built-in signal on out_1 and out_2. Main thread.

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

    public var client: JackClient { core.client }
    /// Full names of the two outputs, primary first.
    public let outputPorts: [String]
    private let core: JackSession<DemoSourceKernel>
    private let kernel: UnsafeMutablePointer<DemoSourceKernel>
    private let trace: UnsafeMutablePointer<SourceCycle>?
    private let traceCapacity: Int

    /// With `traceCapacity` > 0 the source notes its first `traceCapacity` cycles (see
    /// `SourceCycle`) and the times of the xruns it is told about, for the soak's diagnosis.
    /// `voiceNoise`: the demo voice's room (`.fan` for `demo --denoise`, which has noise to remove).
    public init(
        serverName: String, clientName: String = "micmon-demo-voice", signal: Signal = .demoVoice(seed: 1),
        voiceNoise: DemoVoiceSource.Noise = .room, traceCapacity: Int = 0
    ) throws(JackError) {
        core = try JackSession(clientName: clientName, serverName: serverName)
        let ports = try core.registerPorts("out", count: 2, direction: .output)
        outputPorts = ports.map(\.fullName)
        self.traceCapacity = max(0, traceCapacity)
        // Touched now, so the realtime thread never faults a fresh page in.
        trace = traceCapacity > 0 ? core.memory.make(repeating: SourceCycle(), count: traceCapacity) : nil
        let seed: UInt64
        if case .demoVoice(let chosen) = signal { seed = chosen } else { seed = 1 }
        var isReference = false
        if case .reference = signal { isReference = true }
        let placeholder = core.memory.make(repeating: Float(0), count: 1)
        kernel = try core.install(
            DemoSourceKernel(
                link: core.link, primaryPort: ports[0].handle, referencePort: ports[1].handle,
                primary: placeholder, reference: placeholder,
                voice: DemoVoiceSource(sampleRate: Double(core.sampleRate), seed: seed, noise: voiceNoise),
                playsReference: isReference, trace: trace, traceCapacity: self.traceCapacity),
            process: demoSourceProcess)
        try core.activate()
    }

    /// Stops and closes the client. Safe to call twice.
    public func stop() {
        core.close()
    }

    /// The cycles noted so far (with `traceCapacity`). Main thread, after `stop()` (the
    /// callbacks no longer run then).
    public func tracedCycles() -> [SourceCycle] {
        guard let trace else { return [] }
        return Array(UnsafeBufferPointer(start: trace, count: min(kernel.pointee.traceCount, traceCapacity)))
    }

    /// Cycles the source ran (whether traced or not). Main thread, after `stop()`.
    public var cyclesRun: Int { kernel.pointee.traceCount }
    /// Xruns the server reported to this client. Main thread.
    public var xruns: Int { Int(core.memory.xruns) }
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
    public init(
        cycleStartFrame: UInt32 = 0, framesSinceCycleStart: UInt32 = 0, cycleStartUsecs: UInt64 = 0,
        enteredUsecs: UInt64 = 0
    ) {
        self.cycleStartFrame = cycleStartFrame
        self.framesSinceCycleStart = framesSinceCycleStart
        self.cycleStartUsecs = cycleStartUsecs
        self.enteredUsecs = enteredUsecs
    }
}
