// Requests to a running recorder from whoever drives it (keys on the terminal, signals, the
// control socket, JACK transport): pause, resume, mark, split. Any thread but the realtime one
// posts them; the writer thread takes them, in order, and applies each at its place on the
// take's timeline. The realtime thread never touches this (the meters keep running when paused).

import Synchronization

/// One request, placed on the take's timeline.
public struct TakeRequest: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Stop writing (the file stays open) from `takeFrame` on.
        case pause
        /// Write again from `takeFrame` on.
        case resume
        /// A user mark at `takeFrame`.
        case mark
        /// Close the current file at `takeFrame` and go on in the next one.
        case split
    }

    public var kind: Kind
    /// Where it applies, in frames of the take's timeline (`CaptureCounters.framesTaken`: the
    /// frames taken when it was posted, or the exact frame when the source knows it).
    public var takeFrame: UInt64
    /// What the user called it (a mark from the control command), or nil.
    public var label: String?

    public init(_ kind: Kind, at takeFrame: UInt64, label: String? = nil) {
        self.kind = kind
        self.takeFrame = takeFrame
        self.label = label
    }
}

/// The queue of requests between the threads that post them and the writer thread. Never
/// touched by the realtime thread, so a lock is fine here.
public final class TakeControl: Sendable {
    private let queue = Mutex<[TakeRequest]>([])

    public init() {}

    /// Queues a request. Any thread but the realtime one.
    public func post(_ request: TakeRequest) {
        queue.withLock { $0.append(request) }
    }

    /// Every request posted so far, in the order posted, and empties the queue. Writer thread.
    public func takeAll() -> [TakeRequest] {
        queue.withLock { requests in
            defer { requests.removeAll(keepingCapacity: true) }
            return requests
        }
    }
}
