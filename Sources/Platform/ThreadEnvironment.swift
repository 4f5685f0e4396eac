// Per-thread processor state: flush-to-zero and processor affinity. The thread they are called
// on is the one they change.

import CPlatform

public enum ThreadEnvironment {
    /// Flush-to-zero and denormals-are-zero for the calling thread, so denormals never slow DSP.
    /// JACK's thread-init callback (the realtime thread, before its first cycle), or any thread.
    public static func enableFlushToZero() { micmon_platform_enable_flush_to_zero() }

    /// Whether the calling thread flushes denormals to zero.
    public static var flushesToZero: Bool { micmon_platform_flush_to_zero_is_enabled() != 0 }

    /// Pins the calling thread to one processor. Returns false when the system refused. For
    /// benchmarks; never the realtime thread.
    @discardableResult
    public static func pinToProcessor(_ processor: Int) -> Bool {
        micmon_platform_pin_thread_to_processor(Int32(processor)) == 0
    }
}
