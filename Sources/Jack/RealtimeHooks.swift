import CJackShims

/// Thread-level helpers for the realtime glue. Realtime thread (or JACK's thread-init callback).
public enum RealtimeHooks {
    /// Marks the start of realtime context for LLVM's RealtimeSanitizer, when it is linked in.
    @inlinable public static func enter() { micmon_rtsan_realtime_enter() }
    /// Marks the end of realtime context.
    @inlinable public static func exit() { micmon_rtsan_realtime_exit() }
    /// Whether the RealtimeSanitizer runtime is in this process.
    public static var isSanitizerLinked: Bool { micmon_rtsan_is_linked() != 0 }
    /// Flush-to-zero and denormals-are-zero for the calling thread.
    public static func enableFlushToZero() { micmon_enable_flush_to_zero() }
    /// CLOCK_MONOTONIC in nanoseconds.
    @inlinable public static func monotonicNanoseconds() -> UInt64 { micmon_monotonic_nanoseconds() }
}
