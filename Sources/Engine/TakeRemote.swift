// The handle keys, signals, the control socket and the transport follower drive a running take
// through: pause, resume, mark, split and stop requests, placed on the take's timeline, and what
// a status reply says. Any thread but the realtime one, while the session lives.

import Synchronization

/// Drives a running capture session from any thread but the realtime one (the main loop, the
/// control socket's thread). Requests go through the session's `TakeControl` stamped with the
/// frames taken when posted; the writer applies them there. Valid while its session lives (the
/// session outlives every thread that holds one).
public final class TakeRemote: @unchecked Sendable {
    public let control: TakeControl
    /// Whether the take is recording (a writer runs), and the rate of its frames.
    public let isRecording: Bool
    public let sampleRate: Int
    // SAFETY: the counters live in the session's memory, freed only when the session is, after
    // every holder of this handle has stopped.
    private let counters: UnsafeMutablePointer<CaptureCounters>
    private let writer: TakeWriter?
    /// Paused as last asked (keys toggle it); the writer applies it at its frame.
    private let pauseAsked = Atomic<Bool>(false)
    private let stopAsked = Atomic<Bool>(false)

    init(control: TakeControl, counters: UnsafeMutablePointer<CaptureCounters>, writer: TakeWriter?, sampleRate: Int) {
        self.control = control
        self.counters = counters
        self.writer = writer
        self.sampleRate = sampleRate
        isRecording = writer != nil
    }

    /// Frames on the take's timeline so far.
    public var framesTaken: UInt64 { counters.pointee.framesTaken.load(ordering: .acquiring) }
    /// Frames the file holds so far (as of the writer's last wake).
    public var framesWritten: UInt64 { writer?.framesWritten.load(ordering: .relaxed) ?? 0 }
    /// Writing is paused (as of the frames written so far).
    public var isPaused: Bool { writer?.isPaused.load(ordering: .relaxed) ?? false }
    /// Paused as last asked (what a toggle flips).
    public var isPauseAsked: Bool { pauseAsked.load(ordering: .relaxed) }
    /// Someone asked the take to stop (`micmon stop`, the `q` key); the main loop looks.
    public var isStopAsked: Bool { stopAsked.load(ordering: .relaxed) }

    /// Pauses at `takeFrame` (default: the frames taken now). False when already paused (as asked)
    /// or not recording: nothing is posted.
    @discardableResult
    public func pause(at takeFrame: UInt64? = nil) -> Bool {
        guard isRecording, !pauseAsked.exchange(true, ordering: .relaxed) else { return false }
        control.post(TakeRequest(.pause, at: takeFrame ?? framesTaken))
        return true
    }

    /// Resumes at `takeFrame` (default: now). False when not paused (as asked): nothing is posted.
    @discardableResult
    public func resume(at takeFrame: UInt64? = nil) -> Bool {
        guard isRecording, pauseAsked.exchange(false, ordering: .relaxed) else { return false }
        control.post(TakeRequest(.resume, at: takeFrame ?? framesTaken))
        return true
    }

    /// Pauses when writing, resumes when paused (as last asked); returns whether it is now paused.
    @discardableResult
    public func togglePause() -> Bool {
        if isPauseAsked {
            resume()
            return false
        }
        pause()
        return true
    }

    /// A user mark at `takeFrame` (default: now), with an optional label. Nothing without a
    /// writer (no one would take it).
    public func mark(label: String? = nil, at takeFrame: UInt64? = nil) {
        guard isRecording else { return }
        control.post(TakeRequest(.mark, at: takeFrame ?? framesTaken, label: label))
    }

    /// A new file from `takeFrame` on (default: now), for the writer's segmenter. Nothing
    /// without a writer.
    public func split(at takeFrame: UInt64? = nil) {
        guard isRecording else { return }
        control.post(TakeRequest(.split, at: takeFrame ?? framesTaken))
    }

    /// Asks the main loop to end the take (as SIGINT does).
    public func stop() { stopAsked.store(true, ordering: .relaxed) }
}
