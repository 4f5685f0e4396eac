// The demo source's kernel: a built-in two-channel signal (the demo voice or the reference
// signal) for one process cycle, and its cycle trace. Compiler-checked
// (`@_noLocks @_noAllocation`); its JACK glue is DemoSourceCallbacks.swift. Realtime thread only,
// once the client is active.

import DSP

/// Everything the demo source's process callback touches: plain values and pointers into memory
/// prepared before activation (`DemoSource` makes it, its session memory frees it).
struct DemoSourceKernel {
    /// The session core's part (first: the glue reads its clock fields first thing).
    let link: SessionLink
    /// `out_1` (primary) and `out_2` (reference), libjack handles; read only by the C glue.
    let primaryPort: OpaquePointer
    let referencePort: OpaquePointer
    /// This cycle's output buffers, fetched by the glue before `process`.
    var primary: UnsafeMutablePointer<Float>
    var reference: UnsafeMutablePointer<Float>
    var voice: DemoVoiceSource
    /// The reference signal (counted from the first cycle) instead of the demo voice.
    let playsReference: Bool
    /// Frames rendered of the reference signal.
    var frame: UInt64 = 0
    /// The first `traceCapacity` cycles as the glue saw them, or nil.
    let trace: UnsafeMutablePointer<SourceCycle>?
    let traceCapacity: Int
    /// Cycles run (and noted while below `traceCapacity`). Realtime thread.
    var traceCount = 0

    /// Whether this cycle is still noted in the trace (the glue then reads the cycle's clocks).
    var isTracing: Bool { trace != nil && traceCount < traceCapacity }

    /// One cycle: both outputs rendered, `noted` kept in the trace while it has room.
    /// Realtime thread.
    @_noLocks @_noAllocation
    mutating func process(frameCount: Int, noted: SourceCycle) {
        _ = link.beginCycle(frameCount: frameCount)
        if let trace, traceCount < traceCapacity {
            // SAFETY: traceCount < traceCapacity, the buffer's size; only this thread writes it.
            trace[traceCount] = noted
        }
        traceCount &+= 1
        if playsReference {
            ReferenceSignal.render(into: primary, reference, count: frameCount, startFrame: frame)
            frame &+= UInt64(frameCount)
        } else {
            voice.render(primary: primary, reference: reference, count: frameCount)
        }
    }
}
