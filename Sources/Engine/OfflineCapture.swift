// The capture kernel without a server: `OfflineCapture` runs it over in-memory or file audio
// through the offline driver and collects what it takes and outputs; `OfflineDenoise` is
// `micmon denoise` on top of it. The calling thread plays the realtime thread (and the writer).

import DSP
import Jack
import Platform
import Realtime
import SoundFile

/// The capture kernel (meters, noise suppressor, capture ring, monitoring) over in-memory or file
/// audio with no server: what a capture session would have taken, block by block, as if each
/// block were a JACK period. The take starts with the first block (nothing to arm). The calling
/// thread plays the realtime thread (and, for the take, the writer).
public final class OfflineCapture {
    public struct Options: Sendable {
        public var sampleRate = 48000
        public var channelCount = 2
        /// Frames per cycle (the JACK period to imitate), 1 … `OfflineCapture.maximumBlock`.
        public var blockFrames = 256
        /// Dual-mic noise suppression of inputs 1 (primary) and 2 (reference).
        public var denoises = false
        /// The suppressor's delay when denoising.
        public var denoiseLatency: NoiseSuppressorLatency = .standard
        /// What the take holds when denoising (see `CaptureConfiguration.RecordedChannels`).
        public var recordedChannels: CaptureConfiguration.RecordedChannels = .all
        /// Capacity of the capture ring in frames; nil: a few blocks (it is drained every block).
        public var ringFrames: Int?
        /// Leave the ring undrained (to see what a stalled writer loses); the take then stays empty.
        public var drainsRing = true
        /// Monitoring: this gain on as many outputs as inputs (at most two), or nil.
        public var monitorGain: Float?
        /// Frames to take in all.
        public var frameLimit: UInt64 = .max
        /// Flush denormals to zero on the calling thread, as JACK's process thread does.
        public var flushesDenormals = true
        /// Push the recorded channels into an analysis ring as live takes do (its capacity in
        /// frames), or nil; what it holds is discarded after each block.
        public var analysisRingFrames: Int?
        /// Keep the take in `take`; false discards each block once queued (for benches).
        public var keepsTake = true
        public init() {}
    }

    /// The longest block: the capture kernel's longest period.
    public static let maximumBlock = CaptureKernel.maximumPeriod
    /// The take so far, interleaved (`recordedChannelCount` channels), from the capture ring.
    public private(set) var take: [Float] = []
    /// What the analysis ring received so far, interleaved (with `analysisRingFrames`).
    public private(set) var analysisTake: [Float] = []
    /// Each monitor output so far (empty without monitoring).
    public private(set) var monitorOutputs: [[Float]] = []
    public let recordedChannelCount: Int
    private let options: Options
    private let memory: SessionMemory
    /// The session memory, for tests of the handshake.
    var memoryForTests: SessionMemory { memory }
    private let parts: CaptureMemory
    private let driver: OfflineDriver<CaptureKernel>
    private var didFlush = false

    /// Prepares the kernel's memory. Denoising makes a suppressor for the rate.
    public convenience init(_ options: Options) throws(NoiseSuppressorError) {
        self.init(
            options,
            suppressor: options.denoises
                ? try NoiseSuppressor(sampleRate: options.sampleRate, latency: options.denoiseLatency) : nil)
    }

    /// Prepares the kernel's memory around `suppressor` (fresh, made for `options.sampleRate`), or
    /// none: denoising is then off whatever `options.denoises` says.
    public init(_ options: Options, suppressor: NoiseSuppressor?) {
        precondition((1 ... Self.maximumBlock).contains(options.blockFrames), "block frames out of range")
        self.options = options
        memory = SessionMemory(sampleRate: options.sampleRate)
        // Stand-ins for the ports and the client: only the JACK glue reads them, and none runs here.
        let standIn = OpaquePointer(bitPattern: 0x1)!
        let monitorCount = options.monitorGain == nil ? 0 : min(options.channelCount, 2)
        var plan = CaptureMemory.Plan(
            sampleRate: options.sampleRate,
            inputPorts: Array(repeating: standIn, count: options.channelCount),
            monitorPorts: Array(repeating: standIn, count: monitorCount),
            monitorGain: options.monitorGain ?? 1, suppressor: suppressor,
            recordedChannels: options.recordedChannels)
        plan.ringFrames = options.ringFrames ?? 4 * options.blockFrames
        plan.frameLimit = options.frameLimit
        plan.analysisRingFrames = options.analysisRingFrames
        parts = CaptureMemory(plan, memory: memory, link: memory.link(client: standIn, readsSystemClock: false))
        recordedChannelCount = parts.recordedChannelCount
        var kernel = parts.kernel
        kernel.isTaking = true
        driver = OfflineDriver(kernel: kernel, memory: memory, blockFrames: options.blockFrames)
        monitorOutputs = Array(repeating: [], count: monitorCount)
    }

    /// Runs `input` (interleaved, `channelCount` channels) through the kernel. Any number of
    /// calls; the blocks continue where the last call left off.
    public func process(interleaved input: UnsafeBufferPointer<Float>) {
        flushDenormalsOnce()
        driver.run(interleaved: input) { outputs, frames in collect(outputs, frames) }
    }

    /// `process(interleaved:)` for an array.
    public func process(interleaved input: [Float]) {
        input.withUnsafeBufferPointer { process(interleaved: $0) }
    }

