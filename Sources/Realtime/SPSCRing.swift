// The lock-free single-producer single-consumer ring and its storage. Made before sharing; each
// end then belongs to one thread (RingProducer.swift, RingConsumer.swift).

import Synchronization

/// A fixed-capacity, lock-free, single-producer single-consumer ring of trivially copyable
/// elements, after rtrb (Rust).
///
/// - Positions (`head` for reading, `tail` for writing) run over `0 ..< 2·capacity`, so a full
///   ring (`tail - head == capacity`) and an empty one (`tail == head`) differ without a wasted
///   slot. The slot of a position is `position mod capacity`; any capacity works.
/// - `head` and `tail` are atomics on separate cache lines. Each side keeps a cached copy of the
///   other side's position on a line of its own and reloads the real one only when its cached
///   view does not show enough room (producer) or data (consumer).
/// - Each side publishes its position with a `.releasing` store and reads the other side's with
///   an `.acquiring` load, so slot contents written before a publish are visible after the load.
///
/// Use it through `producer` (one thread) and `consumer` (one other thread). Those are plain
/// structs of unsafe pointers: copying them costs no reference counting, and their methods are
/// `@inlinable`, so they can be called from `@_noLocks @_noAllocation` code in other modules.
/// They are valid only while this ring object is alive: keep a strong reference to the ring
/// for as long as any `Producer` or `Consumer` is in use.
public final class SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
    /// How many elements the ring holds when full. Any thread.
    public let capacity: Int

    @usableFromInline let storage: UnsafeMutablePointer<Element>
    @usableFromInline let positions: RingPositions
    let lines: CacheLines

    /// Allocates a ring of `capacity` elements (any value > 0). Only slots the producer wrote
    /// are ever handed to the consumer. Before sharing.
    ///
    /// Every byte of the storage is written (zeroed) here, so that its pages are faulted in now,
    /// on the thread that creates the ring, and the realtime producer takes no page fault on its
    /// first pass.
    public init(capacity: Int) {
        precondition(capacity > 0, "SPSCRing capacity must be positive")
        // Positions stay below 2·capacity and position + count below 3·capacity.
        precondition(capacity <= Int.max / 4, "SPSCRing capacity too large")
        self.capacity = capacity
        let byteCount = capacity * MemoryLayout<Element>.stride
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: MemoryLayout<Element>.alignment)
        // SAFETY: the allocation is exactly byteCount bytes; the zeroes are there only to touch
        // the pages.
        bytes.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        // SAFETY: the whole allocation, rebound to Element; no slot is read before the producer writes it.
        storage = bytes.bindMemory(to: Element.self, capacity: capacity)
        lines = CacheLines(count: 4)
        positions = RingPositions(lines: lines)
    }

    deinit {
        // SAFETY: no Producer or Consumer may be used once the ring is gone (documented above).
        positions.head.deinitialize(count: 1)
        positions.tail.deinitialize(count: 1)
        storage.deallocate()
        lines.deallocate()
    }

    /// The writing end. Hand it to exactly one thread (the producer, e.g. the JACK realtime
    /// thread); valid while this ring is alive. Any thread may create it.
    @inlinable
    public var producer: Producer {
        Producer(storage: storage, capacity: capacity, positions: positions)
    }

    /// The reading end. Hand it to exactly one thread (the consumer, e.g. the writer thread);
    /// valid while this ring is alive. Any thread may create it.
    @inlinable
    public var consumer: Consumer {
        Consumer(storage: storage, capacity: capacity, positions: positions)
    }
}

/// Where the ring's positions live: four cache lines (see `CacheLines`), each stored to by
/// one side only.
///
/// | line | holds                    | stored by | loaded by                      |
/// |------|--------------------------|-----------|--------------------------------|
/// | 0    | `head` (atomic)          | consumer  | consumer, producer (acquiring) |
/// | 1    | `tail` (atomic)          | producer  | producer, consumer (acquiring) |
/// | 2    | producer's cached `head` | producer  | producer only                  |
/// | 3    | consumer's cached `tail` | consumer  | consumer only                  |
@usableFromInline
internal struct RingPositions {
    @usableFromInline let head: UnsafeMutablePointer<Atomic<Int>>
    @usableFromInline let tail: UnsafeMutablePointer<Atomic<Int>>
    @usableFromInline let producerCachedHead: UnsafeMutablePointer<Int>
    @usableFromInline let consumerCachedTail: UnsafeMutablePointer<Int>

    /// Places the four values on the four lines of `lines`. Before sharing.
    init(lines: CacheLines) {
        head = lines.makeAtomic(onLine: 0, value: 0)
        tail = lines.makeAtomic(onLine: 1, value: 0)
        producerCachedHead = lines.makeInt(onLine: 2, value: 0)
        consumerCachedTail = lines.makeInt(onLine: 3, value: 0)
    }

    /// How many elements lie between `head` and `tail` (both in `0 ..< 2·capacity`);
    /// the result is in `0 ... capacity`.
    @inlinable @inline(__always)
    static func distance(from head: Int, to tail: Int, capacity: Int) -> Int {
        tail >= head ? tail - head : tail - head + 2 * capacity
    }

    /// `position + count`, wrapped into `0 ..< 2·capacity` (`count` is at most `capacity`).
    @inlinable @inline(__always)
    static func advance(_ position: Int, by count: Int, capacity: Int) -> Int {
        let next = position + count
        return next >= 2 * capacity ? next - 2 * capacity : next
    }

    /// The storage index of a position: `position mod capacity`, in `0 ..< capacity`.
    @inlinable @inline(__always)
    static func slot(_ position: Int, capacity: Int) -> Int {
        position >= capacity ? position - capacity : position
    }
}
