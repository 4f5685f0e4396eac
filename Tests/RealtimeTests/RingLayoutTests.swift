import Realtime
import Testing

/// Every wrap position × every fill level × every request size, single-threaded.
@Suite("Ring layouts")
struct RingLayoutTests {
    static let capacities = Array(1 ... 9) + [16]

    /// A ring whose positions have been moved to `offset` (by writing and reading `offset`
    /// junk elements), then holding `fill` elements with values `0 ..< fill`.
    func makeRing(capacity: Int, offset: Int, fill: Int) -> SPSCRing<Int> {
        let ring = SPSCRing<Int>(capacity: capacity)
        var moved = 0
        while moved < offset {
            let step = min(capacity, offset - moved)
            let slices = ring.producer.writableSlices(count: step)!
            for index in 0 ..< step { slices[index] = -1 }
            ring.producer.commitWrite(count: step)
            ring.consumer.commitRead(count: ring.consumer.readableSlices(count: step)!.count)
            moved += step
        }
        #expect(ring.producer.push(Array(0 ..< fill)))
        return ring
    }

    @Test("slice shapes, nil when a request does not fit, available counts", arguments: capacities)
    func sliceShapes(capacity: Int) {
        for offset in 0 ..< (2 * capacity) {
            for fill in 0 ... capacity {
                let ring = makeRing(capacity: capacity, offset: offset, fill: fill)
                let producer = ring.producer
                let consumer = ring.consumer
                let free = capacity - fill
                let headSlot = offset % capacity
                let tailSlot = (offset + fill) % capacity
                #expect(producer.availableToWrite() == free)
                #expect(consumer.availableToRead() == fill)

                for request in 0 ... (capacity + 1) {
                    let writable = producer.writableSlices(count: request)
                    if request > free {
                        #expect(writable == nil, "cap \(capacity) offset \(offset) fill \(fill) write \(request)")
                    } else if let writable {
                        #expect(writable.first.count == min(request, capacity - tailSlot))
                        #expect(writable.second.count == request - writable.first.count)
                        if writable.second.count > 0 {
                            // `first` runs to the end of the storage, `second` starts at its beginning.
                            #expect(
                                writable.first.baseAddress! + writable.first.count - capacity == writable.second
                                    .baseAddress!)
                        }
                    } else {
                        Issue.record("writableSlices(count: \(request)) was nil with \(free) free")
                    }

                    let readable = consumer.readableSlices(count: request)
                    if request > fill {
                        #expect(readable == nil, "cap \(capacity) offset \(offset) fill \(fill) read \(request)")
                    } else if let readable {
                        #expect(readable.first.count == min(request, capacity - headSlot))
                        #expect(readable.second.count == request - readable.first.count)
                        #expect((0 ..< request).allSatisfy { readable[$0] == $0 })
                    } else {
                        Issue.record("readableSlices(count: \(request)) was nil with \(fill) ready")
                    }
                }

                let everything = consumer.readableSlices()
                #expect(everything.count == fill)
                #expect(everything.first.count == min(fill, capacity - headSlot))
                // Asking did not move anything.
                #expect(producer.availableToWrite() == free)
                #expect(consumer.availableToRead() == fill)
            }
        }
    }

    @Test("data written through slices reads back in order", arguments: capacities)
    func writeThenReadBack(capacity: Int) {
        for offset in 0 ..< (2 * capacity) {
            for fill in 0 ... capacity {
                for writeCount in 0 ... (capacity - fill) {
                    let ring = makeRing(capacity: capacity, offset: offset, fill: fill)
                    let producer = ring.producer
                    let consumer = ring.consumer

                    let slices = producer.writableSlices(count: writeCount)!
                    for index in 0 ..< writeCount { slices[index] = fill + index }
                    producer.commitWrite(count: writeCount)

                    let total = fill + writeCount
                    #expect(producer.availableToWrite() == capacity - total)
                    #expect(consumer.availableToRead() == total)
                    #expect(producer.writableSlices(count: capacity - total + 1) == nil)

                    // Read back in two uneven steps: slices, then pop.
                    let firstRead = total / 2
                    let readable = consumer.readableSlices(count: firstRead)!
                    #expect((0 ..< firstRead).map { readable[$0] } == Array(0 ..< firstRead))
                    consumer.commitRead(count: firstRead)
                    #expect(consumer.pop(maxCount: capacity + 1) == Array(firstRead ..< total))

                    #expect(consumer.availableToRead() == 0)
                    #expect(producer.availableToWrite() == capacity)
                }
            }
        }
    }

    @Test("push and pop, all or nothing, at every offset", arguments: capacities)
    func pushAndPop(capacity: Int) {
        for offset in 0 ..< (2 * capacity) {
            for pushCount in 0 ... (capacity + 1) {
                let ring = makeRing(capacity: capacity, offset: offset, fill: 0)
                let values = Array(100 ..< (100 + pushCount))
                let pushed = ring.producer.push(values)
                #expect(pushed == (pushCount <= capacity))
                #expect(ring.consumer.availableToRead() == (pushed ? pushCount : 0))
                if pushed {
                    // A push that does not fit the remaining room changes nothing.
                    #expect(ring.producer.push(Array(0 ... (capacity - pushCount))) == false)
                    #expect(ring.consumer.pop(maxCount: 1) == Array(values.prefix(1)))
                    #expect(ring.consumer.pop(maxCount: capacity) == Array(values.dropFirst()))
                }
                #expect(ring.consumer.pop(maxCount: capacity) == [])
            }
        }
    }
}
