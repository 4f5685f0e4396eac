// The writer thread of a capture session: the capture ring and the drop log into the take's
// files, cut by the segmenter (pre-roll, level trigger, splits). Made on the main thread
// (with the pre-roll's memory and the first file, before activation); runs on its own thread
// until `finish()` (main thread).

import Platform
import Realtime
import SoundFile
import Synchronization

/// The writer thread: drains the capture ring into the take's files. It wakes on a timer (every
/// `wakeInterval`), never on a lock or condition shared with the realtime thread (only `finish()`
/// on the main thread can wake it early). Dropped periods come from the drop log and are written
/// as silence at their place in the timeline.
///
/// Every run of take frames it drains (data or a drop's silence) goes through `segment`, the one
/// place that decides which part of it is written and to which file: held in the pre-roll while
/// armed, written to the current file, or cut at a split boundary, a trigger's start or stop.
/// The level trigger is read here, from the samples drained, sample-exact; the realtime thread
/// does nothing more than for a plain take.
///
/// A file's header is rewritten after a wake that wrote frames, at most every `headerInterval`
/// (and at its close), and flushed to the device with it (`fdatasync`, `SoundFileWriter.sync()`).
/// With the defaults that is once per wake, twice a second: a `kill -9` or a power cut leaves
/// files that open, the current one holding everything but about the last 0.5 s.
///
/// The next file of a split is created ahead of its boundary (`lookaheadSeconds`), so a slow
/// `open` (folders made, a slow disk) costs the ring's time, not frames; a trigger's file is
/// created when the trigger is read, within the 4 s the ring holds. A file is closed here (its
/// header written) and finalized on `TakeFileFinisher`'s thread: a container that cannot survive
/// a kill (FLAC, `ContainerFormat.survivesKill`) is recorded through a crash-safe intermediate,
/// `FILE.partial.w64` (32-bit float), which that thread copies into FILE and removes. After a
/// kill, a full disk or an I/O error the intermediate is what survives.
///
/// Twice a second, not more often: each wake runs the kernel's write path, libsndfile and the
/// header update on cold caches, so fewer wakes cost less CPU for the same bytes. The 4 s ring
/// leaves 3.5 s for a stalled disk.
final class TakeWriter: @unchecked Sendable {
    /// The name of the crash-safe intermediate of a take at `path`: `path` + `.partial.w64`.
    static func partialPath(for path: String) -> String { path + ".partial.w64" }

    /// Frames of the block of silence a drop is written from (a longer drop takes it again).
    static let silenceFrames = 4096

    /// How long before a split boundary the next file is created.
    static let lookaheadSeconds = 2.0

    private let samples: SPSCRing<Float>.Consumer
    private let drops: SPSCRing<DropEvent>.Consumer
    /// The session's server-gap log (graph-wide gaps, from the kernel): read here, so each gap
    /// is on the event log before the writer closes the file it falls in. Nil: none kept.
    private let serverGaps: SPSCRing<DropEvent>.Consumer?
    private let counters: UnsafeMutablePointer<CaptureCounters>
    private let channelCount: Int
    private let sampleRate: Int
    private let wakeInterval: Duration
    /// `headerInterval` in nanoseconds of CLOCK_MONOTONIC.
    private let headerIntervalNanoseconds: UInt64
    /// Lets `finish()` cut the current sleep short (main thread → writer thread only).
    private let wakeUp = WakeSignal()
    /// Test-only: seconds the writer sleeps before its first drain (`MICMON_TEST_WRITER_STALL_SECONDS`),
    /// so tests can fill the ring and watch drops become silence. 0 otherwise.
    private let stallSeconds: Double
    private let silence: UnsafeMutableBufferPointer<Float>

