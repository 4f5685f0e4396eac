// The offline driver: runs a session's kernel over buffers or a file in N-frame blocks, with no
// JACK server (swift-nio's NIOEmbedded is the model: the same handler, driven by hand). The
// kernels' offline glue (`OfflineKernel`) hands them the block's buffers where the JACK glue
// hands them port buffers; nothing else differs. `OfflineCapture` (OfflineCapture.swift) is
// the capture kernel so driven; tests drive kernels this way without a server. The calling
// thread plays the realtime thread: one thread at a time.

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
    mutating func runCycle(inputs: OfflineInputs, outputs: OfflineOutputs, frameCount: Int, position: UInt64)
}

/// One block's input buffers (one per channel), as the offline driver hands them to a kernel.
typealias OfflineInputs = UnsafePointer<UnsafePointer<Float>>
/// One block's output buffers (one per channel).
typealias OfflineOutputs = UnsafePointer<UnsafeMutablePointer<Float>>

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
        let inputBlocks = self.inputBlocks
        let outputBlocks = self.outputBlocks
        inputs = memory.make(copying: (0 ..< max(inputCount, 1)).map { UnsafePointer(inputBlocks + $0 * blockFrames) })
        outputs = memory.make(copying: (0 ..< max(outputCount, 1)).map { outputBlocks + $0 * blockFrames })
    }

    /// Runs the kernel over `input` (interleaved, `offlineInputCount` channels), `blockFrames`
    /// at a time (the last block may be shorter); after each cycle `afterBlock` gets the
    /// outputs and the block's frame count.
    func run(
        interleaved input: UnsafeBufferPointer<Float>,
        afterBlock: (OfflineOutputs, Int) -> Void = { _, _ in }
    ) {
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
    func run(
        reader: SoundFileReader,
        afterBlock: (OfflineOutputs, Int) -> Bool
    ) -> Int64 {
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
    func runSilent(blocks: Int, afterBlock: (OfflineOutputs, Int) -> Void) {
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
    mutating func runCycle(inputs blocks: OfflineInputs, outputs: OfflineOutputs, frameCount: Int, position: UInt64) {
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
    mutating func runCycle(inputs: OfflineInputs, outputs blocks: OfflineOutputs, frameCount: Int, position: UInt64) {
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
    mutating func runCycle(inputs: OfflineInputs, outputs: OfflineOutputs, frameCount: Int, position: UInt64) {
        input = inputs[0]
        output = outputs[0]
        process(frameCount: frameCount, cycleStartUsecs: position + 1)
    }
}
