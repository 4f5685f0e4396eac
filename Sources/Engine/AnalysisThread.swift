// The analysis thread of a capture session: drains the analysis ring (the recorded channels,
// interleaved, pushed by the capture kernel every period) into a `TakeAnalyzer` (libebur128,
// statistics, correlation), off the realtime thread, and publishes the readings for the display
// once something reads them. Made and finished on the main thread; runs on its own thread in
// between.

import DSP
import Loudness
import Platform
import Realtime
import Synchronization

/// The live analysis. Wakes every `wakeInterval` (a timer, never a signal from the realtime
/// thread), takes whole frames from the ring and analyses them; the main thread reads the latest
/// readings (`readings()`), and the whole result after `finish()`.
///
/// The loudness readings are published only once `readings()` has been called (a plain line
/// shows none, so a recorder in a pipe computes none until the summary), and then at most once
/// per 100 ms hop, when they change (`TakeAnalyzer.readsLoudnessAtHops`; else at every pass).
final class AnalysisThread: @unchecked Sendable {
    private let analyzer: TakeAnalyzer
    private let samples: SPSCRing<Float>.Consumer
    private let channelCount: Int
    private let wakeInterval: Duration
    private let wakeUp = WakeSignal()
    private let stopRequested = Atomic<Bool>(false)
    private var thread: WorkerThread?
    /// The readings after the last drain (analysis thread writes, main thread reads).
    private let latest = Mutex<(programmes: [ProgrammeLoudness], correlation: Double?)>(([], nil))
    /// Whether the main thread has read the readings (it never goes back to false).
    private let readingsWanted = Atomic<Bool>(false)
    /// The hop of the readings published last (analysis thread).
    private var publishedHop: UInt64 = 0
    /// CPU time the thread used so far, and the frames it analysed (for the bench).
    let cpuNanoseconds = Atomic<UInt64>(0)
    /// The first failure of libebur128, if any (the analysis then stops; the take goes on).
    private var failure: LoudnessError?
    private var finished: TakeAnalysisResult?
    /// The standard meter (`--meter`) over each channel, run here per sample (its readings do
    /// not depend on the blocks), or nil for `peak`; its states after the last drain.
    private let ballisticCoefficients: BallisticCoefficients?
    private var ballistics: [BallisticMeter]
    private let latestBallistics = Mutex<[BallisticMeter]>([])

    init(
        analyzer: TakeAnalyzer, samples: SPSCRing<Float>.Consumer, meterType: MeterType = .peak,
        wakeInterval: Duration = .milliseconds(50)
    ) {
        self.analyzer = analyzer
        self.samples = samples
        self.channelCount = analyzer.channelCount
        self.wakeInterval = wakeInterval
        ballisticCoefficients =
            meterType == .peak ? nil : BallisticCoefficients(type: meterType, sampleRate: Double(analyzer.sampleRate))
        ballistics = meterType == .peak ? [] : Array(repeating: BallisticMeter(), count: analyzer.channelCount)
        latest.withLock { $0 = analyzer.readings() }
    }

    /// The standard meter's states after the last drain (empty for `peak`). Main thread.
    func ballisticReadings() -> [BallisticMeter] { latestBallistics.withLock { $0 } }

    /// Runs the standard meter over `frameCount` interleaved frames. Analysis thread.
    private func meter(_ base: UnsafePointer<Float>, frameCount: Int) {
        guard let coefficients = ballisticCoefficients else { return }
        for channel in 0 ..< channelCount {
            ballistics[channel].process(
                base + channel, count: frameCount, stride: channelCount, coefficients: coefficients)
        }
    }

    /// Starts the thread; false when the system has no thread to give (no loudness then). Main thread.
    @discardableResult
    func start() -> Bool {
        thread = WorkerThread(name: "micmon-analysis") { [self] in run() }
        return thread != nil
    }

    /// The readings after the last drain. Main thread.
    func readings() -> (programmes: [ProgrammeLoudness], correlation: Double?) {
        readingsWanted.store(true, ordering: .relaxed)
        return latest.withLock { $0 }
    }

    /// Drains what the realtime side queued, ends the thread and returns the take's analysis.
    /// Call once the realtime side has stopped. Main thread.
    func finish() -> TakeAnalysisResult {
        if let finished { return finished }
        stopRequested.store(true, ordering: .releasing)
        wakeUp.signal()
        thread?.join()
        thread = nil
        if failure == nil { drain() }  // without a thread, or what came after its last drain
        publish(always: true)
        let result = analyzer.result()
        finished = result
        return result
    }

    private func run() {
        while true {
            let stopping = stopRequested.load(ordering: .acquiring)
            drain()
            let cpu = MonotonicClock.threadCPUNanoseconds()
            cpuNanoseconds.store(cpu, ordering: .relaxed)
            if stopping { break }
            publish(always: false)
            wakeUp.wait(timeout: wakeInterval)
        }
        publish(always: true)
    }

    /// Publishes the standard meter's states, and the loudness readings when they are wanted
    /// and have changed since the last publication (or `always`).
    private func publish(always: Bool) {
        let states = ballistics
        latestBallistics.withLock { $0 = states }
        let hop = analyzer.hopsAnalysed
        let changed = hop != publishedHop || !analyzer.readsLoudnessAtHops
        guard always || (changed && readingsWanted.load(ordering: .relaxed)) else { return }
        publishedHop = hop
        let readings = analyzer.readings()
        latest.withLock { $0 = readings }
    }

    /// Analyses every whole frame the ring holds. The analysis thread (or the main thread after
    /// the join).
    private func drain() {
        guard failure == nil else { return }
        while true {
            let slices = samples.readableSlices()
            let count = slices.count - slices.count % channelCount
            guard count > 0 else { return }
            do throws(LoudnessError) {
                // The kernel pushes whole frames and the capacity is whole frames, so each slice
                // holds whole frames.
                if let base = slices.first.baseAddress, slices.first.count > 0 {
                    meter(base, frameCount: slices.first.count / channelCount)
                    try analyzer.add(base, frameCount: slices.first.count / channelCount)
                }
                let rest = count - slices.first.count
                if rest > 0, let base = slices.second.baseAddress {
                    meter(base, frameCount: rest / channelCount)
                    try analyzer.add(base, frameCount: rest / channelCount)
                }
            } catch {
                failure = error
                return
            }
            samples.commitRead(count: count)
        }
    }

    /// The failure that stopped the analysis, if any. Main thread, after `finish()`.
    var analysisFailure: LoudnessError? { failure }
}