    private let opener: TakeFileOpener
    private let rotation: TakeRotation
    private let control: TakeControl?
    private let events: TakeEventLog
    /// Each file's `bext`, cues and sidecar (nil: none, as for an offline take).
    private let metadata: TakeMetadata?
    /// Pause and resume: which take frames reach the files (writer thread).
    private var gate: PauseGate
    /// Whether writing is paused, as of the frames written so far, for the UI.
    let isPaused = Atomic<Bool>(false)
    /// Set (before `hasFailed`) when a write failed because a stream's reader went away.
    let readerWentAway = Atomic<Bool>(false)
    private let finisher: TakeFileFinisher
    private let preRoll: PreRollBuffer?
    private let splitFrames: UInt64?
    private let hangFrames: UInt64
    private let onMagnitude: Float
    private let offMagnitude: Float
    /// The wall-clock time of take frame 0 as a bit pattern (0: not yet known), stored by the
    /// main thread just before arming.
    private let firstFrameWallClock = Atomic<UInt64>(0)

    private let stopRequested = Atomic<Bool>(false)
    private var thread: WorkerThread?
    /// Set when a write failed; the writer then stops writing (the files stay valid up to there).
    let hasFailed = Atomic<Bool>(false)
    /// Frames the files hold so far (data and silence; a failed write counts only what reached
    /// them), for the UI.
    let framesWritten = Atomic<UInt64>(0)
    /// 0 armed (waiting for the trigger), 1 recording, 2 hanging (below the off level): for the UI.
    let triggerState = Atomic<Int>(1)

    // Writer-thread state, read by others only after the thread was joined.
    private var position: UInt64 = 0
    private var pendingDrops: [DropEvent] = []
    private var dropHistory: [DropEvent] = []
    /// The run's server gaps in order (the first `CaptureSession.serverGapListLimit`; all go to
    /// the event log).
    private var serverGapHistory: [DropEvent] = []
    private var failure: SoundFileError?
    /// The file being written, or nil while armed.
    private var current: TakeFile?
    /// The next split's file, made ahead of its boundary, and the error its creation met.
    private var upcoming: TakeFile?
    private var upcomingFailure: SoundFileError?
    /// The take frame the current file ends at (a split boundary), or nil.
    private var boundary: UInt64?
    /// Splits asked for (`TakeRequest(.split)`), in take frames, not yet reached.
    private var requestedSplits: [UInt64] = []
    /// Consecutive frames, up to `position`, below the off level (trigger runs).
    private var framesBelowOff: UInt64 = 0
    /// Take frames spent armed that no file holds (a pre-roll that reached a file is not).
    private var framesArmed: UInt64 = 0
    /// Frames the closed files hold, and all files with the current one.
    private var closedWritten: UInt64 = 0
    private var totalWritten: UInt64 = 0
    /// Whether frames came yet (the first file's boundary is placed then).
    private var hasBegun = false
    /// Frames covered by the current file's header, and when it was last written (writer thread).
    private var headerPosition: UInt64 = 0
    private var lastHeaderUpdate = MonotonicClock.nanoseconds()

