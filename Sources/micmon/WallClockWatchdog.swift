// The wall-clock watchdog of a running session: its own thread watches the process cycle
// counter and notes when it stops advancing while the server is still there (a dead client
// upstream of micmon in a synchronous graph, a netjack2 master waiting on a slave that is gone).
// The thread only notes; the main thread reads what it noted, prints and decides.

import Engine
import Platform
import Synchronization

/// Watches a session's cycle counter on the wall clock. Start it after the client is activated,
/// `stop()` it (the main thread) before the session is released. Its thread polls every 50 ms and
/// publishes through atomics; the main thread reads `isStalled`, `stallCount` and
/// `secondsSinceLastCycle()`.
final class WallClockWatchdog: Sendable {
    /// No process cycle for this long while the server still answers is a stall. Past what a
    /// healthy graph pauses for: JACK's client timeout (jackd -t, 500 ms by default), and a
    /// netjack2 master removing a slave that left, which stops its graph for about 2.1 s
    /// (docs/platforms.md); short enough that a graph that will never call micmon again is
    /// reported within seconds, not after the take (measured: a 12-minute hang before).
    static let stallSeconds = 4.0

    private let probe: CycleProbe
    private let limitNanoseconds: UInt64
    private let stopRequested = Atomic<Bool>(false)
    /// Set by the watchdog thread while no cycle has come for `stallSeconds`; cleared when one
    /// comes again.
    private let stalled = Atomic<Bool>(false)
    /// Stalls seen so far (each one counted once, when it began).
    private let stalls = Atomic<UInt64>(0)
    /// When the cycle counter last advanced (CLOCK_MONOTONIC ns), written by the watchdog thread.
    private let lastAdvance = Atomic<UInt64>(0)
    nonisolated(unsafe) private var thread: WorkerThread?

    init(probe: CycleProbe, stallSeconds: Double = WallClockWatchdog.stallSeconds) {
        self.probe = probe
        limitNanoseconds = UInt64(stallSeconds * 1e9)
        lastAdvance.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
    }

    /// Starts the watching thread. Main thread, once.
    func start() {
        thread = WorkerThread { [self] in watch() }
    }

    /// Stops and joins the thread. Main thread; safe to call twice.
    func stop() {
        stopRequested.store(true, ordering: .releasing)
        thread?.join()
        thread = nil
    }

    deinit { stop() }

    /// Whether no cycle has come for `stallSeconds` (and the server is not known to be gone).
    var isStalled: Bool { stalled.load(ordering: .acquiring) }
    /// How many stalls began so far.
    var stallCount: UInt64 { stalls.load(ordering: .acquiring) }

    /// Seconds since the cycle counter last advanced, as the watchdog last saw it.
    func secondsSinceLastCycle() -> Double {
        let now = MonotonicClock.nanoseconds()
        let last = lastAdvance.load(ordering: .acquiring)
        return now > last ? Double(now - last) / 1e9 : 0
    }

    /// The watchdog thread's loop.
    private func watch() {
        var seen = probe.cycles
        while !stopRequested.load(ordering: .acquiring) {
            sleep(seconds: 0.05)
            let now = MonotonicClock.nanoseconds()
            let cycles = probe.cycles
            if cycles != seen {
                seen = cycles
                lastAdvance.store(now, ordering: .releasing)
                stalled.store(false, ordering: .releasing)
            } else if !stalled.load(ordering: .relaxed) && !probe.serverIsGone
                && now &- lastAdvance.load(ordering: .relaxed) >= limitNanoseconds
            {
                stalls.add(1, ordering: .releasing)
                stalled.store(true, ordering: .releasing)
            }
        }
    }
}
