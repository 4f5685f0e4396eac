// POSIX threads for micmon's non-realtime work (the writer, the playback reader, the watchdog)
// and the wake-up one thread gives another. Created and joined by the thread that owns them.

import CPlatform
import Glibc

/// A POSIX thread running one closure, joined with `pthread_join`. Create it on the owning
/// thread, which must call `join()` (or let it go with `detach()`) exactly once.
public final class WorkerThread: @unchecked Sendable {
    private var thread = pthread_t()
    private var isJoined = false

    /// Starts `body` on a new thread with a 1 MiB stack; nil when the system has no thread to
    /// give. Any non-realtime thread.
    public init?(_ body: @escaping @Sendable () -> Void) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 1 << 20)
        let box = Unmanaged.passRetained(WorkerBody(body)).toOpaque()
        guard pthread_create(&thread, &attributes, workerThreadMain, box) == 0 else {
            Unmanaged<WorkerBody>.fromOpaque(box).release()
            return nil
        }
    }

    /// Waits until the body has returned. Safe to call twice. The owning thread.
    public func join() {
        guard !isJoined else { return }
        isJoined = true
        pthread_join(thread, nil)
    }

    /// Lets the thread run on without a join (it frees itself when its body returns). The
    /// owning thread, instead of `join()`.
    public func detach() {
        guard !isJoined else { return }
        isJoined = true
        pthread_detach(thread)
    }

    deinit { detach() }
}

/// The closure a new thread runs.
private final class WorkerBody {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// The new thread's entry point: runs the body, releases the box.
nonisolated private func workerThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    let work = Unmanaged<WorkerBody>.fromOpaque(context).takeRetainedValue()
    work.body()
    return nil
}

/// A wake-up one thread gives another (a POSIX semaphore): the waiter sleeps until signalled or
/// until its timeout on CLOCK_MONOTONIC passes. Never used by the realtime thread.
public final class WakeSignal: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>

    public init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// A non-negative `Duration` in whole nanoseconds (negative ones count as 0). Any thread.
    public static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// Wakes the waiter (or the next wait). Any non-realtime thread.
    public func signal() { sem_post(semaphore) }

    /// Waits until signalled or `timeout` passes. Returns true when signalled. The waiting thread.
    @discardableResult
    public func wait(timeout: Duration) -> Bool {
        micmon_platform_semaphore_wait(semaphore, Self.nanoseconds(timeout)) == 0
    }
}