    /// Runs what `reader` holds through the kernel, handing each block's take (interleaved) to
    /// `deliver`, which returns false to stop. Nothing is kept in `take`. Returns the frames read.
    public func process(reader: SoundFileReader, deliver: (UnsafeBufferPointer<Float>) -> Bool) -> Int64 {
        flushDenormalsOnce()
        return driver.run(reader: reader) { outputs, frames in
            collectMonitor(outputs, frames)
            return drain(deliver)
        }
    }

    /// Moves what the capture ring holds into `take` (for a ring left undrained, once it may).
    public func drainRing() {
        guard let ring = parts.sampleRing else { return }
        let slices = ring.consumer.readableSlices()
        take.append(contentsOf: slices.first)
        take.append(contentsOf: slices.second)
        ring.consumer.commitRead(count: slices.count)
    }

    /// Asks the kernel to stop, as a session's `stop()` does; the next block confirms it.
    public func requestStop() { memory.requestStop() }
    /// Whether a cycle has seen the stop request.
    public var hasStopped: Bool { memory.hasStopped }
    public var cycles: UInt64 { memory.cycles }
    public var framesTaken: UInt64 { parts.counters.pointee.framesTaken.load(ordering: .acquiring) }
    public var framesDropped: UInt64 { parts.counters.pointee.framesDropped.load(ordering: .relaxed) }
    public var isComplete: Bool { parts.counters.pointee.isComplete.load(ordering: .acquiring) }
    /// NaN and ±∞ samples monitoring sent out as 0.
    public var monitorNonFiniteReplaced: UInt64 {
        parts.counters.pointee.monitorNonFiniteReplaced.load(ordering: .relaxed)
    }
    /// The drop events the kernel logged so far (a drop is logged once a later period fits).
    public func drops() -> [DropEvent] {
        guard let ring = parts.dropRing else { return [] }
        let slices = ring.consumer.readableSlices()
        let events = Array(slices.first) + Array(slices.second)
        ring.consumer.commitRead(count: slices.count)
        return events
    }
    /// The latest meter readings, one per input (and the clean channel last, when denoising).
    public func readings() -> [MeterReading] { Array(parts.mailbox.readLatest().0.map(\.reading)) }
    /// Frames waiting in the capture ring (undrained).
    public var framesQueued: Int { (parts.sampleRing?.consumer.availableToRead() ?? 0) / recordedChannelCount }

    private func flushDenormalsOnce() {
        if options.flushesDenormals && !didFlush {
            ThreadEnvironment.enableFlushToZero()
            didFlush = true
        }
    }

    private func collect(_ outputs: OfflineOutputs, _ frames: Int) {
        collectMonitor(outputs, frames)
        let keeps = options.keepsTake
        _ = drain { block in
            if keeps { take.append(contentsOf: block) }
            return true
        }
        if let ring = parts.analysisRing {
            let consumer = ring.consumer
            let slices = consumer.readableSlices()
            if keeps {
                analysisTake.append(contentsOf: slices.first)
                analysisTake.append(contentsOf: slices.second)
            }
            consumer.commitRead(count: slices.count)
        }
    }

    private func collectMonitor(_ outputs: OfflineOutputs, _ frames: Int) {
        for output in monitorOutputs.indices {
            monitorOutputs[output].append(contentsOf: UnsafeBufferPointer(start: outputs[output], count: frames))
        }
    }

    /// Hands what the ring holds to `deliver` (unless the ring is left undrained).
    private func drain(_ deliver: (UnsafeBufferPointer<Float>) -> Bool) -> Bool {
        guard options.drainsRing, let ring = parts.sampleRing else { return true }
        let slices = ring.consumer.readableSlices()
        var goesOn = true
        if !slices.first.isEmpty { goesOn = deliver(slices.first) }
        if goesOn && !slices.second.isEmpty { goesOn = deliver(slices.second) }
        ring.consumer.commitRead(count: slices.count)
        return goesOn
    }
}

// MARK: - Denoise, offline

/// `micmon denoise`: a two-channel file (primary, reference) through the capture kernel's noise
/// suppressor into a mono file of the clean channel, block by block, as `record --denoise
/// --channels clean` would have taken it.
public enum OfflineDenoise {
    public struct Result: Sendable {
        /// Frames read from the input (fewer than it claims: a damaged file).
        public var framesRead: Int64
        /// Why writing stopped, if it did.
        public var writeError: SoundFileError?
    }

    /// Cleans what `reader` holds (2 channels) into `writer` (1 channel) in blocks of
    /// `blockFrames` (1 … `OfflineCapture.maximumBlock`, the JACK period to imitate), through
    /// `suppressor` (fresh, made for the reader's rate). The calling thread runs with denormals
    /// flushed, as the realtime thread does.
    public static func run(
        reader: SoundFileReader, writer: SoundFileWriter, blockFrames: Int,
        suppressor: NoiseSuppressor
    ) -> Result {
        var options = OfflineCapture.Options()
        options.sampleRate = reader.sampleRate
        options.channelCount = 2
        options.blockFrames = blockFrames
        options.denoises = true
        options.recordedChannels = .clean
        let capture = OfflineCapture(options, suppressor: suppressor)
        var writeError: SoundFileError?
        let framesRead = capture.process(reader: reader) { clean in
            do throws(SoundFileError) { try writer.write(interleaved: clean) } catch {
                writeError = error
                return false
            }
            return true
        }
        return Result(framesRead: framesRead, writeError: writeError)
    }
}
