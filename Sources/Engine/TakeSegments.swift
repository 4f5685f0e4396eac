// What a recorder does with the take's frames beyond writing them: the pre-roll it keeps while
// armed, the level trigger that starts and ends takes, and the rotation plan (where files
// split). Plain values and the pre-roll's buffer; the writer thread runs them (made on the main
// thread, before activation).

import DSP

/// `--trigger`: a take starts at the first sample whose magnitude reaches `onLevel` (on any
/// recorded channel, or on `channel`), and ends once every sample has stayed below `offLevel`
/// for `hangFrames` frames.
public struct LevelTrigger: Sendable, Equatable {
    /// dBFS.
    public var onDecibels: Double
    public var offDecibels: Double
    public var hangSeconds: Double
    /// The recorded channel it watches (0-based), or nil for any.
    public var channel: Int?

    public init(onDecibels: Double, offDecibels: Double? = nil, hangSeconds: Double = 3, channel: Int? = nil) {
        self.onDecibels = onDecibels
        self.offDecibels = offDecibels ?? onDecibels - 6
        self.hangSeconds = hangSeconds
        self.channel = channel
    }

    /// The linear magnitude a sample reaches `decibels` at: 10^(dB/20), as a Float.
    public static func magnitude(decibels: Double) -> Float { Float(Decibels.gain(decibels: decibels)) }
}

/// How a recording is cut into files: pre-roll, trigger, splits. The default writes one file.
public struct TakeRotation: Sendable, Equatable {
    /// `--pre-roll`: seconds kept while armed and written at the start of each take (0 to 60).
    public var preRollSeconds: Double = 0
    public var trigger: LevelTrigger?
    /// `--split`: a new file every this many seconds (of the take's timeline).
    public var splitSeconds: Double?
    /// `--split-on-clock`: boundaries on whole multiples of `splitSeconds` of local time.
    public var splitsOnClock = false
    /// Splits come on request (`TakeRequest(.split)`: `--transport-split` each time the
    /// transport rolls again).
    public var splitsOnRequest = false

    public init() {}

    /// Whether the run may write more than one file (FILE is then a pattern, never overwriting).
    public var writesSeveralFiles: Bool { trigger != nil || splitSeconds != nil || splitsOnRequest }
}

/// The last frames of the take while no file takes them (armed): a ring of whole interleaved
/// frames, allocated once (channels × rate × seconds). Writer thread.
final class PreRollBuffer {
    private let storage: UnsafeMutableBufferPointer<Float>
    private let channelCount: Int
    let capacityFrames: Int
    /// Where the oldest kept frame starts, and how many are kept.
    private var startFrame = 0
    private(set) var frameCount = 0

    init(frames: Int, channelCount: Int) {
        capacityFrames = frames
        self.channelCount = channelCount
        storage = .allocate(capacity: max(1, frames * channelCount))
        storage.initialize(repeating: 0)
    }

    deinit { storage.deallocate() }

    /// Keeps `frames` (interleaved), dropping the oldest when full.
    func append(_ frames: UnsafeBufferPointer<Float>) {
        guard capacityFrames > 0 else { return }
        var incoming = frames.count / channelCount
        var source = frames.baseAddress!
        if incoming > capacityFrames {
            source += (incoming - capacityFrames) * channelCount
            incoming = capacityFrames
            startFrame = 0
            frameCount = 0
        }
        var end = (startFrame + frameCount) % capacityFrames
        var left = incoming
        while left > 0 {
            let run = min(left, capacityFrames - end)
            // SAFETY: `run` frames fit from `end` (below capacity), and the source holds `left` more.
            (storage.baseAddress! + end * channelCount).update(from: source, count: run * channelCount)
            source += run * channelCount
            end = (end + run) % capacityFrames
            left -= run
        }
        let total = frameCount + incoming
        if total > capacityFrames { startFrame = (startFrame + total - capacityFrames) % capacityFrames }
        frameCount = min(total, capacityFrames)
    }

    /// Keeps `frames` of silence (lost frames), dropping the oldest when full.
    func appendSilence(frames: Int) {
        var left = frames
        let zeros = [Float](repeating: 0, count: 1024 * channelCount)
        zeros.withUnsafeBufferPointer { zeros in
            while left > 0 {
                let run = min(left, 1024)
                append(UnsafeBufferPointer(rebasing: zeros[0 ..< run * channelCount]))
                left -= run
            }
        }
    }

    /// The kept frames, oldest first, as up to two runs; then forgets them.
    func takeAll(_ body: (UnsafeBufferPointer<Float>) -> Void) {
        var left = frameCount
        var start = startFrame
        while left > 0 {
            let run = min(left, capacityFrames - start)
            body(UnsafeBufferPointer(start: storage.baseAddress! + start * channelCount, count: run * channelCount))
            start = (start + run) % capacityFrames
            left -= run
        }
        clear()
    }

    func clear() {
        startFrame = 0
        frameCount = 0
    }
}
