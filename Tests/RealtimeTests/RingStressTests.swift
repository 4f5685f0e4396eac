import Realtime
import Synchronization
import Testing

/// Two threads, millions of elements, every one checked. Run under ThreadSanitizer with
/// `swift test --sanitize=thread --filter RingStress`.
@Suite("RingStress", .serialized)
struct RingStress {
    /// What the consumer thread found.
    final class Outcome: Sendable {
        let received = Atomic<Int>(0)
        /// The first position where the value was not the next in sequence, or -1.
        let firstMismatch = Atomic<Int>(-1)
    }

    @Test("a running sequence number arrives complete and in order", arguments: [1, 7, 1021])
    func sequenceArrivesInOrder(capacity: Int) async {
        let total = capacity == 1 ? 200_000 : 2_000_000
        let ring = SPSCRing<UInt64>(capacity: capacity)
        let outcome = Outcome()
        let producer = ring.producer
        let consumer = ring.consumer

        await runOnThreads([
            { Self.produce(producer, total: total, seed: 0x1234_5678) },
            { Self.consume(consumer, total: total, seed: 0x9abc_def0, outcome: outcome) },
        ])

        #expect(outcome.firstMismatch.load(ordering: .relaxed) == -1)
        #expect(outcome.received.load(ordering: .relaxed) == total)
        #expect(ring.consumer.availableToRead() == 0)
        withExtendedLifetime(ring) {}
    }

    /// Pushes `0 ..< total` in blocks of varying size, alternating `push` and
    /// `writableSlices` + `commitWrite` (sometimes committing less than it asked for).
    static func produce(_ producer: SPSCRing<UInt64>.Producer, total: Int, seed: UInt64) {
        var random = TestRandom(seed: seed)
        let block = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: producer.capacity)
        defer { block.deallocate() }
        var next = 0
        while next < total {
            let size = min(random.next(in: 1 ... producer.capacity), total - next)
            let viaSlices = random.next(in: 0 ... 1) == 1
            let commitCount = viaSlices ? random.next(in: 1 ... size) : size
            var pushed = 0
            while pushed == 0 {
                pushed = pushBlock(
                    producer, scratch: block, first: next, size: size, viaSlices: viaSlices, commitCount: commitCount)
                if pushed == 0 { yieldProcessor() }
            }
            next += pushed
        }
    }

    /// Reads until `total` elements arrived, alternating `pop` of random amounts and
    /// `readableSlices()` with a partial `commitRead`; checks every value.
    static func consume(_ consumer: SPSCRing<UInt64>.Consumer, total: Int, seed: UInt64, outcome: Outcome) {
        var random = TestRandom(seed: seed)
        let buffer = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: consumer.capacity + 64)
        defer { buffer.deallocate() }
        var expected = 0
        var mismatch = -1
        while expected < total && mismatch < 0 {
            let got: Int
            if random.next(in: 0 ... 1) == 0 {
                let popBuffer = UnsafeMutableBufferPointer(
                    start: buffer.baseAddress, count: random.next(in: 1 ... buffer.count))
                (got, mismatch) = popAndCheck(consumer, into: popBuffer, expected: expected)
            } else {
                (got, mismatch) = readSlicesAndCheck(consumer, fraction: random.next(in: 1 ... 4), expected: expected)
            }
            expected += got
            if got == 0 { yieldProcessor() }
        }
        outcome.received.store(expected, ordering: .relaxed)
        outcome.firstMismatch.store(mismatch, ordering: .relaxed)
    }

    // The ring calls themselves sit in `@_noLocks @_noAllocation` functions, as in a realtime
    // kernel. That also makes the compiler specialize the generic ring code into this module
    // even in debug builds, where ThreadSanitizer instruments it; unspecialized generic code
    // copies elements through the (uninstrumented) runtime, and races there would go unseen.

    /// Writes `first ..< first + size` (committing only `commitCount` of them when going
    /// through the slices); returns how many were committed, 0 if there was no room.
    @_noLocks @_noAllocation
    static func pushBlock(
        _ producer: SPSCRing<UInt64>.Producer, scratch: UnsafeMutableBufferPointer<UInt64>,
        first: Int, size: Int, viaSlices: Bool, commitCount: Int
    ) -> Int {
        if viaSlices {
            guard let slices = producer.writableSlices(count: size) else { return 0 }
            for index in 0 ..< commitCount { slices[index] = UInt64(first + index) }
            producer.commitWrite(count: commitCount)
            return commitCount
        }
        for index in 0 ..< size { scratch[index] = UInt64(first + index) }
        return producer.push(UnsafeBufferPointer(start: scratch.baseAddress, count: size)) ? size : 0
    }

    /// Pops into `destination`; returns how many, and the first out-of-sequence position or -1.
    @_noLocks @_noAllocation
    static func popAndCheck(
        _ consumer: SPSCRing<UInt64>.Consumer, into destination: UnsafeMutableBufferPointer<UInt64>,
        expected: Int
    ) -> (got: Int, mismatch: Int) {
        let got = consumer.pop(into: destination)
        for index in 0 ..< got where destination[index] != UInt64(expected + index) {
            return (got, expected + index)
        }
        return (got, -1)
    }

    /// Checks everything readable in place, then frees about `1/fraction` of it.
    @_noLocks @_noAllocation
    static func readSlicesAndCheck(
        _ consumer: SPSCRing<UInt64>.Consumer, fraction: Int,
        expected: Int
    ) -> (got: Int, mismatch: Int) {
        let slices = consumer.readableSlices()
        for index in 0 ..< slices.count where slices[index] != UInt64(expected + index) {
            return (0, expected + index)
        }
        let got = slices.count > 0 ? max(1, slices.count / fraction) : 0
        consumer.commitRead(count: got)
        return (got, -1)
    }
}
