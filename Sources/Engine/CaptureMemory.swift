// The memory a capture kernel points into, made in one place for the JACK session
// (`CaptureSession`, around its registered ports) and the offline driver (`OfflineCapture`,
// around stand-in ports): input slots, meters and their mailboxes, the capture and drop rings,
// the clean channel's buffer, the monitor route. Allocated through the session's
// `SessionMemory` before activation, freed with it after close. Main thread.

import DSP
import Realtime

/// A capture kernel and everything it points into.
final class CaptureMemory {
    /// What to build.
    struct Plan {
        var sampleRate: Int
        /// One libjack port handle per input (stand-ins offline: the glue alone reads them).
        var inputPorts: [OpaquePointer]
        /// The monitor outputs' handles, or empty without monitoring.
        var monitorPorts: [OpaquePointer] = []
        var monitorGain: Float = 1
        /// The noise suppressor, when denoising (in_1 primary, in_2 reference).
        var suppressor: NoiseSuppressor?
        var recordedChannels: CaptureConfiguration.RecordedChannels = .all
        /// Capacity of the capture ring in frames, or nil when nothing is recorded.
        var ringFrames: Int?
        /// Frames to take in all, or `UInt64.max`.
        var frameLimit: UInt64 = .max
        /// Capacity of the analysis ring in frames, or nil when nothing is analysed.
        var analysisRingFrames: Int?
        /// PipeWire's libjack: each input's own silent buffer (`JackPortBuffer.idleBuffer`), or
        /// empty elsewhere.
        var idleInputBuffers: [UnsafePointer<Float>] = []
    }

    let counters: UnsafeMutablePointer<CaptureCounters>
    /// Latest meter states, one per input (and the clean channel last, when denoising).
    let mailbox: LatestValueMailbox<ChannelMeter>
    /// Latest monitor output meters, or nil without monitoring.
    let monitorMailbox: LatestValueMailbox<ChannelMeter>?
    /// Interleaved frames for the writer, and the dropped periods, or nil when nothing is recorded.
    let sampleRing: SPSCRing<Float>?
    let dropRing: SPSCRing<DropEvent>?
    /// The recorded channels for the analysis thread, or nil when nothing is analysed.
    let analysisRing: SPSCRing<Float>?
    /// The realtime side's logs of graph-wide gaps and of micmon's own timeline losses.
    let serverGapRing = SPSCRing<DropEvent>(capacity: 1024)
    let missedRing = SPSCRing<DropEvent>(capacity: 1024)
    /// The realtime side's log of uncertain periods (`CaptureKernel.noteSilentCycle`).
    let uncertainRing = SPSCRing<DropEvent>(capacity: 1024)
    /// Channels in the file: the inputs, the clean channel, or both (see `RecordedChannels`).
    let recordedChannelCount: Int
    let kernel: CaptureKernel

    init(_ plan: Plan, memory: SessionMemory, link: SessionLink) {
        let channelCount = plan.inputPorts.count
        let denoises = plan.suppressor != nil
        // With denoising, one more meter (and maybe file channel): the clean primary.
        let meterCount = channelCount + (denoises ? 1 : 0)
        let recorded: (offset: Int, count: Int)
        switch denoises ? plan.recordedChannels : .raw {
        case .raw: recorded = (0, channelCount)
        case .clean: recorded = (channelCount, 1)
        case .all: recorded = (0, channelCount + 1)
        }
        recordedChannelCount = recorded.count

        counters = memory.make(CaptureCounters())
        // A silent buffer stands in for the inputs until the first cycle; the clean channel, when
        // denoising, stays in place after them.
        let silence = memory.make(repeating: Float(0), count: 1)
        var slots = Array(repeating: UnsafePointer(silence), count: channelCount)
        if denoises {
            slots.append(UnsafePointer(memory.make(repeating: Float(0), count: CaptureKernel.maximumPeriod)))
        }
        let inputs = memory.make(copying: slots)
        mailbox = LatestValueMailbox(count: meterCount, initial: ChannelMeter())
        memory.keep(mailbox)

        var route: MonitorRoute?
        if plan.monitorPorts.isEmpty {
            monitorMailbox = nil
        } else {
            let count = plan.monitorPorts.count
            let monitorMailbox = LatestValueMailbox(count: count, initial: ChannelMeter())
            memory.keep(monitorMailbox)
            self.monitorMailbox = monitorMailbox
            route = MonitorRoute(
                count: count, ports: memory.make(copying: plan.monitorPorts),
                outputs: memory.make(repeating: silence, count: count), gain: plan.monitorGain,
                meters: memory.make(repeating: ChannelMeter(), count: count), meterMailbox: monitorMailbox.writer)
        }

        if let ringFrames = plan.ringFrames {
            let samples = SPSCRing<Float>(capacity: ringFrames * recorded.count)
            let drops = SPSCRing<DropEvent>(capacity: 1024)
            memory.keep(samples)
            memory.keep(drops)
            sampleRing = samples
            dropRing = drops
        } else {
            sampleRing = nil
            dropRing = nil
        }
        if let analysisFrames = plan.analysisRingFrames {
            let ring = SPSCRing<Float>(capacity: analysisFrames * recorded.count)
            memory.keep(ring)
            analysisRing = ring
        } else {
            analysisRing = nil
        }
        memory.keep(serverGapRing)
        memory.keep(missedRing)
        memory.keep(uncertainRing)
        if let suppressor = plan.suppressor { memory.keep(suppressor) }

        var kernel = CaptureKernel(
            link: link, channelCount: channelCount, ports: memory.make(copying: plan.inputPorts), inputs: inputs,
            meters: memory.make(repeating: ChannelMeter(), count: meterCount),
            meterCoefficients: MeterCoefficients(sampleRate: Double(plan.sampleRate)),
            meterMailbox: mailbox.writer, samples: sampleRing?.producer, drops: dropRing?.producer,
            analysis: analysisRing?.producer, serverGaps: serverGapRing.producer, missedGaps: missedRing.producer,
            uncertainGaps: uncertainRing.producer,
            counters: counters, frameLimit: max(plan.frameLimit, 1), monitor: route, meterCount: meterCount,
            recordSources: inputs + recorded.offset, recordedChannelCount: recorded.count,
            suppressor: plan.suppressor?.kernelPointer)
        kernel.timeline = TimelineJudge(sampleRate: plan.sampleRate)
        if plan.idleInputBuffers.count == channelCount && channelCount > 0 {
            kernel.idleInputs = memory.make(copying: plan.idleInputBuffers)
        }
        self.kernel = kernel
    }
}
