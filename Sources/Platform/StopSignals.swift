// SIGINT, SIGTERM and SIGHUP as a request to stop, taken synchronously by the main thread.
// Main thread.

import Glibc

/// SIGINT, SIGTERM and SIGHUP (a closed terminal or ssh session), taken synchronously by the main
/// thread, so each ends a take with a finalized file and a summary. They are blocked before any
/// other thread exists (JACK's and the writer's threads inherit the mask), so no signal ever
/// interrupts a JACK thread mid-call, and no handler runs at all: the main loop's sleep is a
/// `sigtimedwait` that returns early when one arrives.
public enum StopSignals {
    /// The signal that asked micmon to stop, or 0. Main thread only.
    nonisolated(unsafe) public private(set) static var received: Int32 = 0

    private static var stopSet: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        return set
    }

    /// Blocks SIGINT/SIGTERM/SIGHUP for this thread and all threads it starts, and ignores SIGPIPE (a
    /// closed pipe shows up as a write error instead). Main thread, before any other thread.
    public static func install() {
        var set = stopSet
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
    }

    /// Sleeps up to `seconds`, or until SIGINT/SIGTERM/SIGHUP arrives (then `received` is set).
    /// Main thread.
    public static func sleep(seconds: Double) {
        var set = stopSet
        var timeout = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        let signal = sigtimedwait(&set, nil, &timeout)
        if signal > 0 && received == 0 { received = signal }
    }
}