    /// `first`: the take's first file, made before activation (nil when a trigger starts the takes).
    init(
        first: TakeFile?, opener: TakeFileOpener, rotation: TakeRotation = TakeRotation(), sampleRate: Int,
        samples: SPSCRing<Float>.Consumer, drops: SPSCRing<DropEvent>.Consumer,
        serverGaps: SPSCRing<DropEvent>.Consumer? = nil,
        counters: UnsafeMutablePointer<CaptureCounters>, channelCount: Int, control: TakeControl? = nil,
        events: TakeEventLog = TakeEventLog(), metadata: TakeMetadata? = nil,
        onFileClosed: (@Sendable (ClosedTakeFile) -> Void)? = nil, startsPaused: Bool = false,
        wakeInterval: Duration = .milliseconds(500), headerInterval: Duration = .milliseconds(400),
        stallSeconds: Double = 0
    ) {
        self.stallSeconds = stallSeconds
        self.current = first
        self.opener = opener
        self.rotation = rotation
        self.sampleRate = sampleRate
        self.samples = samples
        self.drops = drops
        self.serverGaps = serverGaps
        self.counters = counters
        self.channelCount = channelCount
        self.control = control
        self.events = events
        self.metadata = metadata
        gate = PauseGate(startsPaused: startsPaused)
        isPaused.store(startsPaused, ordering: .relaxed)
        self.wakeInterval = wakeInterval
        self.headerIntervalNanoseconds = WakeSignal.nanoseconds(headerInterval)
        finisher = TakeFileFinisher(channelCount: channelCount, onFileClosed: onFileClosed)
        let preRollFrames = Int((rotation.preRollSeconds * Double(sampleRate)).rounded())
        preRoll =
            rotation.trigger != nil && preRollFrames > 0
            ? PreRollBuffer(frames: preRollFrames, channelCount: channelCount) : nil
        splitFrames = rotation.splitSeconds.map { max(1, UInt64(($0 * Double(sampleRate)).rounded())) }
        hangFrames = rotation.trigger.map { UInt64(($0.hangSeconds * Double(sampleRate)).rounded()) } ?? 0
        onMagnitude = rotation.trigger.map { LevelTrigger.magnitude(decibels: $0.onDecibels) } ?? 0
        offMagnitude = rotation.trigger.map { LevelTrigger.magnitude(decibels: $0.offDecibels) } ?? 0
        if rotation.trigger != nil && first == nil { triggerState.store(0, ordering: .relaxed) }
        silence = .allocate(capacity: Self.silenceFrames * channelCount)
        silence.initialize(repeating: 0)
    }

    /// A plain take into `file` (one file, no pre-roll, trigger or splits).
    convenience init(
        file: SoundFileWriter, samples: SPSCRing<Float>.Consumer, drops: SPSCRing<DropEvent>.Consumer,
        counters: UnsafeMutablePointer<CaptureCounters>, channelCount: Int, wakeInterval: Duration = .milliseconds(500),
        headerInterval: Duration = .milliseconds(400), stallSeconds: Double = 0, metadata: TakeMetadata? = nil,
        control: TakeControl? = nil
    ) {
        let opener = TakeFileOpener(
            pattern: FilePattern(file.path), format: file.format, sampleRate: file.sampleRate,
            channelCount: channelCount, replacesExisting: false, numbersTakenNames: false)
        self.init(
            first: TakeFile(path: file.path, file: file, final: nil, wallClock: 0), opener: opener,
            sampleRate: file.sampleRate, samples: samples, drops: drops, counters: counters,
            channelCount: channelCount, control: control, events: metadata?.events ?? TakeEventLog(),
            metadata: metadata, wakeInterval: wakeInterval, headerInterval: headerInterval, stallSeconds: stallSeconds)
    }

    deinit { silence.deallocate() }

    /// The wall-clock time of take frame 0, read just before arming. Main thread, before arming.
    func noteFirstFrame(wallClock: Double) {
        firstFrameWallClock.store(wallClock.bitPattern, ordering: .releasing)
    }

    /// The files finalized so far after the first `count` (the latest are listed). Any thread.
    func closedFiles(after count: Int) -> (files: [ClosedTakeFile], total: Int) {
        finisher.closedFiles(after: count)
    }

    /// Whether a write or a file's finalizing failed (the take should end). Any thread.
    var anyFailed: Bool {
        hasFailed.load(ordering: .acquiring) || finisher.hasFailed.load(ordering: .acquiring)
    }

    /// Starts the threads. Main thread.
    func start() {
        finisher.start()
        thread = WorkerThread(name: "micmon-writer") { [self] in run() }
        if thread == nil {
            // No thread to write with: the take ends at once, with its cause on record.
            failure = SoundFileError(
                .write, path: current?.path ?? opener.pattern.text, message: "could not start the writer thread")
            hasFailed.store(true, ordering: .releasing)
            closeCurrent()
        }
    }

