// Counters written by one thread only (the realtime thread's cycle counts), read by any.

import Synchronization

extension Atomic where Value == UInt64 {
    /// Adds one, for a counter only one thread ever writes (others may read it at any time): a
    /// relaxed load and store, not a locked read-modify-write, which this thread does not need.
    /// The writing thread only, e.g. the realtime thread's cycle counters.
    @inlinable
    public func incrementBySoleWriter() {
        store(load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }
}
