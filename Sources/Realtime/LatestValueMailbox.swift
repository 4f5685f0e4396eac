// The latest-value mailbox (a triple buffer): the realtime thread publishes meter snapshots, the
// UI reads the newest. One writer thread, one reader thread.

import Synchronization

/// A lock-free triple buffer: one writer thread (e.g. the realtime thread) publishes snapshots
/// of `count` elements, one reader thread (e.g. the UI) reads the latest one. Neither ever waits
/// for the other, and a snapshot is never torn.
///
/// Three slots: the writer's *back* slot, the *middle* slot, the reader's *front* slot. The
/// writer fills its back slot and `publish()` swaps it with the middle one, marking the middle
/// fresh; `readLatest()` swaps a fresh middle with the front slot. The middle slot's index and
/// the fresh bit share one `Atomic<Int>`, changed only by `exchange`, so each slot belongs to
/// exactly one side at a time.
///
/// For use from a kernel that holds only pointers, take `writer` and `reader`: copyable structs
/// of unsafe pointers, valid while this mailbox is alive. The methods on the mailbox itself do
/// the same when you hold the mailbox object (as a parameter, not loaded from another object's
/// stored property, in `@_noLocks` code).
public final class LatestValueMailbox<Element: BitwiseCopyable>: @unchecked Sendable {
    /// Elements per snapshot. Any thread.
    public let count: Int

    @usableFromInline let slots: MailboxSlots<Element>
    let lines: CacheLines

    /// Allocates three slots of `count` elements, all set to `initial`. Before sharing.
    public init(count: Int, initial: Element) {
        precondition(count >= 0, "LatestValueMailbox count must not be negative")
        self.count = count
        lines = CacheLines(count: 3)
        // Pad each slot by one cache line so neighbouring slots never share a line.
        let padding = (CacheLines.lineSize + MemoryLayout<Element>.stride - 1) / MemoryLayout<Element>.stride
        let stride = count + padding
        let storage = UnsafeMutablePointer<Element>.allocate(capacity: 3 * stride)
        // SAFETY: the allocation holds exactly 3 * stride elements.
        storage.initialize(repeating: initial, count: 3 * stride)
        slots = MailboxSlots(
            storage: storage, stride: stride, count: count,
            // Front 0 (reader), middle 1 (not fresh), back 2 (writer).
            state: lines.makeAtomic(onLine: 0, value: 1),
            writerBack: lines.makeInt(onLine: 1, value: 2),
            readerFront: lines.makeInt(onLine: 2, value: 0))
    }

    deinit {
        // SAFETY: no Writer or Reader may be used after the mailbox is gone (documented).
        slots.state.deinitialize(count: 1)
        slots.storage.deallocate()
        lines.deallocate()
    }

    /// The writing end. Hand it to exactly one thread; valid while this mailbox is alive.
    /// Any thread may create it.
    @inlinable
    public var writer: Writer { Writer(slots: slots) }

    /// The reading end. Hand it to exactly one thread; valid while this mailbox is alive.
    /// Any thread may create it.
    @inlinable
    public var reader: Reader { Reader(slots: slots) }

    /// The writer's private back slot (`count` elements); fill all of it, then `publish()`.
    /// It holds an older snapshot, not the last one published. Writer thread.
    @inlinable
    public func writeBuffer() -> UnsafeMutableBufferPointer<Element> { writer.writeBuffer() }

    /// Makes the back slot the latest snapshot and takes a new back slot. Writer thread.
    @inlinable
    public func publish() { writer.publish() }

    /// The latest published snapshot (or the initial one), and whether it is new since the
    /// previous call. Valid until the next `readLatest()`. Reader thread.
    @inlinable
    public func readLatest() -> (UnsafeBufferPointer<Element>, isFresh: Bool) { reader.readLatest() }

    /// The writing end of a `LatestValueMailbox`. Writer thread only (one thread at a time);
    /// valid while the mailbox is alive. Never locks, allocates or retains.
    @frozen
    public struct Writer: @unchecked Sendable {
        @usableFromInline let slots: MailboxSlots<Element>

        @inlinable
        init(slots: MailboxSlots<Element>) { self.slots = slots }

