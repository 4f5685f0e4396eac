// What micmon says about a recorder's files and its trigger and rotation events: the stderr
// lines, the JSON event lines, and the summary's list of files with their frame ranges. Pure;
// any thread.

/// A file of the take once finalized, as the summary and the JSON lines list it.
public struct TakeFileEntry: Sendable, Equatable {
    public var path: String
    /// Frames it holds, and the take frames it spans (first, end).
    public var frameCount: UInt64
    public var firstTakeFrame: UInt64
    public var endTakeFrame: UInt64
    public var framesDropped: UInt64
    public var failure: String?

    public init(
        path: String, frameCount: UInt64, firstTakeFrame: UInt64, endTakeFrame: UInt64, framesDropped: UInt64 = 0,
        failure: String? = nil
    ) {
        self.path = path
        self.frameCount = frameCount
        self.firstTakeFrame = firstTakeFrame
        self.endTakeFrame = endTakeFrame
        self.framesDropped = framesDropped
        self.failure = failure
    }

    /// The summary's (and the `file_closed` line's) object: path, frames, the take frames.
    public func json(sampleRate: Int) -> JSONObject {
        var object = JSONObject()
        fill(&object, sampleRate: sampleRate)
        return object
    }

    func fill(_ object: inout JSONObject, sampleRate: Int) {
        object.string("path", path)
        object.integer("frames", frameCount)
        object.integer("take_start_frame", firstTakeFrame)
        object.integer("take_end_frame", endTakeFrame)
        object.number("take_start_s", Double(firstTakeFrame) / Double(max(sampleRate, 1)), decimals: 3)
        object.integer("frames_dropped", framesDropped)
        if let failure { object.string("failure", failure) }
    }

    /// `{"type":"event","schema":1,"time":12.000,"event":"file_closed","path":...}`: one line.
    public func closedJSON(sampleRate: Int) -> String {
        var object = JSONObject(type: "event")
        object.number("time", Double(endTakeFrame) / Double(max(sampleRate, 1)), decimals: 3)
        object.string("event", "file_closed")
        fill(&object, sampleRate: sampleRate)
        return object.text
    }

    /// `file: logs/1200.wav, take frames 0 … 480000 (480000 frames)`.
    public var text: String {
        "file: " + TextFormat.printable(path) + ", take frames \(firstTakeFrame) … \(endTakeFrame) "
            + "(\(frameCount) frames)" + (failure.map { "; " + TextFormat.printable($0) } ?? "")
    }
}

/// A trigger's start or stop, or a rotation (a new file), on the take's timeline.
public struct TakeTimelineEvent: Sendable, Equatable {
    /// "trigger_start", "trigger_stop" or "split".
    public var kind: String
    public var takeFrame: UInt64
    public var sampleRate: Int

    public init(kind: String, takeFrame: UInt64, sampleRate: Int) {
        self.kind = kind
        self.takeFrame = takeFrame
        self.sampleRate = sampleRate
    }

    var seconds: Double { Double(takeFrame) / Double(max(sampleRate, 1)) }

    /// `{"type":"event","schema":1,"time":3.250,"event":"trigger_start","frame":156000}`.
    public var json: String {
        var object = JSONObject(type: "event")
        object.number("time", seconds, decimals: 3)
        object.string("event", kind)
        object.integer("frame", takeFrame)
        return object.text
    }

    /// `[3.250 s] trigger: take started (frame 156000)`.
    public var text: String {
        let what: String
        switch kind {
        case "trigger_start": what = "trigger: take started"
        case "trigger_stop": what = "trigger: take ended (below the off level for the hang time)"
        case "split": what = "next file"
        default: what = kind
        }
        return "[" + TextFormat.fixed(seconds, decimals: 3) + " s] " + what + " (frame \(takeFrame))"
    }
}

extension SessionSummary {
    /// The summary's lines for the files (the latest listed, all counted).
    func fileLines() -> [String] {
        guard fileCount > 0 else { return [] }
        var lines = [
            "  files:     \(fileCount) written" + (fileCount > files.count ? ", the latest \(files.count):" : ":")
        ]
        lines += files.map { "    " + $0.text }
        return lines
    }
}
