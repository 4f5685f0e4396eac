// The writer thread of a capture session: the capture ring and the drop log into the sound
// file. Made on the main thread; runs on its own thread until `finish()` (main thread).

import Platform
import Realtime
import SoundFile
import Synchronization

/// The writer thread: drains the capture ring into the sound file. It wakes on a timer (every
/// `wakeInterval`), never on a lock or condition shared with the realtime thread (only `finish()`
/// on the main thread can wake it early). Dropped periods come from the drop log and are written
/// as silence at their place in the timeline.
///
/// The file's header is rewritten after a wake that wrote frames, at most every `headerInterval`
/// (and at the end), not after every write, and flushed to the device with it (`fdatasync`,
/// `SoundFileWriter.sync()`). With the defaults that is once per wake, twice a second: a
/// `kill -9` or a power cut leaves a file that opens and holds everything but about the last 0.5 s.
///
/// A container that cannot survive a kill (FLAC, `ContainerFormat.survivesKill`) is recorded
/// through a crash-safe intermediate: `file` is then `FILE.partial.w64` (`partialPath(for:)`),
/// 32-bit float (the samples as JACK delivered them), and at the end this thread copies it,
/// sample for sample, into `final` (FILE, in the asked container and encoding) and removes it.
/// After a kill, a full disk or an I/O error the intermediate is what survives: it stays, opens
/// and holds the take.
///
/// Twice a second, not more often: each wake runs the kernel's write path, libsndfile and the
/// header update on cold caches, so fewer wakes cost less CPU for the same bytes. The 4 s ring
/// leaves 3.5 s for a stalled disk.
final class TakeWriter: @unchecked Sendable {
    /// The name of the crash-safe intermediate of a take at `path`: `path` + `.partial.w64`.
    static func partialPath(for path: String) -> String { path + ".partial.w64" }

    private let file: SoundFileWriter
    /// The asked container, when `file` is the crash-safe intermediate; nil otherwise.
    private let final: SoundFileWriter?
    private let samples: SPSCRing<Float>.Consumer
    private let drops: SPSCRing<DropEvent>.Consumer
    private let counters: UnsafeMutablePointer<CaptureCounters>
    private let channelCount: Int
    private let wakeInterval: Duration
    /// `headerInterval` in nanoseconds of CLOCK_MONOTONIC.
    private let headerIntervalNanoseconds: UInt64
    /// Lets `finish()` cut the current sleep short (main thread → writer thread only).
    private let wakeUp = WakeSignal()
    /// Test-only: seconds the writer sleeps before its first drain (`MICMON_TEST_WRITER_STALL_SECONDS`),
    /// so tests can fill the ring and watch drops become silence. 0 otherwise.
    private let stallSeconds: Double
    private let silence: UnsafeMutableBufferPointer<Float>

    /// Pause, resume and mark requests (keys, signals, the control socket, transport), and the
    /// run's event log the pauses, resumes and marks go to; nil when nobody drives the take.
    private let control: TakeControl?
    private let events: TakeEventLog?
    /// Pause and resume: which frames of the take reach the file (writer thread).
    private var gate: PauseGate
    /// Whether writing is paused, as of the frames written so far, for the UI.
    let isPaused = Atomic<Bool>(false)

    private let stopRequested = Atomic<Bool>(false)
    private var thread: WorkerThread?
    /// Set when a write failed; the writer then stops writing (the file stays valid up to there).
    let hasFailed = Atomic<Bool>(false)
    /// Set (before `hasFailed`) when the write failed because a stream's reader went away.
    let readerWentAway = Atomic<Bool>(false)
    /// Frames the file holds so far (data and silence; a failed write counts only what reached it), for the UI.
    let framesWritten = Atomic<UInt64>(0)

    // Writer-thread state, read by others only after the thread was joined.
    private var position: UInt64 = 0
    private var pendingDrops: [DropEvent] = []
    private var dropHistory: [DropEvent] = []
    private var failure: SoundFileError?
    /// The intermediate's path when it stays on disk at the end (its copy into `final` failed).
    private var keptPartial: String?
    /// Frames covered by the file's header, and when it was last written (writer thread).
    private var headerPosition: UInt64 = 0
    private var lastHeaderUpdate = MonotonicClock.nanoseconds()