        /// The private back slot (`count` elements); fill all of it, then `publish()`. Its
        /// contents are an older snapshot. Writer thread.
        @inlinable
        public func writeBuffer() -> UnsafeMutableBufferPointer<Element> {
            // SAFETY: writerBack is on a line only the writer reads or writes.
            let back = slots.writerBack.pointee
            // SAFETY: back is in 0..<3 and no other side owns that slot until we publish it.
            return UnsafeMutableBufferPointer(start: slots.slot(back), count: slots.count)
        }

        /// Makes the back slot the latest snapshot (the middle, marked fresh) and takes the old
        /// middle as the new back slot. Writer thread.
        @inlinable
        public func publish() {
            // SAFETY: writerBack is on a line only the writer reads or writes.
            let back = slots.writerBack.pointee
            // Releasing: our writes to `back` happen-before the reader's acquiring exchange.
            // Acquiring: the reader's reads of the slot we get back (it released it) are done.
            // SAFETY: `state` lives as long as the mailbox; atomic exchange.
            let old = slots.state.pointee.exchange(
                back | MailboxSlots<Element>.freshBit, ordering: .acquiringAndReleasing)
            // SAFETY: writerBack is on a line only the writer reads or writes.
            slots.writerBack.pointee = old & MailboxSlots<Element>.indexMask
        }
    }

    /// The reading end of a `LatestValueMailbox`. Reader thread only (one thread at a time);
    /// valid while the mailbox is alive. Never locks, allocates or retains.
    @frozen
    public struct Reader: @unchecked Sendable {
        @usableFromInline let slots: MailboxSlots<Element>

        @inlinable
        init(slots: MailboxSlots<Element>) { self.slots = slots }

        /// The latest published snapshot (or the initial one), and whether it is new since the
        /// previous call. The buffer stays valid and unchanged until the next `readLatest()`.
        /// Reader thread.
        @inlinable
        public func readLatest() -> (UnsafeBufferPointer<Element>, isFresh: Bool) {
            // SAFETY: readerFront is on a line only the reader reads or writes.
            var front = slots.readerFront.pointee
            // Relaxed: only a peek. Only the reader clears the fresh bit, so if it is set now it
            // is still set at the exchange, which does the acquiring.
            // SAFETY: `state` lives as long as the mailbox; atomic load.
            let isFresh = slots.state.pointee.load(ordering: .relaxed) & MailboxSlots<Element>.freshBit != 0
            if isFresh {
                // Acquiring: the writer's writes to the slot we take happen-before our reads.
                // Releasing: our reads of the old front happen-before the writer reuses it.
                // SAFETY: `state` lives as long as the mailbox; atomic exchange.
                let old = slots.state.pointee.exchange(front, ordering: .acquiringAndReleasing)
                front = old & MailboxSlots<Element>.indexMask
                // SAFETY: readerFront is on a line only the reader reads or writes.
                slots.readerFront.pointee = front
            }
            // SAFETY: front is in 0..<3 and the writer never touches the reader's front slot.
            return (UnsafeBufferPointer(start: slots.slot(front), count: slots.count), isFresh)
        }
    }
}

/// The pointers shared by a mailbox's writer and reader.
@usableFromInline
internal struct MailboxSlots<Element: BitwiseCopyable> {
    /// Bits 0–1 of `state`: the middle slot's index.
    @inlinable static var indexMask: Int { 0b011 }
    /// Bit 2 of `state`: set by `publish`, cleared when the reader takes the middle slot.
    @inlinable static var freshBit: Int { 0b100 }

    /// Three slots, `stride` elements apart, `count` used in each.
    @usableFromInline let storage: UnsafeMutablePointer<Element>
    @usableFromInline let stride: Int
    @usableFromInline let count: Int
    /// Middle slot index | fresh bit. Changed only by `exchange`.
    @usableFromInline let state: UnsafeMutablePointer<Atomic<Int>>
    /// The writer's back slot index (writer only).
    @usableFromInline let writerBack: UnsafeMutablePointer<Int>
    /// The reader's front slot index (reader only).
    @usableFromInline let readerFront: UnsafeMutablePointer<Int>

    /// Start of slot `index` (0, 1 or 2).
    @inlinable @inline(__always)
    func slot(_ index: Int) -> UnsafeMutablePointer<Element> {
        precondition(index >= 0 && index < 3)
        // SAFETY: index < 3 and the storage holds 3 * stride elements.
        return storage + index * stride
    }
}
