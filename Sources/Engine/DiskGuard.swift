// The disk guard (`--min-free SIZE`): free space on the output's file system, the time the take
// can go on at its rate, a warning at 10 minutes left, and the verdict that ends the take before
// the disk is full. Main thread (its 10 Hz look; statvfs never runs on the realtime or writer
// thread).

import Platform
import SoundFile

/// Free space and the time left, as of one look.
public struct DiskReading: Sendable, Equatable {
    /// Bytes the take may still use on its file system.
    public var freeBytes: UInt64
    /// Seconds the take can go on at its rate before free space reaches the floor (the floor is
    /// `--min-free` plus what must still be written at the end); nil when nothing is written.
    public var secondsLeft: Double?

    public init(freeBytes: UInt64, secondsLeft: Double?) {
        self.freeBytes = freeBytes
        self.secondsLeft = secondsLeft
    }
}

/// Bytes a take needs per second of audio, from its format: what it writes during the take and
/// what the end still writes (a take through the crash-safe intermediate is encoded into FILE at
/// the end, while the intermediate is still there).
public struct TakeByteRate: Sendable, Equatable {
    /// Written during the take (into FILE, or into the W64 intermediate).
    public var whileRecording: Double
    /// Written at the end, per second of take (the encoded FILE of an intermediate take), else 0.
    public var atEnd: Double

    public init(whileRecording: Double, atEnd: Double = 0) {
        self.whileRecording = whileRecording
        self.atEnd = atEnd
    }

    /// The rates of a take in `format`, at `sampleRate`, with `channelCount` channels. FLAC is
    /// counted as its PCM size and the lossy codecs at 48 kB/s a channel (more than any of
    /// their settings gives), so the estimate errs towards stopping early.
    public init(format: AudioFileFormat, sampleRate: Int, channelCount: Int) {
        let frames = Double(sampleRate * channelCount)
        let bytes: Double
        switch format.encoding {
        case .pcm16: bytes = 2
        case .pcm24: bytes = 3
        case .pcm32, .float: bytes = 4
        }
        if format.container.intermediate != nil {
            let final = format.container.isLossy ? 48_000 * Double(channelCount) : frames * bytes
            self.init(whileRecording: frames * 4, atEnd: final)
        } else {
            self.init(whileRecording: frames * bytes)
        }
    }
}

/// Watches the free space of one folder's file system for a running take.
///
/// The floor is `minimumFreeBytes` plus what the take must still write once it ends: the
/// frames the ring may hold (`bufferSeconds` of audio) and, for a take through the intermediate,
/// the encoded FILE of everything written so far. When free space is at or below the floor the
/// verdict is `.stop`: the take ends through the normal stop path, so every frame taken reaches
/// the file. `minimumFreeBytes` 0 turns the stop off (free space and time left are still shown).
public final class DiskGuard {
    public enum Verdict: Equatable, Sendable {
        case fine
        /// Time left fell to `warningSeconds` (given once, again only after it rose well above).
        case warn
        /// Free space reached the floor: end the take now.
        case stop
    }

    public let folder: String
    public let minimumFreeBytes: UInt64
    public let rate: TakeByteRate
    public let warningSeconds: Double
    public let bufferSeconds: Double
    private var hasWarned = false
    public private(set) var lastReading: DiskReading?
    /// Why statvfs failed at the last look, if it did (the guard then says nothing).
    public private(set) var lastProblem: String?

    public init(
        folder: String, minimumFreeBytes: UInt64, rate: TakeByteRate, warningSeconds: Double = 600,
        bufferSeconds: Double = 5
    ) {
        self.folder = folder
        self.minimumFreeBytes = minimumFreeBytes
        self.rate = rate
        self.warningSeconds = warningSeconds
        self.bufferSeconds = bufferSeconds
    }

    /// Whether the stop is on (`--min-free` above 0).
    public var stops: Bool { minimumFreeBytes > 0 }

    /// The bytes that must stay free once `secondsWritten` of the take are on disk.
    public func floor(secondsWritten: Double) -> UInt64 {
        guard stops else { return 0 }
        let pending = bufferSeconds * rate.whileRecording + secondsWritten * rate.atEnd
        return minimumFreeBytes &+ UInt64(max(0, pending))
    }

    /// The verdict for `space` once `secondsWritten` of the take are on disk. Pure but for the
    /// warning's memory.
    public func judge(_ space: FileSystemSpace, secondsWritten: Double) -> Verdict {
        let floor = floor(secondsWritten: secondsWritten)
        let perSecond = rate.whileRecording + rate.atEnd
        let margin = space.availableBytes > floor ? Double(space.availableBytes - floor) : 0
        let left = perSecond > 0 ? margin / perSecond : nil
        lastReading = DiskReading(freeBytes: space.availableBytes, secondsLeft: left)
        if stops && space.availableBytes <= floor { return .stop }
        guard let left else { return .fine }
        if left <= warningSeconds {
            if hasWarned { return .fine }
            hasWarned = true
            return .warn
        }
        // Re-armed only well above the mark, so a rate that hovers there warns once.
        if left > warningSeconds * 1.1 { hasWarned = false }
        return .fine
    }

    /// Looks at the file system now. Main thread.
    public func check(secondsWritten: Double) -> Verdict {
        switch FileSystem.space(at: folder) {
        case .success(let space):
            lastProblem = nil
            return judge(space, secondsWritten: secondsWritten)
        case .failure(let error):
            lastProblem = "\(folder): \(error.description)"
            return .fine
        }
    }
}