    init(
        file: SoundFileWriter, final: SoundFileWriter? = nil, samples: SPSCRing<Float>.Consumer,
        drops: SPSCRing<DropEvent>.Consumer,
        counters: UnsafeMutablePointer<CaptureCounters>, channelCount: Int, wakeInterval: Duration = .milliseconds(500),
        headerInterval: Duration = .milliseconds(400), stallSeconds: Double = 0, control: TakeControl? = nil,
        events: TakeEventLog? = nil, startsPaused: Bool = false
    ) {
        self.control = control
        self.events = events
        gate = PauseGate(startsPaused: startsPaused)
        isPaused.store(startsPaused, ordering: .relaxed)
        self.stallSeconds = stallSeconds
        self.file = file
        self.final = final
        self.samples = samples
        self.drops = drops
        self.counters = counters
        self.channelCount = channelCount
        self.wakeInterval = wakeInterval
        self.headerIntervalNanoseconds = WakeSignal.nanoseconds(headerInterval)
        silence = .allocate(capacity: 4096 * channelCount)
        silence.initialize(repeating: 0)
    }

    deinit { silence.deallocate() }

    /// Starts the thread. Main thread.
    func start() {
        thread = WorkerThread { [self] in run() }
        if thread == nil {
            // No thread to write with: the take ends at once, with its cause on record.
            failure = SoundFileError(.write, path: file.path, message: "could not start the writer thread")
            hasFailed.store(true, ordering: .releasing)
            try? file.close()
            try? final?.close()
            if final != nil { keptPartial = file.path }
        }
    }

    /// Asks the thread to drain everything the realtime side took, close the file and end; waits
    /// for it. Call only once the realtime side has stopped (client deactivated or gone). Main thread.
    func finish() -> (
        drops: [DropEvent], failure: SoundFileError?, framesWritten: UInt64, keptPartial: String?, framesPaused: UInt64
    ) {
        stopRequested.store(true, ordering: .releasing)
        wakeUp.signal()
        thread?.join()
        thread = nil
        return (dropHistory, failure, UInt64(file.framesWritten), keptPartial, gate.framesPaused)
    }

    private func run() {
        var stalled = 0.0
        while stalled < stallSeconds && !stopRequested.load(ordering: .acquiring) {
            sleep(seconds: 0.01)
            stalled += 0.01
        }
        while true {
            let stopping = stopRequested.load(ordering: .acquiring)
            drain()
            if stopping { break }
            updateHeaderIfDue()
            wakeUp.wait(timeout: wakeInterval)
        }
        // The realtime side is done: frames taken but never queued were a trailing drop.
        let total = counters.pointee.framesTaken.load(ordering: .acquiring)
        drain()
        if total > position && failure == nil {
            let gap = DropEvent(startFrame: position, frameCount: total - position)
            record(gap)
            writeSilence(frames: gap.frameCount)
        }
        takeRequests()
        note(gate.flush(upTo: position))
        if failure == nil {
            do { try file.close() } catch { failure = error }
        } else {
            try? file.close()
        }
        if let final { convert(into: final) }
    }

    /// Copies the closed intermediate (32-bit float, the samples as JACK delivered them) into
    /// `final` as floats, so FILE holds what writing it directly would have (libsndfile's own
    /// conversion to the asked encoding), closes `final` and removes the intermediate. On any
    /// failure the intermediate stays, and the summary names it. Writer thread, at the end.
    private func convert(into final: SoundFileWriter) {
        do throws(SoundFileError) {
            let reader = try SoundFileReader(path: file.path)
            let chunk = UnsafeMutableBufferPointer<Float>.allocate(capacity: 16384 * channelCount)
            defer { chunk.deallocate() }
            while true {
                let frames = reader.read(into: chunk)
                if frames <= 0 { break }
                try final.write(interleaved: UnsafeBufferPointer(rebasing: chunk[0 ..< frames * channelCount]))
            }
            reader.close()
            try final.close()
            if final.framesWritten != file.framesWritten {
                throw SoundFileError(
                    .write, path: final.path,
                    message: "the copy holds \(final.framesWritten) of the take's \(file.framesWritten) frames")
            }
        } catch {
            try? final.close()
            if failure == nil { failure = error }
            hasFailed.store(true, ordering: .releasing)
            keptPartial = file.path
            return
        }
        if failure != nil || !FileSystem.remove(file.path) { keptPartial = file.path }
    }

