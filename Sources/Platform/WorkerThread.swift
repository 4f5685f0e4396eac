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
    /// give. `name` (at most 15 bytes; longer is cut) is the thread's name in
    /// /proc/PID/task/TID/comm, so tools (and the bench's per-thread CPU) can tell the threads
    /// apart. Any non-realtime thread.
    public init?(name: String? = nil, _ body: @escaping @Sendable () -> Void) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 1 << 20)
        let box = Unmanaged.passRetained(WorkerBody(name: name, body)).toOpaque()
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

/// The closure a new thread runs, and the name it takes first.
private final class WorkerBody {
    let name: String?
    let body: @Sendable () -> Void
    init(name: String?, _ body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }

    /// Names the calling thread: the kernel refuses names over 15 bytes, so the name is cut at
    /// a character boundary below that.
    func nameThisThread() {
        guard let name else { return }
        var bytes = Array(name.utf8.prefix(15))
        while !bytes.isEmpty && String(validating: bytes, as: UTF8.self) == nil { bytes.removeLast() }
        bytes.append(0)
        _ = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                micmon_platform_set_thread_name(pthread_self(), $0.baseAddress!)
            }
        }
    }
}

/// The new thread's entry point: takes its name (before anything else runs on it), runs the
/// body, releases the box.
nonisolated private func workerThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    let work = Unmanaged<WorkerBody>.fromOpaque(context).takeRetainedValue()
    work.nameThisThread()
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
