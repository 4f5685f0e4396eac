import Realtime
import Synchronization
import Testing

// These functions are the compile-time check: `@_noLocks @_noAllocation` callers in another
// module than `Realtime`, with concrete element types. If any ring or mailbox method on the hot
// path locked, allocated, retained or stayed unspecialized, this file would not compile (debug
// and `-c release` both check).

struct StereoSample: BitwiseCopyable, Equatable {
    var left: Float
    var right: Float
}

/// What a capture kernel does: push a period, or count it as dropped.
@_noLocks @_noAllocation
func realtimePushFloat(_ producer: SPSCRing<Float>.Producer, _ period: UnsafeBufferPointer<Float>) -> Bool {
    if producer.availableToWrite() < period.count { return false }
    return producer.push(period)
}

/// Interleaving straight into the ring through the slices.
@_noLocks @_noAllocation
func realtimeInterleave(
    _ producer: SPSCRing<Float>.Producer,
    _ left: UnsafeBufferPointer<Float>, _ right: UnsafeBufferPointer<Float>
) -> Bool {
    guard let slices = producer.writableSlices(count: 2 * left.count) else { return false }
    for frame in 0 ..< left.count {
        slices[2 * frame] = left[frame]
        slices[2 * frame + 1] = right[frame]
    }
    producer.commitWrite(count: slices.count)
    return true
}

/// Reading through the slices: everything available, copied and freed.
@_noLocks @_noAllocation
func realtimeDrainFloat(_ consumer: SPSCRing<Float>.Consumer, _ destination: UnsafeMutableBufferPointer<Float>) -> Int {
    let count = min(consumer.readableSlices().count, destination.count)
    guard let slices = consumer.readableSlices(count: count) else { return -1 }
    slices.copy(into: destination)
    consumer.commitRead(count: count)
    return count
}

@_noLocks @_noAllocation
func realtimePopFloat(_ consumer: SPSCRing<Float>.Consumer, _ destination: UnsafeMutableBufferPointer<Float>) -> (
    popped: Int, left: Int
) {
    let popped = consumer.pop(into: destination)
    return (popped, consumer.availableToRead())
}

@_noLocks @_noAllocation
func realtimeRoundTripStruct(
    _ producer: SPSCRing<StereoSample>.Producer, _ consumer: SPSCRing<StereoSample>.Consumer,
    _ source: UnsafeBufferPointer<StereoSample>,
    _ destination: UnsafeMutableBufferPointer<StereoSample>
) -> Int {
    guard producer.push(source) else { return -1 }
    return consumer.pop(into: destination)
}

/// What a meter kernel does: fill the back slot and publish, through the pointer-only view
/// and through the mailbox object passed as a parameter.
@_noLocks @_noAllocation
func realtimePublish(
    _ writer: LatestValueMailbox<StereoSample>.Writer, _ mailbox: LatestValueMailbox<Float>, _ value: Float
) {
    let back = writer.writeBuffer()
    for index in 0 ..< back.count { back[index] = StereoSample(left: value, right: -value) }
    writer.publish()
    let levels = mailbox.writeBuffer()
    for index in 0 ..< levels.count { levels[index] = value }
    mailbox.publish()
}

@_noLocks @_noAllocation
func realtimeReadLatest(_ reader: LatestValueMailbox<StereoSample>.Reader) -> StereoSample? {
    let (snapshot, isFresh) = reader.readLatest()
    return isFresh && snapshot.count > 0 ? snapshot[0] : nil
}

/// What every kernel does once a cycle: count it.
@_noLocks @_noAllocation
func realtimeCountCycle(_ cycles: UnsafePointer<Atomic<UInt64>>) {
    cycles.pointee.incrementBySoleWriter()
}

@Suite("Realtime-annotated callers")
struct NoLocksCallerTests {
    @Test("@_noLocks @_noAllocation callers compile and work for Float and a two-field struct")
    func callersWork() {
        let ring = SPSCRing<Float>(capacity: 10)
        let period: [Float] = [1, 2, 3, 4]
        #expect(period.withUnsafeBufferPointer { realtimePushFloat(ring.producer, $0) })
        let left: [Float] = [5, 7, 9]
        let right: [Float] = [6, 8, 10]
        #expect(
            left.withUnsafeBufferPointer { l in
                right.withUnsafeBufferPointer { r in realtimeInterleave(ring.producer, l, r) }
            })
        #expect(
            left.withUnsafeBufferPointer { l in
                right.withUnsafeBufferPointer { r in realtimeInterleave(ring.producer, l, r) }
            } == false)
        var output = [Float](repeating: 0, count: 16)
        let popped = output.withUnsafeMutableBufferPointer {
            realtimePopFloat(ring.consumer, UnsafeMutableBufferPointer(rebasing: $0[0 ..< 3]))
        }
        #expect(popped == (3, 7))
        let drained = output.withUnsafeMutableBufferPointer {
            realtimeDrainFloat(ring.consumer, UnsafeMutableBufferPointer(rebasing: $0[3...]))
        }
        #expect(drained == 7)
        #expect(Array(output.prefix(10)) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])

        let stereoRing = SPSCRing<StereoSample>(capacity: 3)
        let source = [StereoSample(left: 1, right: 2), StereoSample(left: 3, right: 4)]
        var destination = [StereoSample](repeating: StereoSample(left: 0, right: 0), count: 3)
        let moved = source.withUnsafeBufferPointer { s in
            destination.withUnsafeMutableBufferPointer { d in
                realtimeRoundTripStruct(stereoRing.producer, stereoRing.consumer, s, d)
            }
        }
        #expect(moved == 2)
        #expect(Array(destination.prefix(2)) == source)

        let meters = LatestValueMailbox<StereoSample>(count: 2, initial: StereoSample(left: 0, right: 0))
        let levels = LatestValueMailbox<Float>(count: 2, initial: 0)
        #expect(realtimeReadLatest(meters.reader) == nil)
        realtimePublish(meters.writer, levels, 0.5)
        #expect(realtimeReadLatest(meters.reader) == StereoSample(left: 0.5, right: -0.5))
        #expect(Array(levels.readLatest().0) == [0.5, 0.5])

        let cycles = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)
        defer { cycles.deallocate() }
        cycles.initialize(to: Atomic(UInt64.max))
        realtimeCountCycle(cycles)
        realtimeCountCycle(cycles)
        #expect(cycles.pointee.load(ordering: .relaxed) == 1)  // wraps, never traps
    }
}
