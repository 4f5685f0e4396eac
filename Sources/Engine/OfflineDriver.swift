// The offline driver: runs a session's kernel over buffers or a file in N-frame blocks, with no
// JACK server (swift-nio's NIOEmbedded is the model: the same handler, driven by hand). The
// kernels' offline glue (`OfflineKernel`) hands them the block's buffers where the JACK glue
// hands them port buffers; nothing else differs. `OfflineCapture` is the capture kernel so
// driven (`micmon denoise` is one use); tests drive kernels this way without a server. The
// calling thread plays the realtime thread: one thread at a time.

import DSP
import Jack
import Realtime
import SoundFile

/// A kernel the offline driver can run: one cycle over this block's buffers, as its JACK glue
/// would have handed them over. Not realtime-checked itself; it only sets pointers and calls the
/// checked kernel.
protocol OfflineKernel {
    /// Channels in (`inputs`) and out (`outputs`) of `runCycle`.
    var offlineInputCount: Int { get }
    var offlineOutputCount: Int { get }
    /// One cycle of `frameCount` frames starting at frame `position` of the run. `inputs` hold
    /// `frameCount` samples each; `outputs` take as many.
    mutating func runCycle(inputs: UnsafePointer<UnsafePointer<Float>>, outputs: UnsafePointer<UnsafeMutablePointer<Float>>,
                           frameCount: Int, position: UInt64)
}

/// Runs one kernel block by block over interleaved input, and hands each block's outputs to the
/// caller. The kernel lives in `memory` (made with a `SessionLink` from it). The calling thread,
/// one at a time.
final class OfflineDriver<Kernel: OfflineKernel> {
    let memory: SessionMemory
    let kernel: UnsafeMutablePointer<Kernel>
    let blockFrames: Int
    /// Frames run so far.
    private(set) var position: UInt64 = 0
    private let inputCount: Int
    private let outputCount: Int
    /// One block per channel, and the pointers the kernel is handed.
    private let inputBlocks: UnsafeMutablePointer<Float>
    private let outputBlocks: UnsafeMutablePointer<Float>
    private let inputs: UnsafeMutablePointer<UnsafePointer<Float>>
    private let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    init(kernel: Kernel, memory: SessionMemory, blockFrames: Int) {
        precondition(blockFrames > 0, "blocks of at least one frame")
        self.memory = memory
        self.blockFrames = blockFrames
        inputCount = kernel.offlineInputCount
        outputCount = kernel.offlineOutputCount
        self.kernel = memory.make(kernel)
        inputBlocks = memory.make(repeating: 0, count: max(inputCount, 1) * blockFrames)
        outputBlocks = memory.make(repeating: 0, count: max(outputCount, 1) * blockFrames)
        let inputBlocks = self.inputBlocks, outputBlocks = self.outputBlocks
        inputs = memory.make(copying: (0 ..< max(inputCount, 1)).map { UnsafePointer(inputBlocks + $0 * blockFrames) })
        outputs = memory.make(copying: (0 ..< max(outputCount, 1)).map { outputBlocks + $0 * blockFrames })
    }

    /// Runs the kernel over `input` (interleaved, `offlineInputCount` channels), `blockFrames`
    /// at a time (the last block may be shorter); after each cycle `afterBlock` gets the
    /// outputs and the block's frame count.
    func run(interleaved input: UnsafeBufferPointer<Float>,
             afterBlock: (UnsafePointer<UnsafeMutablePointer<Float>>, Int) -> Void = { _, _ in }) {
        let channels = max(inputCount, 1)
        let total = input.count / channels
        var frame = 0
        while frame < total {
            let count = min(blockFrames, total - frame)
            runBlock(count) { channel, i in input[(frame + i) * channels + channel] }
            afterBlock(outputs, count)
            frame += count
        }
    }

    /// Runs the kernel over what `reader` holds (its channels must be `offlineInputCount`), block
    /// by block. Returns the frames read.
    func run(reader: SoundFileReader,
             afterBlock: (UnsafePointer<UnsafeMutablePointer<Float>>, Int) -> Bool) -> Int64 {
        let channels = reader.channelCount
        precondition(channels == inputCount, "the file's channels are the kernel's inputs")
        let interleaved = UnsafeMutableBufferPointer<Float>.allocate(capacity: blockFrames * channels)
        defer { interleaved.deallocate() }
        var framesRead: Int64 = 0
        while true {
            let count = reader.read(into: interleaved)
            if count <= 0 { break }
            runBlock(count) { channel, i in interleaved[i * channels + channel] }
            framesRead += Int64(count)
            if !afterBlock(outputs, count) { break }
        }
        return framesRead
    }

