import Foundation
import Realtime

/// Runs each body on its own `Foundation.Thread` and returns when all have finished.
/// Dedicated threads, not tasks: the bodies spin, which must not starve the test runner's pool.
func runOnThreads(_ bodies: [@Sendable () -> Void]) async {
    await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
        let group = DispatchGroup()
        for body in bodies {
            group.enter()
            let thread = Thread {
                body()
                group.leave()
            }
            thread.start()
        }
        group.notify(queue: .global()) { finished.resume() }
    }
}

/// A small deterministic generator (xorshift64*) so stress runs are repeatable.
struct TestRandom {
    var state: UInt64

    init(seed: UInt64) { state = seed | 1 }

    /// A value in `range`.
    mutating func next(in range: ClosedRange<Int>) -> Int {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        let value = state &* 2_685_821_657_736_338_717
        return range.lowerBound + Int(value % UInt64(range.count))
    }
}

/// Gives up the processor while spinning, so two spinning threads share two cores with the
/// rest of the test run.
func yieldProcessor() {
    _ = sched_yield()
}

extension SPSCRing.Producer {
    /// `push` for an array, for tests.
    func push(_ values: [Element]) -> Bool {
        values.withUnsafeBufferPointer { push($0) }
    }
}

extension SPSCRing.Consumer {
    /// Pops up to `maxCount` elements into a new array, for tests.
    func pop(maxCount: Int) -> [Element] {
        guard maxCount > 0 else { return [] }
        return [Element](unsafeUninitializedCapacity: maxCount) { buffer, initialized in
            initialized = pop(into: buffer)
        }
    }
}
