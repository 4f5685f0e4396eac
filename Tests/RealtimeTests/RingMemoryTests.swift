import Glibc
import Realtime
import Testing

/// A new ring has touched its pages on the thread that made it, so the producer (in micmon, the
/// realtime thread) never takes a page fault on its first pass through the storage.
@Suite("Ring memory")
struct RingMemoryTests {
    /// Minor page faults the calling thread has taken (`getrusage(RUSAGE_THREAD)`; the constant
    /// is a GNU extension that Swift's Glibc module does not show, so it is spelled out: 1).
    static func threadMinorFaults() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage)
        return usage.ru_minflt
    }

    @Test("the first pass through a new 16 MB ring takes no page faults on the producer")
    func firstPassTakesNoPageFaults() {
        let capacity = 4 << 20  // floats: 16 MB, 4096 pages, mapped fresh by malloc
        let ring = SPSCRing<Float>(capacity: capacity)
        let producer = ring.producer
        let block = 4096
        let before = Self.threadMinorFaults()
        var written = 0
        while written < capacity {
            guard let slices = producer.writableSlices(count: block) else { break }
            slices.first.update(repeating: 1)
            slices.second.update(repeating: 1)
            producer.commitWrite(count: block)
            written += block
        }
        let faults = Self.threadMinorFaults() - before
        #expect(written == capacity)
        // Untouched, the pass faults once per page (4096); a few stray faults (the test
        // runner's own stack or heap) are not the ring's.
        #expect(faults < 64, "\(faults) page faults while writing 4096 fresh pages")
    }
}