    /// Runs cycles of no input (silence in): for kernels that only produce, such as playback.
    func runSilent(blocks: Int, afterBlock: (UnsafePointer<UnsafeMutablePointer<Float>>, Int) -> Void) {
        for _ in 0 ..< blocks {
            runBlock(blockFrames) { _, _ in 0 }
            afterBlock(outputs, blockFrames)
        }
    }

    /// Deinterleaves one block into the input buffers, clears the outputs, runs one cycle.
    private func runBlock(_ count: Int, sample: (_ channel: Int, _ frame: Int) -> Float) {
        for channel in 0 ..< inputCount {
            let block = inputBlocks + channel * blockFrames
            for i in 0 ..< count { block[i] = sample(channel, i) }
        }
        outputBlocks.update(repeating: 0, count: max(outputCount, 1) * blockFrames)
        kernel.pointee.runCycle(inputs: inputs, outputs: outputs, frameCount: count, position: position)
        position += UInt64(count)
    }
}

// MARK: - The kernels' offline glue

extension CaptureKernel: OfflineKernel {
    var offlineInputCount: Int { channelCount }
    var offlineOutputCount: Int { monitor?.count ?? 0 }

    /// What `captureProcess` does, with the block's buffers for the port buffers. The server's
    /// frame counter is unknown offline, so no server gap is ever seen.
    mutating func runCycle(inputs blocks: UnsafePointer<UnsafePointer<Float>>, outputs: UnsafePointer<UnsafeMutablePointer<Float>>,
                           frameCount: Int, position: UInt64) {
        for channel in 0 ..< channelCount { inputs[channel] = blocks[channel] }
        process(frameCount: frameCount)
        if let monitor {
            for output in 0 ..< monitor.count { monitor.outputs[output] = outputs[output] }
            monitorPass(frameCount: frameCount)
        }
    }
}

extension PlaybackKernel: OfflineKernel {
    var offlineInputCount: Int { 0 }
    var offlineOutputCount: Int { 2 }

    /// What `playbackProcess` does, with the block's buffers for out_1 and out_2.
    mutating func runCycle(inputs: UnsafePointer<UnsafePointer<Float>>, outputs blocks: UnsafePointer<UnsafeMutablePointer<Float>>,
                           frameCount: Int, position: UInt64) {
        outputs[0] = blocks[0]
        outputs[1] = blocks[1]
        process(frameCount: frameCount)
    }
}

extension LatencyKernel: OfflineKernel {
    var offlineInputCount: Int { 1 }
    var offlineOutputCount: Int { 1 }

    /// What `latencyProcess` does, with the block's buffers for in_1 and out_1. There is no
    /// clock offline: the cycle start is the run's frame position (plus one, as 0 means unknown).
    mutating func runCycle(inputs blocks: UnsafePointer<UnsafePointer<Float>>, outputs blocks2: UnsafePointer<UnsafeMutablePointer<Float>>,
                           frameCount: Int, position: UInt64) {
        input = blocks[0]
        output = blocks2[0]
        process(frameCount: frameCount, cycleStartUsecs: position + 1)
    }
}

// MARK: - Capture, offline

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
        public init() {}
    }

    /// The longest block: the capture kernel's longest period.
    public static let maximumBlock = CaptureKernel.maximumPeriod
    /// The take so far, interleaved (`recordedChannelCount` channels), from the capture ring.
    public private(set) var take: [Float] = []
    /// Each monitor output so far (empty without monitoring).
    public private(set) var monitorOutputs: [[Float]] = []
    public let recordedChannelCount: Int
    private let options: Options
    private let memory: SessionMemory
    private let parts: CaptureMemory
    private let driver: OfflineDriver<CaptureKernel>
    private var didFlush = false

    /// Prepares the kernel's memory. Denoising makes a suppressor for the rate.
    public convenience init(_ options: Options) throws(NoiseSuppressorError) {
        self.init(options, suppressor: options.denoises ? try NoiseSuppressor(sampleRate: options.sampleRate) : nil)
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
        var plan = CaptureMemory.Plan(sampleRate: options.sampleRate,
                                      inputPorts: Array(repeating: standIn, count: options.channelCount),
                                      monitorPorts: Array(repeating: standIn, count: monitorCount),
                                      monitorGain: options.monitorGain ?? 1, suppressor: suppressor,
                                      recordedChannels: options.recordedChannels)
        plan.ringFrames = options.ringFrames ?? 4 * options.blockFrames
        plan.frameLimit = options.frameLimit
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
            RealtimeHooks.enableFlushToZero()
            didFlush = true
        }
    }

    private func collect(_ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, _ frames: Int) {
        collectMonitor(outputs, frames)
        _ = drain { block in
            take.append(contentsOf: block)
            return true
        }
    }

    private func collectMonitor(_ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, _ frames: Int) {
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
    public static func run(reader: SoundFileReader, writer: SoundFileWriter, blockFrames: Int,
                           suppressor: NoiseSuppressor) -> Result {
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
