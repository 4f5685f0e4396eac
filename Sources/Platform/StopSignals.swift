// SIGINT, SIGTERM and SIGHUP as a request to stop, and SIGUSR1 / SIGUSR2 (a recorder's mark and
// pause toggle), taken synchronously by the main thread. Main thread.

import Glibc

/// SIGINT, SIGTERM and SIGHUP (a closed terminal or ssh session), taken synchronously by the main
/// thread, so each ends a take with a finalized file and a summary. They are blocked before any
/// other thread exists (JACK's and the writer's threads inherit the mask), so no signal ever
/// interrupts a JACK thread mid-call, and no handler runs at all: the main loop's sleep is a
/// `sigtimedwait` that returns early when one arrives.
public enum StopSignals {
    /// The signal that asked micmon to stop, or 0. Main thread only.
    nonisolated(unsafe) public private(set) static var received: Int32 = 0
    /// SIGUSR1 and SIGUSR2 taken by `sleep` and not yet handed out, in order. Main thread only.
    nonisolated(unsafe) private static var userSignals: [Int32] = []

    /// The signals a sleep takes: the stop signals and SIGUSR1/SIGUSR2.
    private static var waitedSet: sigset_t {
        var set = stopSet
        sigaddset(&set, SIGUSR1)
        sigaddset(&set, SIGUSR2)
        return set
    }

    private static var stopSet: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        return set
    }

    /// Blocks SIGINT/SIGTERM/SIGHUP and SIGUSR1/SIGUSR2 for this thread and all threads it starts
    /// (a SIGUSR1/SIGUSR2 a command does not take is never delivered: it ends nothing), and ignores
    /// SIGPIPE (a closed pipe shows up as a write error instead). Main thread, before any other thread.
    public static func install() {
        var set = waitedSet
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
    }

    /// Sleeps up to `seconds`, or until SIGINT/SIGTERM/SIGHUP arrives (then `received` is set) or
    /// SIGUSR1/SIGUSR2 does (kept for `takeUserSignals()`). Main thread.
    public static func sleep(seconds: Double) {
        var set = waitedSet
        var timeout = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        let signal = sigtimedwait(&set, nil, &timeout)
        if signal == SIGUSR1 || signal == SIGUSR2 {
            if userSignals.count < 64 { userSignals.append(signal) }
        } else if signal > 0 && received == 0 {
            received = signal
        }
    }

    /// SIGUSR1: a recorder's mark (SIGUSR2 toggles its pause).
    public static let markSignal = SIGUSR1

    /// SIGUSR1 and SIGUSR2 received since the last call, in order (each once: the kernel merges
    /// a signal sent again before it was taken). Main thread.
    public static func takeUserSignals() -> [Int32] {
        defer { userSignals.removeAll(keepingCapacity: true) }
        return userSignals
    }
}
