import Realtime
import Testing

/// Whole periods of interleaved frames, the way the capture kernel uses the ring.
@Suite("Ring whole-period blocks")
struct RingBlockTests {
    static let channels = 2
    static let framesPerPeriod = 3

    /// Sample value for (frame, channel), unique and easy to read in a failure.
    static func sample(frame: Int, channel: Int) -> Int { frame * 10 + channel }

    /// Writes one period, starting at `firstFrame`, interleaved from two "port buffers",
    /// through the slices; returns false (and writes nothing) if it does not fit.
    static func pushPeriod(_ producer: SPSCRing<Int>.Producer, firstFrame: Int) -> Bool {
        let left = (0 ..< framesPerPeriod).map { sample(frame: firstFrame + $0, channel: 0) }
        let right = (0 ..< framesPerPeriod).map { sample(frame: firstFrame + $0, channel: 1) }
        guard let slices = producer.writableSlices(count: framesPerPeriod * channels) else { return false }
        for frame in 0 ..< framesPerPeriod {
            slices[frame * channels] = left[frame]
            slices[frame * channels + 1] = right[frame]
        }
        producer.commitWrite(count: framesPerPeriod * channels)
        return true
    }

    @Test(
        "periods go in whole or not at all; what comes out is whole periods in order",
        arguments: [6, 7, 11, 16, 18, 31])
    func periodsWholeOrNothing(capacity: Int) {
        let ring = SPSCRing<Int>(capacity: capacity)
        let producer = ring.producer
        let consumer = ring.consumer
        let periodSize = Self.framesPerPeriod * Self.channels
        var expected: [Int] = []
        var received: [Int] = []
        var dropped = 0
        var random = TestRandom(seed: UInt64(capacity))

        for period in 0 ..< 500 {
            let firstFrame = period * Self.framesPerPeriod
            let freeBefore = producer.availableToWrite()
            if Self.pushPeriod(producer, firstFrame: firstFrame) {
                #expect(freeBefore >= periodSize)
                for frame in firstFrame ..< (firstFrame + Self.framesPerPeriod) {
                    for channel in 0 ..< Self.channels { expected.append(Self.sample(frame: frame, channel: channel)) }
                }
            } else {
                #expect(freeBefore < periodSize)
                #expect(producer.availableToWrite() == freeBefore, "a refused period wrote nothing")
                dropped += 1
            }
            // The consumer reads amounts that ignore frame boundaries, and sometimes nothing.
            received += consumer.pop(maxCount: random.next(in: 0 ... (periodSize + 3)))
        }
        received += consumer.pop(maxCount: capacity)

        #expect(!expected.isEmpty, "no period was taken: the comparison below would hold trivially")
        #expect(received == expected)
        #expect(received.count % periodSize == 0)
        // Left and right stay paired on every frame.
        #expect(stride(from: 0, to: received.count, by: 2).allSatisfy { received[$0] + 1 == received[$0 + 1] })
        if capacity < 2 * periodSize { #expect(dropped > 0, "a small ring must refuse some periods") }
    }

    @Test("a period larger than the ring is always refused")
    func periodLargerThanRing() {
        let ring = SPSCRing<Int>(capacity: 5)
        #expect(Self.pushPeriod(ring.producer, firstFrame: 0) == false)
        #expect(ring.producer.availableToWrite() == 5)
        #expect(ring.consumer.availableToRead() == 0)
    }

    @Test("a two-field struct element round-trips through copy(from:) and copy(into:)")
    func structElements() {
        struct Frame: BitwiseCopyable, Equatable {
            var left: Float
            var right: Float
        }
        let ring = SPSCRing<Frame>(capacity: 7)
        let frames = (0 ..< 5).map { Frame(left: Float($0), right: -Float($0)) }
        for round in 0 ..< 10 {
            let block = frames.map { Frame(left: $0.left + Float(round), right: $0.right) }
            #expect(ring.producer.push(block))
            #expect(ring.producer.push(block) == false)
            #expect(ring.consumer.pop(maxCount: 7) == block)
        }
    }

    @Test("partial commits: write four, commit two; read three, commit one")
    func partialCommits() {
        let ring = SPSCRing<Int>(capacity: 4)
        let slices = ring.producer.writableSlices(count: 4)!
        for index in 0 ..< 4 { slices[index] = index }
        ring.producer.commitWrite(count: 2)
        #expect(ring.consumer.availableToRead() == 2)
        #expect(ring.consumer.readableSlices(count: 3) == nil)
        let readable = ring.consumer.readableSlices()
        #expect(readable.count == 2 && readable[0] == 0 && readable[1] == 1)
        ring.consumer.commitRead(count: 1)
        #expect(ring.producer.availableToWrite() == 3)
        #expect(ring.consumer.pop(maxCount: 4) == [1])
    }
}

/// Contract violations trap instead of corrupting the ring.
@Suite("Ring preconditions")
struct RingPreconditionTests {
    @Test func zeroCapacityTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = SPSCRing<Float>(capacity: 0)
        }
    }

    @Test func committingMoreThanFreeTraps() async {
        await #expect(processExitsWith: .failure) {
            let ring = SPSCRing<Float>(capacity: 4)
            ring.producer.commitWrite(count: 5)
        }
    }

    @Test func committingMoreThanReadyTraps() async {
        await #expect(processExitsWith: .failure) {
            let ring = SPSCRing<Float>(capacity: 4)
            _ = ring.producer.push([1, 2] as [Float])
            ring.consumer.commitRead(count: 3)
        }
    }
}

