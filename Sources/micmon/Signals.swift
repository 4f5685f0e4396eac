import Glibc
import Synchronization

/// The signal that asked micmon to stop (SIGINT/SIGTERM), or 0. Set by the handler, read by
/// the main loop. Initialised by `StopSignals.install()` before any handler can run.
let stopSignal = Atomic<Int32>(0)

/// The handler: one atomic store, which is async-signal-safe.
nonisolated func recordStopSignal(_ signal: Int32) {
    stopSignal.store(signal, ordering: .relaxed)
}

enum StopSignals {
    /// Routes SIGINT and SIGTERM to `stopSignal`, and ignores SIGPIPE (a closed pipe shows up
    /// as a write error instead). Main thread, once.
    static func install() {
        _ = stopSignal.load(ordering: .relaxed)
        signal(SIGINT, recordStopSignal)
        signal(SIGTERM, recordStopSignal)
        signal(SIGPIPE, SIG_IGN)
    }

    static var received: Int32 { stopSignal.load(ordering: .relaxed) }
}
