// The writing end of SPSCRing. The producer thread only (the realtime thread, a notification
// thread, the playback reader).

import Synchronization

extension SPSCRing {
    /// The writing end of an `SPSCRing`: a copyable struct of unsafe pointers into the ring.
    ///
    /// All methods belong to the producer thread: one thread at a time, which must not change
    /// while the ring is in use without outside synchronization. Copies share the same state.
    /// Valid only while the ring object is alive. No method locks, allocates or retains, so they
    /// may be called from `@_noLocks @_noAllocation` code (e.g. the JACK process callback).
    @frozen
    public struct Producer: @unchecked Sendable {
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

        /// Free slots right now. Always loads the consumer's position (touches its cache line).
        /// Producer thread.
        @inlinable
        public func availableToWrite() -> Int {
            capacity - RingPositions.distance(from: reloadHead(), to: ownTail(), capacity: capacity)
        }

        /// The next `count` free slots, as one or two pieces, or `nil` if fewer than `count` are
        /// free (whole or nothing). Fill all of them, then `commitWrite(count:)`; calling this
        /// again without committing returns the same slots. `count` may be 0. Producer thread.
        @inlinable
        public func writableSlices(count: Int) -> RingWriteSlices<Element>? {
            precondition(count >= 0, "writableSlices: negative count")
            let tail = ownTail()
            guard hasRoom(for: count, tail: tail) else { return nil }
            return RingWriteSlices(
                storage: storage, capacity: capacity,
                startSlot: RingPositions.slot(tail, capacity: capacity), count: count)
        }

        /// Hands the first `count` slots of the last `writableSlices` to the consumer.
        /// `count` must not exceed the free slots last seen. Producer thread.
        @inlinable
        public func commitWrite(count: Int) {
            let tail = ownTail()
            let known = capacity - RingPositions.distance(from: cachedHead(), to: tail, capacity: capacity)
            precondition(count >= 0 && count <= known, "commitWrite: more than the free slots")
            // Releasing: the slot writes above happen-before the consumer's acquiring load of tail.
            // SAFETY: `tail` lives as long as the ring; only the producer stores it.
            positions.tail.pointee.store(
                RingPositions.advance(tail, by: count, capacity: capacity), ordering: .releasing)
        }

        /// Copies all of `source` into the ring and commits it, or copies nothing and returns
        /// `false` if it does not fit. Producer thread.
        @inlinable
        public func push(_ source: UnsafeBufferPointer<Element>) -> Bool {
            guard let slices = writableSlices(count: source.count) else { return false }
            slices.copy(from: source)
            commitWrite(count: source.count)
            return true
        }

        /// Appends one element and commits it, or returns `false` (and writes nothing) when the
        /// ring is full. The one-element case of `push(_:)`, without building slices: a few
        /// instructions on the hot path (per-cycle records such as callback timings).
        /// Producer thread.
        @inlinable @inline(__always)
        public func pushOne(_ element: Element) -> Bool {
            let tail = ownTail()
            guard hasRoom(for: 1, tail: tail) else { return false }
            // SAFETY: the slot is free (checked above) and only the producer writes free slots.
            storage[RingPositions.slot(tail, capacity: capacity)] = element
            // Releasing: the slot write above happens-before the consumer's acquiring load of tail.
            // SAFETY: `tail` lives as long as the ring; only the producer stores it.
            positions.tail.pointee.store(RingPositions.advance(tail, by: 1, capacity: capacity), ordering: .releasing)
            return true
        }

        // MARK: position helpers

        /// The producer's own position; relaxed because only this side stores it.
        @inlinable @inline(__always)
        func ownTail() -> Int {
            // SAFETY: `tail` lives as long as the ring; only the producer stores it, so we read our own last store.
            positions.tail.pointee.load(ordering: .relaxed)
        }

        /// The consumer's position as last seen by the producer; may be stale (too small),
        /// which only under-reports free space.
        @inlinable @inline(__always)
        func cachedHead() -> Int {
            // SAFETY: the cached head is on a line only the producer thread reads or writes.
            positions.producerCachedHead.pointee
        }

        /// Loads the consumer's position and remembers it.
        @inlinable @inline(__always)
        func reloadHead() -> Int {
            // Acquiring: pairs with the consumer's releasing store, so its reads of the slots it
            // freed are finished before we overwrite them.
            // SAFETY: `head` lives as long as the ring; atomic load.
            let head = positions.head.pointee.load(ordering: .acquiring)
            // SAFETY: the cached head is on a line only the producer thread reads or writes.
            positions.producerCachedHead.pointee = head
            return head
        }

        /// Whether `count` slots are free after `tail`, looking at the consumer's line only if
        /// the cached view says no.
        @inlinable @inline(__always)
        func hasRoom(for count: Int, tail: Int) -> Bool {
            if capacity - RingPositions.distance(from: cachedHead(), to: tail, capacity: capacity) >= count {
                return true
            }
            return capacity - RingPositions.distance(from: reloadHead(), to: tail, capacity: capacity) >= count
        }
    }
}
