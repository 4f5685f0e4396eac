// Pause and resume on the writer side: of each run of take frames the writer is about to put in
// a file, which part is written. Owned and called by the writer thread only.

/// What pause and resume requests leave of the take in the file. The writer gives it each run
/// of take frames (samples or the silence of a drop) before writing it; the gate says which
/// parts to write and applies the pauses and resumes that fall in the run (each `TakeFile` keeps
/// its own timeline of what was written). A request applies at its take frame, or at the first
/// frame not yet written when that has already passed (the event it returns says where it
/// applied).
///
/// One piece on its own: the pause state carries on across the files a split take is cut into.
struct PauseGate {
    /// Writing stopped at a pause and not yet resumed (as of the frames given so far).
    private(set) var isPaused = false
    /// Take frames left out of the file by pauses so far.
    private(set) var framesPaused: UInt64 = 0
    /// Pause and resume requests not yet applied, ordered by take frame (then as posted).
    private var pending: [TakeRequest] = []

    init(startsPaused: Bool = false) { isPaused = startsPaused }

    /// Queues a pause or resume request; other kinds are not the gate's. Writer thread.
    mutating func add(_ request: TakeRequest) {
        guard request.kind == .pause || request.kind == .resume else { return }
        let place = pending.firstIndex { $0.takeFrame > request.takeFrame } ?? pending.endIndex
        pending.insert(request, at: place)
    }

    /// For the next `count` frames of the take from `takeFrame` on: calls `write(offset, length)`
    /// for each part to write (offsets from `takeFrame`, in order, never overlapping) and returns the pauses and resumes that took effect, at the take frame
    /// where each did. A pause when paused, or a resume when writing, changes nothing and is not
    /// returned. Writer thread.
    mutating func admit(
        takeFrame: UInt64, count: UInt64, write: (_ offset: UInt64, _ length: UInt64) -> Void
    ) -> [TakeEvent] {
        var events: [TakeEvent] = []
        var offset: UInt64 = 0
        while offset < count {
            // Requests due at or before this frame take effect now.
            let here = takeFrame + offset
            while let next = pending.first, next.takeFrame <= here {
                pending.removeFirst()
                if apply(next.kind) { events.append(TakeEvent(next.kind == .pause ? .pause : .resume, at: here)) }
            }
            let nextChange = pending.first.map { $0.takeFrame - takeFrame } ?? count
            let length = min(count, nextChange) - offset
            if isPaused {
                framesPaused += length
            } else {
                write(offset, length)
            }
            offset += length
        }
        return events
    }

    /// Requests due at or before `takeFrame` with no frame after them yet (the take's end), so
    /// a pause at the last frame is still on record. Writer thread.
    mutating func flush(upTo takeFrame: UInt64) -> [TakeEvent] {
        var events: [TakeEvent] = []
        while let next = pending.first, next.takeFrame <= takeFrame {
            pending.removeFirst()
            if apply(next.kind) { events.append(TakeEvent(next.kind == .pause ? .pause : .resume, at: takeFrame)) }
        }
        return events
    }

    private mutating func apply(_ kind: TakeRequest.Kind) -> Bool {
        let pauses = kind == .pause
        guard pauses != isPaused else { return false }
        isPaused = pauses
        return true
    }
}
