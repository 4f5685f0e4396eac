// Clocks and sleeps. The clock reads are safe on the realtime thread; the sleeps are not.

import CPlatform
import Glibc

/// The system's monotonic clocks.
public enum MonotonicClock {
    /// CLOCK_MONOTONIC in nanoseconds. Any thread, the realtime one included.
    @inlinable public static func nanoseconds() -> UInt64 { micmon_platform_monotonic_nanoseconds() }

    /// CLOCK_MONOTONIC_RAW in microseconds (JACK's clock on jack2's default clock source). Any
    /// thread, the realtime one included.
    @inlinable public static func rawMicroseconds() -> UInt64 { micmon_platform_monotonic_raw_microseconds() }

    /// CLOCK_MONOTONIC in seconds. Any thread.
    @inlinable public static func seconds() -> Double { Double(nanoseconds()) / 1e9 }

    /// Sleeps `microseconds` (nanosleep): a test's stand-in for a thread preempted on the
    /// realtime path. It gives the processor up, as a preempted thread does (a busy wait at the
    /// realtime thread's priority would starve a server thread on the same processor instead).
    /// Blocks: nothing but a test hook calls it on the realtime thread.
    public static func pause(microseconds: UInt64) {
        var pause = timespec(tv_sec: Int(microseconds / 1_000_000), tv_nsec: Int(microseconds % 1_000_000) * 1000)
        var left = timespec()
        while nanosleep(&pause, &left) == -1 && errno == EINTR { pause = left }
    }

    /// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID), in nanoseconds. Any thread.
    public static func threadCPUNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// Sleeps the calling thread for `seconds`, resumed after a signal until the whole time passed.
/// Never the realtime thread.
public func sleep(seconds: Double) {
    guard seconds > 0 else { return }
    var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
    var left = timespec()
    while nanosleep(&pause, &left) == -1 && errno == EINTR { pause = left }
}

/// Polls `isDone` every `interval` seconds until it is true (returns true), `givesUp` is true, or
/// `timeout` seconds of CLOCK_MONOTONIC pass (returns false). For handshakes with the realtime
/// side, which must not share a lock or condition with it. Never the realtime thread.
public func waitPolling(
    timeout: Double, interval: Double = 0.002, until isDone: () -> Bool, givingUpIf givesUp: () -> Bool = { false }
) -> Bool {
    let deadline = MonotonicClock.nanoseconds() + UInt64(max(timeout, 0) * 1e9)
    while true {
        if isDone() { return true }
        if givesUp() || MonotonicClock.nanoseconds() >= deadline { return false }
        sleep(seconds: interval)
    }
}
