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

    private let stopRequested = Atomic<Bool>(false)
    private var thread: WorkerThread?
    /// Set when a write failed; the writer then stops writing (the file stays valid up to there).
    let hasFailed = Atomic<Bool>(false)
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
    /// The file's `bext`, cues and sidecar (nil: none, as for an offline take), the take's
    /// events and the requests posted to it.
    private let metadata: TakeMetadata?
    private let control: TakeControl?
    /// Which take frames the file holds, and what its metadata knows of it once its first frame
    /// is about to be written (writer thread).
    private var timeline = FileTimeline()
    private var fileMetadata: TakeFileMetadata?

    init(
        file: SoundFileWriter, final: SoundFileWriter? = nil, samples: SPSCRing<Float>.Consumer,
        drops: SPSCRing<DropEvent>.Consumer,
        counters: UnsafeMutablePointer<CaptureCounters>, channelCount: Int, wakeInterval: Duration = .milliseconds(500),
        headerInterval: Duration = .milliseconds(400), stallSeconds: Double = 0, metadata: TakeMetadata? = nil,
        control: TakeControl? = nil
    ) {
        self.metadata = metadata
        self.control = control
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
    func finish() -> (drops: [DropEvent], failure: SoundFileError?, framesWritten: UInt64, keptPartial: String?) {
        stopRequested.store(true, ordering: .releasing)
        wakeUp.signal()
        thread?.join()
        thread = nil
        return (dropHistory, failure, UInt64(file.framesWritten), keptPartial)
    }

    private func run() {
        var stalled = 0.0
        while stalled < stallSeconds && !stopRequested.load(ordering: .acquiring) {
            sleep(seconds: 0.01)
            stalled += 0.01
        }
        while true {
            let stopping = stopRequested.load(ordering: .acquiring)
            takeRequests()
            drain()
            if stopping { break }
            updateHeaderIfDue()
            refreshSidecar()
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
        let cues = fileMetadata.map { metadata?.cuePoints(for: $0, timeline: timeline) ?? [] } ?? []
        if failure == nil {
            do { try file.close(cues: cues) } catch { failure = error }
        } else {
            try? file.close(cues: cues)
        }
        if let final { convert(into: final) }
        if var fileMetadata {
            metadata?.writeSidecar(for: &fileMetadata, timeline: timeline, final: true)
            self.fileMetadata = fileMetadata
        }
    }

    /// The requests posted since the last wake: a mark goes into the event log at its place.
    /// (Pause, resume and split are applied where the writer decides which take frames go to
    /// which file.) Writer thread.
    private func takeRequests() {
        guard let control, let metadata else { return }
        for request in control.takeAll() where request.kind == .mark {
            metadata.events.append(TakeEvent(.mark, at: request.takeFrame, label: request.label))
        }
    }

    /// Before the file's first frame: its `bext` and the start of its sidecar. Writer thread.
    private func beginFileIfNeeded() {
        guard fileMetadata == nil, let metadata else { return }
        let user = final ?? file
        fileMetadata = metadata.fileStarting(
            path: user.path, format: user.format, writer: file, firstTakeFrame: position)
    }

    /// The sidecar, rewritten when the events changed. Writer thread, after a wake.
    private func refreshSidecar() {
        guard var fileMetadata, let metadata else { return }
        metadata.writeSidecar(for: &fileMetadata, timeline: timeline)
        self.fileMetadata = fileMetadata
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
            if final.framesWritten != Int64(position) {
                throw SoundFileError(
                    .write, path: final.path,
                    message: "the copy holds \(final.framesWritten) of the take's \(position) frames")
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
            beginFileIfNeeded()
            metadata?.scanForClips(slices.first, atTakeFrame: position)
            metadata?.scanForClips(slices.second, atTakeFrame: position + UInt64(slices.first.count / channelCount))
            write(slices.first)
            write(slices.second)
            timeline.append(takeFrame: position, count: frames)
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

    private func write(_ interleaved: UnsafeBufferPointer<Float>) {
        guard failure == nil, !interleaved.isEmpty else { return }
        do {
            try file.write(interleaved: interleaved)
        } catch {
            failure = error
            hasFailed.store(true, ordering: .releasing)
        }
    }

    private func writeSilence(frames: UInt64) {
        beginFileIfNeeded()
        timeline.append(takeFrame: position, count: frames)
        var left = Int(frames)
        let chunk = silence.count / channelCount
        while left > 0 && failure == nil {
            let n = min(left, chunk)
            write(UnsafeBufferPointer(rebasing: silence[0 ..< n * channelCount]))
            left -= n
        }
        position += frames
        framesWritten.store(UInt64(file.framesWritten), ordering: .relaxed)
    }

    private func record(_ drop: DropEvent) {
        metadata?.events.append(TakeEvent(.drop, at: drop.startFrame, frameCount: drop.frameCount))
        if let last = dropHistory.last, last.startFrame + last.frameCount == drop.startFrame {
            dropHistory[dropHistory.count - 1].frameCount += drop.frameCount
        } else {
            dropHistory.append(drop)
        }
    }
}
