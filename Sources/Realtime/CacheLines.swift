// Cache-line-padded blocks for state that two threads must not share a line for. Made and freed
// by the owner; read and written by the threads it hands them to.

import Synchronization

/// A block of cache lines allocated once, for per-thread state that must not share a line
/// with another thread's state (false sharing turns every store into a cross-core miss).
///
/// 128 bytes per line: x86 prefetches lines in adjacent pairs and Apple silicon uses 128-byte
/// lines, so 128 is what crossbeam's `CachePadded` and rtrb use.
@usableFromInline
internal struct CacheLines {
    @usableFromInline static var lineSize: Int { 128 }

    @usableFromInline let base: UnsafeMutableRawPointer
    @usableFromInline let count: Int

    /// Allocates `count` zeroed lines. Before sharing.
    init(count: Int) {
        precondition(count > 0)
        self.count = count
        base = .allocate(byteCount: count * Self.lineSize, alignment: Self.lineSize)
        // SAFETY: the allocation is exactly count * lineSize bytes.
        base.initializeMemory(as: UInt8.self, repeating: 0, count: count * Self.lineSize)
    }

    /// Start of line `index`. Any thread.
    func line(_ index: Int) -> UnsafeMutableRawPointer {
        precondition(index >= 0 && index < count)
        // SAFETY: index < count, so the line lies inside the allocation.
        return base + index * Self.lineSize
    }

    /// Places an `Atomic<Int>` holding `value` at the start of line `index`.
    func makeAtomic(onLine index: Int, value: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        // SAFETY: a line is 128 bytes, aligned to 128, larger than Atomic<Int>'s size and alignment.
        let pointer = line(index).bindMemory(to: Atomic<Int>.self, capacity: 1)
        pointer.initialize(to: Atomic(value))
        return pointer
    }

    /// Places a plain `Int` holding `value` at the start of line `index`.
    func makeInt(onLine index: Int, value: Int) -> UnsafeMutablePointer<Int> {
        // SAFETY: a line is 128 bytes, aligned to 128, larger than Int's size and alignment.
        let pointer = line(index).bindMemory(to: Int.self, capacity: 1)
        pointer.initialize(to: value)
        return pointer
    }

    /// Frees the block. The owner's deinit, after every `Atomic` on it was deinitialized.
    func deallocate() {
        // SAFETY: called once, by the owner's deinit, when nothing can reach the lines any more.
        base.deallocate()
    }
}
