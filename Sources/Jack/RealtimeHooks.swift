// RealtimeSanitizer's enter/exit hooks around the process callback (no-ops unless the rtsan
// runtime is linked in). Realtime thread.

import CJackShims

/// RealtimeSanitizer's realtime-context markers, for the process glue. Realtime thread.
public enum RealtimeHooks {
    /// Marks the start of realtime context for LLVM's RealtimeSanitizer, when it is linked in.
    @inlinable public static func enter() { micmon_rtsan_realtime_enter() }
    /// Marks the end of realtime context.
    @inlinable public static func exit() { micmon_rtsan_realtime_exit() }
    /// Whether the RealtimeSanitizer runtime is in this process.
    public static var isSanitizerLinked: Bool { micmon_rtsan_is_linked() != 0 }
}
