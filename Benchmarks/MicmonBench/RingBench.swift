import CJack
import CJackShims
import Engine
import Glibc
import Platform
import Realtime
import Synchronization

/// Throughput of `Realtime.SPSCRing<Float>` against libjack's `jack_ringbuffer_t` doing the same
/// work: a producer thread writes `blocks` blocks of 128 floats (a 64-frame stereo period) and
/// a consumer thread reads them into a buffer of its own; each side spins while the ring is full
/// or empty, yielding the processor one time in 64 (`wait`). Both rings hold 64 KiB (16384
/// floats; libjack rounds to a power of two and keeps one byte free, so 127 blocks fit in it and
/// 128 in micmon's).
///
/// Each block carries its index in element 0; the consumer checks the order and sums element 1,
/// so neither side's copy can be optimised away and a lost or reordered block is counted.
enum RingBench {
    static let blockFloats = 128
    static let capacityFloats = 16384

    struct Result: Codable {
        var micmonBlocksPerSecond: [Double] = []
        var jackBlocksPerSecond: [Double] = []
        /// Yields per block (producer found the ring full, consumer found it empty), per run.
        var micmonYieldsPerBlock: [Double] = []
        var jackYieldsPerBlock: [Double] = []
        var orderErrors = 0
        var checksum = 0.0
    }

    /// `repeats` runs of each ring, alternating micmon and jack. Main thread.
    static func run(blocks: Int, repeats: Int) -> Result {
        var result = Result()
        for _ in 0 ..< repeats {
            for kind in [RingRun.Kind.micmon, .jack] {
                let run = RingRun(kind: kind, blocks: blocks)
                let seconds = run.measure()
                let rate = Double(blocks) / seconds
                let yields = Double(run.producerYields + run.consumerYields) / Double(blocks)
                if kind == .micmon {
                    result.micmonBlocksPerSecond.append(rate)
                    result.micmonYieldsPerBlock.append(yields)
                } else {
                    result.jackBlocksPerSecond.append(rate)
                    result.jackYieldsPerBlock.append(yields)
                }
                result.orderErrors += run.orderErrors
                result.checksum += run.checksum
            }
        }
        return result
    }
}

/// One timed run: both threads wait on `go`, the clock runs from `go` to the consumer's last block.
final class RingRun: @unchecked Sendable {
    enum Kind { case micmon, jack }

    let kind: Kind
    let blocks: Int
    let go = Atomic<Bool>(false)
    let micmon = SPSCRing<Float>(capacity: RingBench.capacityFloats)
    let jack: UnsafeMutablePointer<jack_ringbuffer_t>
    // Written by the consumer thread, read after it is joined.
    var orderErrors = 0
    var checksum = 0.0
    var finishedNanoseconds: UInt64 = 0
    /// Times each side found the ring full (producer) or empty (consumer) and waited.
    var producerYields = 0
    var consumerYields = 0

    init(kind: Kind, blocks: Int) {
        self.kind = kind
        self.blocks = blocks
        self.jack = jack_ringbuffer_create(RingBench.capacityFloats * MemoryLayout<Float>.size)
    }

    deinit { jack_ringbuffer_free(self.jack) }

    /// Seconds from releasing both threads to the consumer's last block. Main thread.
    func measure() -> Double {
        let context = Unmanaged.passRetained(self).toOpaque()
        defer { Unmanaged<RingRun>.fromOpaque(context).release() }
        var producer = pthread_t()
        var consumer = pthread_t()
        pthread_create(&producer, nil, ringProducerThread, context)
        pthread_create(&consumer, nil, ringConsumerThread, context)
        sleep(seconds: 0.02)  // let both reach the start line
        let start = MonotonicClock.nanoseconds()
        go.store(true, ordering: .releasing)
        pthread_join(producer, nil)
        pthread_join(consumer, nil)
        return Double(finishedNanoseconds - start) / 1e9
    }
}

nonisolated func ringProducerThread(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let run = Unmanaged<RingRun>.fromOpaque(context!).takeUnretainedValue()
    let count = RingBench.blockFloats
    let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: count)
    defer { block.deallocate() }
    for i in 0 ..< count { block[i] = Float(i) / Float(count) - 0.5 }
    let blocks = run.blocks
    let jack = run.jack
    pinToProcessor(0)
    while !run.go.load(ordering: .acquiring) {}
    var sent = 0
    var yields = 0
    switch run.kind {
    case .micmon:
        // What the capture kernel does: writable slices, fill them, commit.
        let ring = run.micmon.producer
        while sent < blocks {
            guard let slices = ring.writableSlices(count: count) else {
                yields += 1
                wait(yields)
                continue
            }
            block[0] = Float(sent)
            slices.copy(from: UnsafeBufferPointer(block))
            ring.commitWrite(count: count)
            sent += 1
        }
    case .jack:
        let bytes = count * MemoryLayout<Float>.size
        while sent < blocks {
            guard jack_ringbuffer_write_space(jack) >= bytes else {
                yields += 1
                wait(yields)
                continue
            }
            block[0] = Float(sent)
            _ = block.withMemoryRebound(to: CChar.self) { jack_ringbuffer_write(jack, $0.baseAddress, bytes) }
            sent += 1
        }
    }
    run.producerYields = yields
    return nil
}

nonisolated func ringConsumerThread(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let run = Unmanaged<RingRun>.fromOpaque(context!).takeUnretainedValue()
    let count = RingBench.blockFloats
    let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: count)
    defer { block.deallocate() }
    let blocks = run.blocks
    let jack = run.jack
    pinToProcessor(1)
    while !run.go.load(ordering: .acquiring) {}
    var received = 0
    var yields = 0
    var errors = 0
    var sum = 0.0
    switch run.kind {
    case .micmon:
        // What the writer thread does: readable slices, use them, commit.
        let ring = run.micmon.consumer
        while received < blocks {
            guard let slices = ring.readableSlices(count: count) else {
                yields += 1
                wait(yields)
                continue
            }
            slices.copy(into: block)
            ring.commitRead(count: count)
            if block[0] != Float(received) { errors += 1 }
            sum += Double(block[1])
            received += 1
        }
    case .jack:
        let bytes = count * MemoryLayout<Float>.size
        while received < blocks {
            guard jack_ringbuffer_read_space(jack) >= bytes else {
                yields += 1
                wait(yields)
                continue
            }
            _ = block.withMemoryRebound(to: CChar.self) { jack_ringbuffer_read(jack, $0.baseAddress, bytes) }
            if block[0] != Float(received) { errors += 1 }
            sum += Double(block[1])
            received += 1
        }
    }
    run.finishedNanoseconds = MonotonicClock.nanoseconds()
    run.orderErrors = errors
    run.checksum = sum
    run.consumerYields = yields
    return nil
}

/// Pins the calling thread to processor `index` (modulo the processors online), so that the
/// producer and the consumer of a ring run each on a core of its own in every run, for both
/// rings: without it the scheduler sometimes put both on one core, and the spread between runs
/// was larger than the difference between the rings.
func pinToProcessor(_ index: Int) {
    let online = max(Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), 1)
    let processor = index % online
    ThreadEnvironment.pinToProcessor(processor)
}

/// What a side does when the ring is full (producer) or empty (consumer): spins, and yields the
/// processor only one time in 64, so a wait is not always a system call (a sched_yield costs
/// more than moving a block).
@inline(__always)
func wait(_ waits: Int) {
    if waits & 63 == 0 { sched_yield() }
}