    /// Rewrites the header when frames came since the last time and `headerInterval` has
    /// passed. Writer thread.
    private func updateHeaderIfDue() {
        guard failure == nil, position > headerPosition else { return }
        let now = MonotonicClock.nanoseconds()
        guard now &- lastHeaderUpdate >= headerIntervalNanoseconds else { return }
        do { try file.sync() } catch {
            failure = error
            hasFailed.store(true, ordering: .releasing)
        }
        headerPosition = position
        lastHeaderUpdate = now
    }

    /// Writes what the ring holds, with silence where drops were logged. Writer thread.
    private func drain() {
        // Acquiring the ring first: every drop logged before these frames is then visible too.
        var available = samples.availableToRead() / channelCount
        takeRequests()
        while let slices = drops.readableSlices(count: 1) {
            pendingDrops.append(slices.first[0])
            drops.commitRead(count: 1)
        }
        while failure == nil {
            if let next = pendingDrops.first, next.startFrame == position {
                pendingDrops.removeFirst()
                record(next)
                writeSilence(frames: next.frameCount)
                continue
            }
            var frames = UInt64(available)
            if let next = pendingDrops.first { frames = min(frames, next.startFrame - position) }
            if frames == 0 { break }
            let count = Int(frames) * channelCount
            guard let slices = samples.readableSlices(count: count) else { break }
            let events = gate.admit(takeFrame: position, count: frames) { offset, length in
                write(slices, from: Int(offset) * channelCount, count: Int(length) * channelCount)
            }
            note(events)
            samples.commitRead(count: count)
            position += frames
            available -= Int(frames)
            framesWritten.store(UInt64(file.framesWritten), ordering: .relaxed)
        }
        if failure != nil {
            // Keep the realtime side from dropping forever: discard what arrives.
            let all = samples.readableSlices()
            samples.commitRead(count: all.count)
        }
    }

    /// Takes the requests posted since the last look: pauses and resumes go to the gate, marks
    /// to the event log at their frame (splits are the segmenter's). Writer thread.
    private func takeRequests() {
        guard let control else { return }
        for request in control.takeAll() {
            switch request.kind {
            case .pause, .resume: gate.add(request)
            case .mark: events?.append(TakeEvent(.mark, at: request.takeFrame, label: request.label))
            case .split: break
            }
        }
    }

    /// Puts the pauses and resumes that took effect on record.
    private func note(_ applied: [TakeEvent]) {
        guard let last = applied.last else { return }
        for event in applied { events?.append(event) }
        isPaused.store(last.kind == .pause, ordering: .relaxed)
    }

    /// Writes `count` samples of the ring's two slices, from `start` on (as if they were one).
    /// The ranges stay inside the slices: start + count <= first.count + second.count.
    private func write(_ slices: RingReadSlices<Float>, from start: Int, count: Int) {
        let firstCount = slices.first.count
        if start < firstCount {
            let end = min(start + count, firstCount)
            write(UnsafeBufferPointer(rebasing: slices.first[start ..< end]))
        }
        let end = start + count
        if end > firstCount {
            let from = max(start, firstCount) - firstCount
            write(UnsafeBufferPointer(rebasing: slices.second[from ..< end - firstCount]))
        }
    }

    private func write(_ interleaved: UnsafeBufferPointer<Float>) {
        guard failure == nil, !interleaved.isEmpty else { return }
        do {
            try file.write(interleaved: interleaved)
        } catch {
            if error.isClosedPipe { readerWentAway.store(true, ordering: .relaxed) }
            failure = error
            hasFailed.store(true, ordering: .releasing)
        }
    }

    private func writeSilence(frames: UInt64) {
        let chunk = silence.count / channelCount
        let events = gate.admit(takeFrame: position, count: frames) { _, length in
            var left = Int(length)
            while left > 0 && failure == nil {
                let n = min(left, chunk)
                write(UnsafeBufferPointer(rebasing: silence[0 ..< n * channelCount]))
                left -= n
            }
        }
        note(events)
        position += frames
        framesWritten.store(UInt64(file.framesWritten), ordering: .relaxed)
    }

    private func record(_ drop: DropEvent) {
        if let last = dropHistory.last, last.startFrame + last.frameCount == drop.startFrame {
            dropHistory[dropHistory.count - 1].frameCount += drop.frameCount
        } else {
            dropHistory.append(drop)
        }
    }
}
