import Glibc

// micmon's non-realtime threads and their waits, on POSIX directly: Foundation is not linked
// into the executable at all (it cost about 6 ms and 300 page faults of start-up per take, and
// nothing on the realtime side may touch it anyway).

/// A detached POSIX thread running one closure: the writer, the playback reader, the watchdog.
public enum WorkerThread {
    /// Starts `body` on a new thread with a 1 MiB stack. Returns false when the system has no
    /// thread to give. Any thread.
    @discardableResult
    public static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 1 << 20)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let box = Unmanaged.passRetained(WorkerBody(body)).toOpaque()
        var thread = pthread_t()
        guard pthread_create(&thread, &attributes, workerThreadMain, box) == 0 else {
            Unmanaged<WorkerBody>.fromOpaque(box).release()
            return false
        }
        return true
    }

    /// Sleeps the calling thread for `seconds` (resumed after a signal). Any non-realtime thread.
    public static func sleep(seconds: Double) {
        var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        var left = timespec()
        while nanosleep(&pause, &left) == -1 && errno == EINTR { pause = left }
    }
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
/// until its timeout (on the wall clock: `sem_timedwait`; a clock step changes one wait's length,
/// nothing else). Never used by the realtime thread.
final class WakeSignal: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>

    init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// A non-negative `Duration` in whole nanoseconds (negative ones count as 0). Any thread.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// Wakes the waiter (or the next wait). Any thread.
    func signal() { sem_post(semaphore) }

    /// Waits until signalled or `timeout` passes. Returns true when signalled. The waiting thread.
    @discardableResult
    func wait(timeout: Duration) -> Bool {
        let nanoseconds = Self.nanoseconds(timeout)
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let total = deadline.tv_nsec + Int(nanoseconds % 1_000_000_000)
        deadline.tv_sec += Int(nanoseconds / 1_000_000_000) + total / 1_000_000_000
        deadline.tv_nsec = total % 1_000_000_000
        while true {
            if sem_timedwait(semaphore, &deadline) == 0 { return true }
            if errno != EINTR { return false }
        }
    }
}
