// The memory of one session: its `SessionState`, the rings the notification and realtime sides
// feed (cycle timings, xrun times, route changes), and every buffer a kernel points into. Made
// on the main thread before activation; freed all together when the last owner lets go, which
// `JackSession` does only after closing its client (and the offline driver once it is done).

import Platform
import Realtime

/// Owner of a session's realtime memory. Main thread; the realtime side sees only the pointers
/// and ring ends it hands out.
final class SessionMemory {
    let state: UnsafeMutablePointer<SessionState>
    /// Cycle timings: by default a few seconds of cycles at small periods (the main thread drains
    /// it several times a second).
    let timingRing: SPSCRing<CycleTiming>
    let xrunRing = SPSCRing<UInt64>(capacity: 1024)
    let routeChangeRing = SPSCRing<UInt64>(capacity: 1024)
    /// Callback lateness and execution time, folded on the main thread from `timingRing`.
    let callbackStatistics: CallbackStatistics
    private var frees: [() -> Void] = []

    init(sampleRate: Int, timingCapacity: Int = 16384) {
        timingRing = SPSCRing<CycleTiming>(capacity: timingCapacity)
        state = .allocate(capacity: 1)
        state.initialize(
            to: SessionState(
                sampleRate: UInt32(clamping: sampleRate), xrunTimes: xrunRing.producer,
                routeChanges: routeChangeRing.producer))
        callbackStatistics = CallbackStatistics(timings: timingRing.consumer)
    }

    deinit {
        for free in frees.reversed() { free() }
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The link a kernel keeps to this memory (see `SessionLink`).
    func link(client: OpaquePointer, readsSystemClock: Bool) -> SessionLink {
        var link = SessionLink(
            readsSystemClock: readsSystemClock, client: client, state: state, timings: timingRing.producer)
        link.lateWakeUpEvery = Environment.value("MICMON_TEST_LATE_WAKE_UP_EVERY").flatMap { UInt64($0) } ?? 0
        link.lateWakeUpMicroseconds = Environment.value("MICMON_TEST_LATE_WAKE_UP_US").flatMap { UInt64($0) } ?? 0
        return link
    }

    /// One value in memory of its own, freed with the session.
    func make<Value: ~Copyable>(_ value: consuming Value) -> UnsafeMutablePointer<Value> {
        let pointer = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        pointer.initialize(to: value)
        frees.append {
            pointer.deinitialize(count: 1)
            pointer.deallocate()
        }
        return pointer
    }

    /// `count` copies of `value`, freed with the session.
    func make<Value>(repeating value: Value, count: Int) -> UnsafeMutablePointer<Value> {
        let pointer = UnsafeMutablePointer<Value>.allocate(capacity: max(count, 1))
        pointer.initialize(repeating: value, count: count)
        frees.append {
            pointer.deinitialize(count: count)
            pointer.deallocate()
        }
        return pointer
    }

    /// A copy of `values`, freed with the session.
    func make<Value>(copying values: [Value]) -> UnsafeMutablePointer<Value> {
        let pointer = UnsafeMutablePointer<Value>.allocate(capacity: max(values.count, 1))
        pointer.initialize(from: values, count: values.count)
        frees.append {
            pointer.deinitialize(count: values.count)
            pointer.deallocate()
        }
        return pointer
    }

    /// Keeps an object (a suppressor, a mailbox) alive as long as the memory.
    func keep(_ object: AnyObject) {
        frees.append { _ = object }
    }

    // Shared counters, for the main thread.
    /// Xrun events (notifications within four periods are one), and the raw callbacks.
    var xruns: UInt64 { state.pointee.xruns.load(ordering: .relaxed) }
    var xrunCallbacks: UInt64 { state.pointee.xrunCallbacks.load(ordering: .relaxed) }
    var serverIsGone: Bool { state.pointee.serverIsGone.load(ordering: .acquiring) }
    var sampleRateChanged: Bool { state.pointee.sampleRateChanged.load(ordering: .acquiring) }
    /// The rate the server changed to, once `sampleRateChanged` (0 before).
    var changedSampleRate: Int {
        sampleRateChanged ? Int(state.pointee.changedSampleRate.load(ordering: .relaxed)) : 0
    }
    var periodFrames: Int { Int(state.pointee.periodFrames.load(ordering: .relaxed)) }
    var cycles: UInt64 { state.pointee.cycles.load(ordering: .relaxed) }
    var hasStopped: Bool { state.pointee.hasStopped.load(ordering: .acquiring) }

    /// Asks the kernel to stop at its next cycle (see `SessionLink.beginCycle`).
    func requestStop() { state.pointee.stopRequested.store(true, ordering: .releasing) }

    /// The main thread's half of the stop handshake: true once a cycle confirmed the stop
    /// request; false when the server went away first or `timeout` seconds passed without a
    /// cycle. Never shares a lock or condition with the realtime thread (it polls).
    func awaitStop(timeout: Double) -> Bool {
        waitPolling(timeout: timeout, until: { hasStopped }, givingUpIf: { serverIsGone })
    }

    /// The xrun times (JACK µs) reported since the last call. Main thread.
    func drainXrunTimes() -> [UInt64] {
        let consumer = xrunRing.consumer
        let slices = consumer.readableSlices()
        let times = Array(slices.first) + Array(slices.second)
        consumer.commitRead(count: slices.count)
        return times
    }

    /// The callback timing so far (after `callbackStatistics.drain()`). Main thread.
    func timingSummary() -> CallbackTimingSummary {
        callbackStatistics.summary(cyclesMissed: state.pointee.timingsMissed.load(ordering: .relaxed))
    }
}
