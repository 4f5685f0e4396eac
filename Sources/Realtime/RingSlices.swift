/// Free slots of an `SPSCRing` handed to the producer: `count` slots as two contiguous pieces,
/// `first` then `second` (`second` is empty unless the run wraps past the end of the storage).
///
/// Producer thread only, and only until the matching `commitWrite(count:)`; after that the
/// consumer may be reading these slots.
@frozen
public struct RingWriteSlices<Element: BitwiseCopyable> {
    /// The slots from the write position up to the end of the storage (or fewer). Producer thread.
    public let first: UnsafeMutableBufferPointer<Element>
    /// The slots continuing at the start of the storage; empty if the run does not wrap.
    /// Producer thread.
    public let second: UnsafeMutableBufferPointer<Element>

    @inlinable
    init(storage: UnsafeMutablePointer<Element>, capacity: Int, startSlot: Int, count: Int) {
        let firstCount = min(count, capacity - startSlot)
        // SAFETY: startSlot + firstCount <= capacity, so `first` lies inside the storage.
        first = UnsafeMutableBufferPointer(start: storage + startSlot, count: firstCount)
        // SAFETY: count <= capacity, so count - firstCount <= startSlot: `second` ends before `first` begins.
        second = UnsafeMutableBufferPointer(start: storage, count: count - firstCount)
    }

    /// `first.count + second.count`. Producer thread.
    @inlinable
    public var count: Int { first.count + second.count }

    /// The `index`th slot of the run, `0 ..< count`, wherever it falls. Producer thread.
    @inlinable
    public subscript(index: Int) -> Element {
        get {
            precondition(index >= 0 && index < count, "RingWriteSlices index out of range")
            // SAFETY: index < count, so it falls in `first` or, past it, in `second`.
            return index < first.count ? first[index] : second[index - first.count]
        }
        nonmutating set {
            precondition(index >= 0 && index < count, "RingWriteSlices index out of range")
            // SAFETY: index < count, so it falls in `first` or, past it, in `second`; the producer owns these slots.
            if index < first.count { first[index] = newValue } else { second[index - first.count] = newValue }
        }
    }

    /// Copies `source` (exactly `count` elements) into the slots, `first` then `second`.
    /// Producer thread.
    @inlinable
    public func copy(from source: UnsafeBufferPointer<Element>) {
        precondition(source.count == count, "RingWriteSlices.copy: source.count must equal count")
        guard let source = source.baseAddress else { return }  // count == 0
        // Raw byte copies: Element is BitwiseCopyable, and `update(from:count:)` is rejected
        // by `@_noAllocation` in debug builds (it may destroy the old values).
        let size = MemoryLayout<Element>.stride
        // SAFETY: first.count <= source.count; `first` is valid storage the producer owns until commit.
        UnsafeMutableRawPointer(first.baseAddress!).copyMemory(from: source, byteCount: first.count * size)
        // SAFETY: first.count + second.count == source.count, so the rest of `source` is in bounds.
        UnsafeMutableRawPointer(second.baseAddress!).copyMemory(
            from: source + first.count, byteCount: second.count * size)
    }
}

/// Filled slots of an `SPSCRing` handed to the consumer: `count` elements in order, as two
/// contiguous pieces, `first` then `second` (`second` is empty unless the run wraps).
///
/// Consumer thread only, and only until the matching `commitRead(count:)`; after that the
/// producer may overwrite these slots.
@frozen
public struct RingReadSlices<Element: BitwiseCopyable> {
    /// The oldest elements, from the read position up to the end of the storage (or fewer).
    /// Consumer thread.
    public let first: UnsafeBufferPointer<Element>
    /// The elements continuing at the start of the storage; empty if the run does not wrap.
    /// Consumer thread.
    public let second: UnsafeBufferPointer<Element>

    @inlinable
    init(storage: UnsafeMutablePointer<Element>, capacity: Int, startSlot: Int, count: Int) {
        let firstCount = min(count, capacity - startSlot)
        // SAFETY: startSlot + firstCount <= capacity, so `first` lies inside the storage.
        first = UnsafeBufferPointer(start: storage + startSlot, count: firstCount)
        // SAFETY: count <= capacity, so count - firstCount <= startSlot: `second` ends before `first` begins.
        second = UnsafeBufferPointer(start: storage, count: count - firstCount)
    }

    /// `first.count + second.count`. Consumer thread.
    @inlinable
    public var count: Int { first.count + second.count }

    /// The `index`th element of the run, `0 ..< count` (0 is the oldest). Consumer thread.
    @inlinable
    public subscript(index: Int) -> Element {
        precondition(index >= 0 && index < count, "RingReadSlices index out of range")
        // SAFETY: index < count, so it falls in `first` or, past it, in `second`.
        return index < first.count ? first[index] : second[index - first.count]
    }

    /// Copies the `count` elements, in order, to the start of `destination`
    /// (which must hold at least `count`). Consumer thread.
    @inlinable
    public func copy(into destination: UnsafeMutableBufferPointer<Element>) {
        precondition(destination.count >= count, "RingReadSlices.copy: destination too small")
        guard let destination = destination.baseAddress else { return }  // count == 0
        // Raw byte copies, as in `RingWriteSlices.copy(from:)`.
        let size = MemoryLayout<Element>.stride
        // SAFETY: first.count <= destination.count; `first` holds elements the producer published.
        UnsafeMutableRawPointer(destination).copyMemory(from: first.baseAddress!, byteCount: first.count * size)
        // SAFETY: first.count + second.count <= destination.count.
        UnsafeMutableRawPointer(destination + first.count).copyMemory(
            from: second.baseAddress!, byteCount: second.count * size)
    }
}