    /// Asks the thread to drain everything the realtime side took, close the files and end; waits
    /// for it. Call only once the realtime side has stopped (client deactivated or gone). Main thread.
    func finish() -> (
        drops: [DropEvent], failure: SoundFileError?, framesWritten: UInt64, keptPartial: String?,
        files: [ClosedTakeFile], fileCount: Int, framesPaused: UInt64, serverGaps: [DropEvent], framesArmed: UInt64
    ) {
        stopRequested.store(true, ordering: .releasing)
        wakeUp.signal()
        thread?.join()
        thread = nil
        // The thread is gone (or never ran): the gap log's reader is now this thread.
        drainServerGaps()
        let finished = finisher.finish()
        return (
            dropHistory, failure ?? finished.failure, totalWritten, finished.keptPartial, finished.closed,
            finished.closedCount, gate.framesPaused, serverGapHistory, framesArmed
        )
    }

    private var clock: SplitClock {
        var wallClock = Double(bitPattern: firstFrameWallClock.load(ordering: .acquiring))
        if wallClock == 0 {
            wallClock = CalendarTime.now() - Double(position) / Double(sampleRate)
            firstFrameWallClock.store(wallClock.bitPattern, ordering: .relaxed)
        }
        return SplitClock(firstFrameWallClock: wallClock, sampleRate: sampleRate)
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
            prepareUpcoming()
            wakeUp.wait(timeout: wakeInterval)
        }
        // The realtime side is done: frames taken but never queued were a trailing drop.
        let total = counters.pointee.framesTaken.load(ordering: .acquiring)
        drain()
        if total > position && failure == nil {
            let gap = DropEvent(startFrame: position, frameCount: total - position)
            record(gap)
            takeSilence(frames: gap.frameCount)
        }
        takeRequests()
        note(gate.flush(upTo: position))
        closeCurrent()
        upcoming?.discard()
        upcoming = nil
    }

    // MARK: The segmenter

    /// Takes the next `frames` (interleaved, at `position`; nil for silence of that many) through
    /// the segmenter: each pass decides how much of what is left is held (armed), written to
    /// the current file, and what happens at its end (a file starts, a trigger stops, a split).
    /// Pausing (writing none of a run while the file stays open) slots in as one more limit here.
    private func take(_ interleaved: UnsafeBufferPointer<Float>?, frames: Int) {
        if !hasBegun {
            // The first frames: the take is armed, so the time of frame 0 is known.
            hasBegun = true
            if current != nil { beginFile(at: 0) }
        }
        var done = 0
        while done < frames && failure == nil {
            let left = frames - done
            let run = interleaved.map {
                UnsafeBufferPointer(rebasing: $0[done * channelCount ..< frames * channelCount])
            }
            guard current != nil else {
                // Armed: hold frames up to the trigger's sample; the file starts there.
                let crossing = run.map { firstCrossing(in: $0, frames: left) } ?? left
                if let run, crossing > 0 {
                    preRoll?.append(UnsafeBufferPointer(rebasing: run[0 ..< crossing * channelCount]))
                } else if run == nil {
                    preRoll?.appendSilence(frames: crossing)
                }
                done += crossing
                position += UInt64(crossing)
                framesArmed += UInt64(crossing)
                if crossing < left { startTriggeredFile() }
                continue
            }
            if let boundary = nextBoundary(), boundary <= position {
                split(at: position)
                continue
            }
            var count = left
            if let boundary = nextBoundary() { count = min(count, Int(boundary - position)) }
            var ends = false
            if rotation.trigger != nil {
                let stop = stopOffset(in: run, frames: count)
                if stop < count || (stop == count && framesBelowOff >= hangFrames) {
                    count = stop
                    ends = true
                }
            }
            admit(run, frames: count)
            done += count
            if ends { endTriggeredFile() }
        }
    }

    /// Writes the next `frames` of `run` (nil: silence) to the current file, less what pauses
    /// leave out: paused frames pass on the take's timeline without reaching the file.
    private func admit(_ run: UnsafeBufferPointer<Float>?, frames: Int) {
        let start = position
        let applied = gate.admit(takeFrame: start, count: UInt64(frames)) { offset, length in
            position = start + offset
            let part = run.map {
                UnsafeBufferPointer(rebasing: $0[Int(offset) * channelCount ..< Int(offset + length) * channelCount])
            }
            write(part, frames: Int(length))
        }
        position = start + UInt64(frames)
        note(applied)
    }

    /// Puts the pauses and resumes that took effect on record.
    private func note(_ applied: [TakeEvent]) {
        guard let last = applied.last else { return }
        for event in applied { events.append(event) }
        isPaused.store(last.kind == .pause, ordering: .relaxed)
    }

    /// The next place the current file ends at: its split boundary or a requested split.
    private func nextBoundary() -> UInt64? {
        switch (boundary, requestedSplits.first) {
        case (let b?, let r?): return min(b, max(r, position))
        case (let b?, nil): return b
        case (nil, let r?): return max(r, position)
        case (nil, nil): return nil
        }
    }

    /// The first frame of `run` (of `frames`) at which a watched sample's magnitude reaches the
    /// trigger's on level, or `frames` when none does.
    private func firstCrossing(in run: UnsafeBufferPointer<Float>, frames: Int) -> Int {
        guard rotation.trigger != nil else { return 0 }
        let watched = rotation.trigger?.channel
        for frame in 0 ..< frames {
            let base = frame * channelCount
            if let watched {
                if run[base + watched].magnitude >= onMagnitude { return frame }
            } else {
                for channel in 0 ..< channelCount where run[base + channel].magnitude >= onMagnitude { return frame }
            }
        }
        return frames
    }

    /// How many of the first `frames` of `run` belong to the triggered take: all of them, or
    /// up to the frame that completes `hangFrames` below the off level (silence is below it).
    /// Keeps `framesBelowOff` and the hanging state.
    private func stopOffset(in run: UnsafeBufferPointer<Float>?, frames: Int) -> Int {
        let watched = rotation.trigger?.channel
        for frame in 0 ..< frames {
            if framesBelowOff >= hangFrames { return frame }
            var above = false
            if let run {
                let base = frame * channelCount
                if let watched {
                    above = run[base + watched].magnitude >= offMagnitude
                } else {
                    for channel in 0 ..< channelCount where run[base + channel].magnitude >= offMagnitude {
                        above = true
                        break
                    }
                }
            }
            framesBelowOff = above ? 0 : framesBelowOff + 1
        }
        // Hanging: below the off level for more than 0.1 s (not between two peaks of a sound).
        triggerState.store(framesBelowOff > UInt64(sampleRate / 10) ? 2 : 1, ordering: .relaxed)
        return frames
    }

    /// The trigger's sample is at `position`: a file starts there, less the pre-roll held.
    private func startTriggeredFile() {
        let held = UInt64(preRoll?.frameCount ?? 0)
        let first = position - held
        let file: TakeFile
        do { file = try opener.open(at: clock.wallClock(ofTakeFrame: first)) } catch {
            fail(error)
            return
        }
        current = file
        framesBelowOff = 0
        triggerState.store(1, ordering: .relaxed)
        events.append(TakeEvent(.triggerStart, at: position))
        beginFile(at: first)
        position = first
        framesArmed -= min(held, framesArmed)  // the pre-roll goes into the file
        preRoll?.takeAll { write($0, frames: $0.count / channelCount) }
    }

    /// The triggered take ends at `position` (hang time passed): close its file and arm again.
    private func endTriggeredFile() {
        events.append(TakeEvent(.triggerStop, at: position))
        closeCurrent()
        upcoming?.discard()
        upcoming = nil
        boundary = nil
        preRoll?.clear()
        triggerState.store(0, ordering: .relaxed)
    }

    /// The current file ends at `takeFrame` (= `position`); the next begins there.
    private func split(at takeFrame: UInt64) {
        while let request = requestedSplits.first, request <= takeFrame { requestedSplits.removeFirst() }
        // A request at a file's very start (or before it) would leave an empty file: none is made.
        if let file = current, file.timeline.frameCount == 0, boundary.map({ $0 > takeFrame }) ?? true { return }
        let next: TakeFile
        if let upcoming {
            next = upcoming
        } else {
            if let upcomingFailure {
                fail(upcomingFailure)
                return
            }
            do { next = try opener.open(at: clock.wallClock(ofTakeFrame: takeFrame)) } catch {
                fail(error)
                return
            }
        }
        upcoming = nil
        upcomingFailure = nil
        closeCurrent()
        current = next
        events.append(TakeEvent(.split, at: takeFrame))
        beginFile(at: takeFrame)
    }

    /// Notes where the current file starts and places its split boundary.
    private func beginFile(at takeFrame: UInt64) {
        headerPosition = 0
        boundary = nil
        if let seconds = rotation.splitSeconds, let splitFrames {
            boundary =
                rotation.splitsOnClock
                ? clock.nextBoundary(after: takeFrame, every: seconds) : takeFrame + splitFrames
        }
    }

    /// The current file's sidecar, rewritten when events came since the last time. Writer
    /// thread, after a wake.
    private func refreshSidecar() {
        guard let metadata, let file = current, var fileMetadata = file.metadata else { return }
        metadata.writeSidecar(for: &fileMetadata, timeline: file.timeline)
        file.metadata = fileMetadata
    }

    /// Creates the next split's file once its boundary is near. Writer thread, between drains.
    private func prepareUpcoming() {
        guard failure == nil, current != nil, upcoming == nil, upcomingFailure == nil, let boundary else { return }
        let ahead = UInt64(Self.lookaheadSeconds * Double(sampleRate))
        guard boundary <= position + ahead else { return }
        do {
            let file = try opener.open(at: clock.wallClock(ofTakeFrame: boundary))
            upcoming = file
        } catch {
            upcomingFailure = error  // the current file is written to its end first
        }
    }

    /// Splits posted by the control side (`TakeRequest(.split)`); the other kinds are applied by
    /// their own pieces.
    private func takeRequests() {
        guard let control else { return }
        for request in control.takeAll() {
            switch request.kind {
            case .split: requestedSplits.append(request.takeFrame)
            case .mark: events.append(TakeEvent(.mark, at: request.takeFrame, label: request.label))
            case .pause, .resume: gate.add(request)
            }
        }
        requestedSplits.sort()
    }

    /// Closes the current file (its header written) and hands it to the finisher.
    private func closeCurrent() {
        guard let file = current else { return }
        current = nil
        closedWritten += UInt64(file.file.framesWritten)
        if let range = file.timeline.takeRange {
            // Every gap before the frames written so far is on the log (`drain`).
            let gaps = events.events(in: range).filter { $0.kind == .serverGap }
            file.serverGaps = UInt64(gaps.count)
            file.serverGapFrames = gaps.reduce(0) { $0 + $1.frameCount }
        }
        var closeFailure = failure
        let cues = file.metadata.map { metadata?.cuePoints(for: $0, timeline: file.timeline) ?? [] } ?? []
        if failure == nil {
            do { try file.file.close(cues: cues) } catch {
                closeFailure = error
                fail(error)
            }
        } else {
            try? file.file.close(cues: cues)
        }
        if let metadata, var fileMetadata = file.metadata {
            metadata.writeSidecar(for: &fileMetadata, timeline: file.timeline, final: true)
            file.metadata = fileMetadata
        }
        finisher.submit(file, failure: closeFailure)
    }

    private func fail(_ error: SoundFileError) {
        if failure == nil { failure = error }
        hasFailed.store(true, ordering: .releasing)
    }

    // MARK: Draining and writing

    /// Rewrites the current file's header when frames came since the last time and
    /// `headerInterval` has passed. Writer thread.
    private func updateHeaderIfDue() {
        guard failure == nil, let file = current, file.timeline.frameCount > headerPosition else { return }
        let now = MonotonicClock.nanoseconds()
        guard now &- lastHeaderUpdate >= headerIntervalNanoseconds else { return }
        do { try file.file.sync() } catch { fail(error) }
        headerPosition = file.timeline.frameCount
        lastHeaderUpdate = now
    }

    /// Takes what the ring holds, with silence where drops were logged. Writer thread.
    private func drain() {
        // Acquiring the ring first: every drop logged before these frames is then visible too.
        var available = samples.availableToRead() / channelCount
        while let slices = drops.readableSlices(count: 1) {
            pendingDrops.append(slices.first[0])
            drops.commitRead(count: 1)
        }
        // The kernel logs a gap before it commits the frames after its place: every gap that
        // falls before the frames available now is read here, before they are written.
        drainServerGaps()
        while failure == nil {
            if let next = pendingDrops.first, next.startFrame == position {
                pendingDrops.removeFirst()
                record(next)
                takeSilence(frames: next.frameCount)
                continue
            }
            var frames = UInt64(available)
            if let next = pendingDrops.first { frames = min(frames, next.startFrame - position) }
            if frames == 0 { break }
            let count = Int(frames) * channelCount
            guard let slices = samples.readableSlices(count: count) else { break }
            metadata?.scanForClips(slices.first, atTakeFrame: position)
            metadata?.scanForClips(slices.second, atTakeFrame: position + UInt64(slices.first.count / channelCount))
            take(slices.first, frames: slices.first.count / channelCount)
            take(slices.second, frames: slices.second.count / channelCount)
            samples.commitRead(count: count)
            available -= Int(frames)
        }
        if failure != nil {
            // Keep the realtime side from dropping forever: discard what arrives.
            let all = samples.readableSlices()
            samples.commitRead(count: all.count)
        }
    }

    /// Writes `frames` (nil: silence) to the current file at `position`, and advances it.
    private func write(_ interleaved: UnsafeBufferPointer<Float>?, frames: Int) {
        guard frames > 0, let file = current else { return }
        if file.metadata == nil, let metadata {
            // Before the file's first frame: its `bext` and the start of its sidecar.
            file.metadata = metadata.fileStarting(
                path: file.path, format: (file.final ?? file.file).format, writer: file.file,
                firstTakeFrame: position)
        }
        let before = file.file.framesWritten
        if failure == nil {
            do {
                if let interleaved {
                    try file.file.write(interleaved: interleaved)
                } else {
                    var left = frames
                    let chunk = silence.count / channelCount
                    while left > 0 {
                        let n = min(left, chunk)
                        try file.file.write(interleaved: UnsafeBufferPointer(rebasing: silence[0 ..< n * channelCount]))
                        left -= n
                    }
                    file.framesDropped += UInt64(frames)
                }
            } catch {
                if error.isClosedPipe { readerWentAway.store(true, ordering: .relaxed) }
                fail(error)
            }
        }
        // What reached the file (a failed write may take part of it).
        file.timeline.append(takeFrame: position, count: UInt64(max(0, file.file.framesWritten - before)))
        position += UInt64(frames)
        totalWritten = closedWritten + UInt64(file.file.framesWritten)
        framesWritten.store(totalWritten, ordering: .relaxed)
    }

    /// Takes the server gaps logged since the last look onto the event log (and the run's list).
    /// Writer thread (the main thread once the writer was joined).
    private func drainServerGaps() {
        guard let serverGaps else { return }
        CaptureSession.drain(serverGaps, into: &serverGapHistory) { gap in
            events.append(TakeEvent(.serverGap, at: gap.startFrame, frameCount: gap.frameCount))
        }
    }

    private func takeSilence(frames: UInt64) {
        take(nil, frames: Int(frames))
    }

    private func record(_ drop: DropEvent) {
        events.append(TakeEvent(.drop, at: drop.startFrame, frameCount: drop.frameCount))
        if let last = dropHistory.last, last.startFrame + last.frameCount == drop.startFrame {
            dropHistory[dropHistory.count - 1].frameCount += drop.frameCount
        } else {
            dropHistory.append(drop)
        }
    }
}
