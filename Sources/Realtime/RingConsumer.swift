// The reading end of SPSCRing. The consumer thread only (the writer thread, the main thread).

import Synchronization

extension SPSCRing {
    /// The reading end of an `SPSCRing`: a copyable struct of unsafe pointers into the ring.
    ///
    /// All methods belong to the consumer thread: one thread at a time, which must not change
    /// while the ring is in use without outside synchronization. Copies share the same state.
    /// Valid only while the ring object is alive. No method locks, allocates or retains.
    @frozen
    public struct Consumer: @unchecked Sendable {
        /// How many elements the ring holds when full. Any thread.
        public let capacity: Int

        @usableFromInline let storage: UnsafeMutablePointer<Element>
        @usableFromInline let positions: RingPositions

        @inlinable
        init(storage: UnsafeMutablePointer<Element>, capacity: Int, positions: RingPositions) {
            self.storage = storage
            self.capacity = capacity
            self.positions = positions
        }

        /// Elements ready to read right now. Always loads the producer's position (touches its
        /// cache line). Consumer thread.
        @inlinable
        public func availableToRead() -> Int {
            RingPositions.distance(from: ownHead(), to: reloadTail(), capacity: capacity)
        }

        /// The next `count` elements, oldest first, as one or two pieces, or `nil` if fewer than
        /// `count` are ready (whole or nothing). Then `commitRead(count:)` to free them; calling
        /// this again without committing returns the same elements. Consumer thread.
        @inlinable
        public func readableSlices(count: Int) -> RingReadSlices<Element>? {
            precondition(count >= 0, "readableSlices: negative count")
            let head = ownHead()
            guard readyCount(atLeast: count, head: head) >= count else { return nil }
            return RingReadSlices(
                storage: storage, capacity: capacity,
                startSlot: RingPositions.slot(head, capacity: capacity), count: count)
        }

        /// Every element ready right now, oldest first, as one or two pieces (possibly empty).
        /// Then `commitRead(count:)` with as many as were used. Consumer thread.
        @inlinable
        public func readableSlices() -> RingReadSlices<Element> {
            let head = ownHead()
            return RingReadSlices(
                storage: storage, capacity: capacity,
                startSlot: RingPositions.slot(head, capacity: capacity),
                count: RingPositions.distance(from: head, to: reloadTail(), capacity: capacity))
        }

        /// Frees the oldest `count` elements (those at the start of the last readable slices) for
        /// the producer. `count` must not exceed the elements last seen ready. Consumer thread.
        @inlinable
        public func commitRead(count: Int) {
            let head = ownHead()
            let known = RingPositions.distance(from: head, to: cachedTail(), capacity: capacity)
            precondition(count >= 0 && count <= known, "commitRead: more than the elements ready")
            // Releasing: our reads of the freed slots happen-before the producer's acquiring load
            // of head, and so before it overwrites them.
            // SAFETY: `head` lives as long as the ring; only the consumer stores it.
            positions.head.pointee.store(
                RingPositions.advance(head, by: count, capacity: capacity), ordering: .releasing)
        }

        /// Copies up to `destination.count` of the oldest elements to the start of
        /// `destination`, frees them, and returns how many. Consumer thread.
        @inlinable
        public func pop(into destination: UnsafeMutableBufferPointer<Element>) -> Int {
            let head = ownHead()
            let count = min(destination.count, readyCount(atLeast: destination.count, head: head))
            guard count > 0 else { return 0 }
            let slices = RingReadSlices(
                storage: storage, capacity: capacity,
                startSlot: RingPositions.slot(head, capacity: capacity), count: count)
            slices.copy(into: destination)
            commitRead(count: count)
            return count
        }

        // MARK: position helpers

        /// The consumer's own position; relaxed because only this side stores it.
        @inlinable @inline(__always)
        func ownHead() -> Int {
            // SAFETY: `head` lives as long as the ring; only the consumer stores it, so we read our own last store.
            positions.head.pointee.load(ordering: .relaxed)
        }

        /// The producer's position as last seen by the consumer; may be stale (too small),
        /// which only under-reports the elements ready.
        @inlinable @inline(__always)
        func cachedTail() -> Int {
            // SAFETY: the cached tail is on a line only the consumer thread reads or writes.
            positions.consumerCachedTail.pointee
        }

        /// Loads the producer's position and remembers it.
        @inlinable @inline(__always)
        func reloadTail() -> Int {
            // Acquiring: pairs with the producer's releasing store, so the slot contents it
            // wrote before committing are visible to our reads.
            // SAFETY: `tail` lives as long as the ring; atomic load.
            let tail = positions.tail.pointee.load(ordering: .acquiring)
            // SAFETY: the cached tail is on a line only the consumer thread reads or writes.
            positions.consumerCachedTail.pointee = tail
            return tail
        }

        /// The elements ready after `head`: the cached count if it already reaches `wanted`,
        /// otherwise a fresh count from the producer's position.
        @inlinable @inline(__always)
        func readyCount(atLeast wanted: Int, head: Int) -> Int {
            let cached = RingPositions.distance(from: head, to: cachedTail(), capacity: capacity)
            if cached >= wanted { return cached }
            return RingPositions.distance(from: head, to: reloadTail(), capacity: capacity)
        }
    }
}
