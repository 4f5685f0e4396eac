// The events of a take (drops, server gaps, clips, pauses, marks, triggers, splits) on its
// timeline, for the summary, the JSON log, the cue chunk and the sidecar. Any thread but the
// realtime one appends (the writer, the main thread); readers take snapshots.

import Synchronization

/// Something that happened at a place on the take's timeline.
public struct TakeEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Frames micmon lost (silence in their place): `frameCount` long.
        case drop
        /// A graph-wide gap (every client lost the cycles): `frameCount` long, nothing inserted.
        case serverGap = "server_gap"
        /// The first clipped sample of a run of clips, on `channel`.
        case clip
        case pause
        case resume
        /// A user mark (the `m` key, SIGUSR1, `micmon mark`), with its `label` if it has one.
        case mark
        /// A level trigger started a take / the level stayed below the off level for the hang time.
        case triggerStart = "trigger_start"
        case triggerStop = "trigger_stop"
        /// A new file began here (rotation on the clock, `--split`, a transport split).
        case split
    }

    public var kind: Kind
    /// Where it happened, in frames of the take's timeline (`CaptureCounters.framesTaken`).
    public var takeFrame: UInt64
    /// How long it lasted (drops and gaps), else 0.
    public var frameCount: UInt64
    /// The channel it concerns (clips), else nil.
    public var channel: Int?
    public var label: String?

    public init(
        _ kind: Kind, at takeFrame: UInt64, frameCount: UInt64 = 0, channel: Int? = nil, label: String? = nil
    ) {
        self.kind = kind
        self.takeFrame = takeFrame
        self.frameCount = frameCount
        self.channel = channel
        self.label = label
    }
}

/// The events of one run, in the order appended, up to `limit` (every later one is only
/// counted, so memory stays flat on a recorder left running for days).
public final class TakeEventLog: Sendable {
    public static let defaultLimit = 100_000
    private struct Contents {
        var events: [TakeEvent] = []
        var overflowed: UInt64 = 0
    }
    private let contents = Mutex(Contents())
    public let limit: Int

    public init(limit: Int = TakeEventLog.defaultLimit) { self.limit = limit }

    /// Any thread but the realtime one.
    public func append(_ event: TakeEvent) {
        contents.withLock { contents in
            if contents.events.count < limit {
                contents.events.append(event)
            } else {
                contents.overflowed += 1
            }
        }
    }

    /// Every event kept so far, in the order appended.
    public var events: [TakeEvent] { contents.withLock { $0.events } }
    /// The events appended after the first `count` (for a reader that follows the log).
    public func events(from count: Int) -> [TakeEvent] {
        contents.withLock { contents in
            count < contents.events.count ? Array(contents.events[count...]) : []
        }
    }

    /// Events not kept because the log was full.
    public var eventsNotKept: UInt64 { contents.withLock { $0.overflowed } }

    /// The events whose place falls in `range` of the take's timeline, ordered by place.
    public func events(in range: Range<UInt64>) -> [TakeEvent] {
        contents.withLock { contents in
            contents.events.filter { range.contains($0.takeFrame) }
        }.sorted { $0.takeFrame < $1.takeFrame }
    }
}

/// Where a file's frames come from on the take's timeline: spans of consecutive take frames
/// (a pause or a trigger's silence between two spans leaves no frames in the file). Kept by
/// the writer thread for the file it writes; read at the file's close to place its markers.
public struct FileTimeline: Sendable, Equatable {
    public struct Span: Sendable, Equatable {
        public var takeFrame: UInt64
        public var fileFrame: UInt64
        public var frameCount: UInt64
    }

    public private(set) var spans: [Span] = []
    /// Frames in the file so far.
    public private(set) var frameCount: UInt64 = 0

    public init() {}

    /// Notes that the next `count` frames of the file are the take's frames from `takeFrame` on.
    public mutating func append(takeFrame: UInt64, count: UInt64) {
        guard count > 0 else { return }
        if let last = spans.last, last.takeFrame + last.frameCount == takeFrame {
            spans[spans.count - 1].frameCount += count
        } else {
            spans.append(Span(takeFrame: takeFrame, fileFrame: frameCount, frameCount: count))
        }
        frameCount += count
    }

    /// The file frame that holds `takeFrame`, or nil when the file does not hold it. A place
    /// just past a span's end (a pause's place) maps to the frame after the span.
    public func fileFrame(ofTakeFrame takeFrame: UInt64) -> UInt64? {
        for span in spans where takeFrame >= span.takeFrame && takeFrame <= span.takeFrame + span.frameCount {
            return span.fileFrame + (takeFrame - span.takeFrame)
        }
        return nil
    }

    /// The take frames the file spans, first to last (gaps included), or nil when empty.
    public var takeRange: Range<UInt64>? {
        guard let first = spans.first, let last = spans.last else { return nil }
        return first.takeFrame ..< last.takeFrame + last.frameCount
    }
}

/// A file of a take once it is finalized (closed, converted if it went through an
/// intermediate): what the summary lists, and what the file-closed hook and retention are told.
/// Made by the writer thread.
public struct ClosedTakeFile: Sendable, Equatable {
    public var path: String
    /// Frames the file holds.
    public var frameCount: UInt64
    /// The take frames the file spans (first to last, pauses included).
    public var takeRange: Range<UInt64>
    /// Frames of silence micmon put in place of lost ones.
    public var framesDropped: UInt64
    /// The graph-wide gaps whose place falls within `takeRange` (every client lost those cycles;
    /// nothing is written for them), and the frames they span.
    public var serverGaps: UInt64
    public var serverGapFrames: UInt64
    /// Set when the file ended on an error (it holds everything up to the fault).
    public var failure: String?

    public init(
        path: String, frameCount: UInt64, takeRange: Range<UInt64>, framesDropped: UInt64 = 0,
        serverGaps: UInt64 = 0, serverGapFrames: UInt64 = 0, failure: String? = nil
    ) {
        self.path = path
        self.frameCount = frameCount
        self.takeRange = takeRange
        self.framesDropped = framesDropped
        self.serverGaps = serverGaps
        self.serverGapFrames = serverGapFrames
        self.failure = failure
    }
}

extension TakeEventLog {
    /// Events kept so far.
    public var count: Int { contents.withLock { $0.events.count } }

    /// The events kept after the first `count`, in the order appended: a reader that follows the
    /// log (the `--on-event` hooks) takes what is new since its last look.
    public func events(after count: Int) -> [TakeEvent] {
        contents.withLock { contents in
            count < contents.events.count ? Array(contents.events[max(0, count)...]) : []
        }
    }
}
