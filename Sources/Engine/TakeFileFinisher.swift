// Finalizes the files of a take off the writer thread: copies a crash-safe intermediate into
// the asked container (which can take minutes for an hour of FLAC, longer than the capture
// ring lasts), removes it, and tells `onFileClosed`. Its own thread; `submit` from the writer
// thread, `finish` and the reads from the main thread.

import Platform
import SoundFile
import Synchronization

/// The files of a run once finalized, in the order they closed: the latest `listLimit` are
/// kept (all are counted), so memory stays flat on a recorder that rotates for days.
final class TakeFileFinisher: @unchecked Sendable {
    static let listLimit = 1000

    private struct Job {
        let file: TakeFile
        /// The error the file ended on (it holds everything up to it), or nil.
        let failure: SoundFileError?
    }

    private struct State {
        var jobs: [Job] = []
        var closed: [ClosedTakeFile] = []
        var closedCount = 0
        var failure: SoundFileError?
        var keptPartial: String?
        var stopping = false
    }

    private let state = Mutex(State())
    private let wakeUp = WakeSignal()
    private let channelCount: Int
    private let onFileClosed: (@Sendable (ClosedTakeFile) -> Void)?
    private var thread: WorkerThread?
    /// Set when a conversion failed (the intermediate stays and holds the file).
    let hasFailed = Atomic<Bool>(false)

    init(channelCount: Int, onFileClosed: (@Sendable (ClosedTakeFile) -> Void)?) {
        self.channelCount = channelCount
        self.onFileClosed = onFileClosed
    }

    /// Main thread, before the writer starts.
    func start() {
        thread = WorkerThread(name: "micmon-finisher") { [self] in run() }
    }

    /// A file whose written part (`file.file`) is closed. Writer thread.
    func submit(_ file: TakeFile, failure: SoundFileError?) {
        let job = Job(file: file, failure: failure)
        if thread == nil {
            finalize(job)  // no thread to hand it to: on the caller's
            return
        }
        state.withLock { $0.jobs.append(job) }
        wakeUp.signal()
    }

    /// Finalizes what is queued and ends the thread; then the totals. Main thread, after the
    /// writer was joined.
    func finish() -> (closed: [ClosedTakeFile], closedCount: Int, failure: SoundFileError?, keptPartial: String?) {
        state.withLock { $0.stopping = true }
        wakeUp.signal()
        thread?.join()
        thread = nil
        return state.withLock { ($0.closed, $0.closedCount, $0.failure, $0.keptPartial) }
    }

    /// The files finalized after the first `count` of the run (those still listed). Any thread.
    func closedFiles(after count: Int) -> (files: [ClosedTakeFile], total: Int) {
        state.withLock { state in
            let listedFrom = state.closedCount - state.closed.count
            let from = max(count, listedFrom) - listedFrom
            return (Array(state.closed[from...]), state.closedCount)
        }
    }

    private func run() {
        while true {
            let (jobs, stopping) = state.withLock { state in
                defer { state.jobs.removeAll(keepingCapacity: true) }
                return (state.jobs, state.stopping)
            }
            for job in jobs { finalize(job) }
            if stopping && jobs.isEmpty { break }
            if jobs.isEmpty { _ = wakeUp.wait(timeout: .milliseconds(500)) }
        }
    }

    private func finalize(_ job: Job) {
        var failure = job.failure
        var kept: String?
        let file = job.file
        if let final = file.final {
            if let error = convert(file.file.path, into: final, frames: file.timeline.frameCount) {
                if failure == nil { failure = error }
                kept = file.file.path
            } else if job.failure != nil || !FileSystem.remove(file.file.path) {
                kept = file.file.path
            }
        }
        let closed = ClosedTakeFile(
            path: kept ?? file.path, frameCount: file.timeline.frameCount,
            takeRange: file.timeline.takeRange ?? 0 ..< 0, framesDropped: file.framesDropped,
            serverGaps: file.serverGaps, serverGapFrames: file.serverGapFrames, failure: failure?.description)
        state.withLock { state in
            if state.closed.count >= Self.listLimit { state.closed.removeFirst(state.closed.count / 2) }
            state.closed.append(closed)
            state.closedCount += 1
            if let kept { state.keptPartial = kept }
            if state.failure == nil, let failure, job.failure == nil { state.failure = failure }
        }
        onFileClosed?(closed)
    }

    /// Copies the closed intermediate (32-bit float, the samples as JACK delivered them) into
    /// `final` as floats, so FILE holds what writing it directly would have (libsndfile's own
    /// conversion to the asked encoding), and closes `final`. The error, or nil.
    private func convert(_ intermediate: String, into final: SoundFileWriter, frames: UInt64) -> SoundFileError? {
        do throws(SoundFileError) {
            let reader = try SoundFileReader(path: intermediate)
            let chunk = UnsafeMutableBufferPointer<Float>.allocate(capacity: 16384 * channelCount)
            defer { chunk.deallocate() }
            while true {
                let count = reader.read(into: chunk)
                if count <= 0 { break }
                try final.write(interleaved: UnsafeBufferPointer(rebasing: chunk[0 ..< count * channelCount]))
            }
            reader.close()
            try final.close()
            if final.framesWritten != Int64(frames) {
                throw SoundFileError(
                    .write, path: final.path,
                    message: "the copy holds \(final.framesWritten) of the file's \(frames) frames")
            }
            return nil
        } catch {
            try? final.close()
            hasFailed.store(true, ordering: .releasing)
            return error
        }
    }
}