/// `Producer.pushOne`: one element at a time (per-cycle records such as callback timings).
@Suite("Ring single-element push")
struct RingPushOneTests {
    @Test("pushOne fills the ring in order, refuses when full, and wraps", arguments: [1, 2, 3, 5, 8])
    func pushOneInOrder(capacity: Int) {
        let ring = SPSCRing<Int>(capacity: capacity)
        let producer = ring.producer
        let consumer = ring.consumer
        var next = 0
        var expected = 0
        for round in 0 ..< 50 {
            // Fill up: exactly `capacity - (in flight)` pushes succeed, the next one fails.
            while producer.availableToWrite() > 0 {
                #expect(producer.pushOne(next))
                next += 1
            }
            #expect(!producer.pushOne(-1))
            // Take some out (a different amount each round), in order.
            let take = 1 + round % capacity
            let slices = consumer.readableSlices()
            for i in 0 ..< min(take, slices.count) {
                #expect(slices[i] == expected)
                expected += 1
            }
            consumer.commitRead(count: min(take, slices.count))
        }
    }

    /// Compile-time check, as in NoLocksCallers.swift: pushOne is usable from checked code.
    @_noLocks @_noAllocation
    static func realtimePushOne(_ producer: SPSCRing<CycleTiming>.Producer, _ timing: CycleTiming) -> Bool {
        producer.pushOne(timing)
    }

    @Test("a cycle timing goes through pushOne")
    func timingThroughPushOne() {
        let ring = SPSCRing<CycleTiming>(capacity: 2)
        let timing = CycleTiming(
            cycleStartUsecs: 7, latenessUsecs: 1, executionUsecs: 2, periodFrames: 32, periodUsecs: 666)
        #expect(Self.realtimePushOne(ring.producer, timing))
        let recorder = CycleTimingRecorder(timings: ring.producer)
        #expect(recorder.record(cycleStart: 100, periodUsecs: 666, entered: 103, left: 110, frames: 32))
        #expect(!recorder.record(cycleStart: 100, periodUsecs: 666, entered: 103, left: 110, frames: 32))  // full
        let slices = ring.consumer.readableSlices()
        #expect(slices.count == 2)
        #expect(slices[0].cycleStartUsecs == 7)
        #expect(slices[1].cycleStartUsecs == 100 && slices[1].latenessUsecs == 3 && slices[1].executionUsecs == 7)
        #expect(slices[1].periodFrames == 32 && slices[1].periodUsecs == 666)
    }
}
