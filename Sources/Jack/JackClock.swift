// JACK's clock and cycle times for the process glue. The realtime thread (and any thread for
// `now()`).

import CJack
import Platform

/// JACK's clock, for the realtime glue: microseconds on the server's monotonic clock.
public enum JackClock {
    /// Now, in JACK microseconds (`jack_get_time`). Any thread, the realtime one included.
    @inlinable
    public static func now() -> UInt64 { jack_get_time() }

    /// Now: CLOCK_MONOTONIC_RAW in microseconds when `fromSystemClock` (what
    /// `systemClockIsJackClock()` said at start), else `now()`. The system clock is read inline,
    /// without a call through libjack, which is why the process glue prefers it. Any thread, the
    /// realtime one included.
    @inlinable
    public static func now(fromSystemClock: Bool) -> UInt64 {
        fromSystemClock ? MonotonicClock.rawMicroseconds() : now()
    }

    /// Whether CLOCK_MONOTONIC_RAW in microseconds reads the same clock as `now()`: a system
    /// reading falls between two of JACK's (within 1 µs of rounding), three times running. False
    /// when the server uses another clock source (jackd's `-c h`, HPET). Off the realtime thread,
    /// once a client is open.
    public static func systemClockIsJackClock() -> Bool {
        for _ in 0 ..< 3 {
            let before = jack_get_time()
            let system = MonotonicClock.rawMicroseconds()
            let after = jack_get_time()
            if system + 1 < before || system > after + 1 { return false }
        }
        return true
    }

    /// When the current cycle started and how long a period is (`jack_get_cycle_times`), in
    /// JACK microseconds, and the server's frame counter at the cycle start (it advances by one
    /// period per cycle, so a jump shows cycles this client did not get). Realtime thread, inside the process callback. Zero when libjack cannot
    /// say (some servers do not implement it).
    @inlinable
    public static func cycle(_ client: OpaquePointer) -> (startUsecs: UInt64, periodUsecs: Float, startFrame: UInt32) {
        var frames: jack_nframes_t = 0
        var current: jack_time_t = 0
        var next: jack_time_t = 0
        var period: Float = 0
        if jack_get_cycle_times(client, &frames, &current, &next, &period) != 0 { return (0, 0, 0) }
        return (current, period, frames)
    }

    /// The driver's lateness stamp (`jack_get_xrun_delayed_usecs`): how late the driver was at
    /// its last own xrun, in µs. It changes only when the driver itself reported being late (an
    /// xrun every client shares); a client skipped alone leaves it as it was. 0 where the server
    /// does not keep it. Realtime thread, inside the process callback (a read of shared memory).
    @inlinable
    public static func driverLateness(_ client: OpaquePointer) -> Float {
        jack_get_xrun_delayed_usecs(client)
    }

    /// The server's sample rate as this client sees it now (`jack_get_sample_rate`, a read of the
    /// client's shared state). PipeWire's libjack switches it before it calls the client's
    /// sample-rate callback, and may run a process cycle at the new rate in between. Realtime
    /// thread, inside the process callback.
    @inlinable
    public static func sampleRate(_ client: OpaquePointer) -> UInt32 {
        jack_get_sample_rate(client)
    }

    /// Frames since the current cycle started, by the server's clock
    /// (`jack_frames_since_cycle_start`). Realtime thread, inside the process callback.
    @inlinable
    public static func framesSinceCycleStart(_ client: OpaquePointer) -> UInt32 {
        jack_frames_since_cycle_start(client)
    }
}
