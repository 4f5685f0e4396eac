// What a take's files carry besides samples: the `bext` chunk (WAV, RF64), the cue points (WAV,
// RF64) and the sidecar FILE.json (every container), each file its own, and the clip events the
// writer finds in the samples it writes. Made on the main thread (which also notes the capture
// latency before the take is armed); used by the writer thread, through per-file calls at a
// file's first frame, after each wake and at its close.

import Jack
import Platform
import SoundFile
import Synchronization

/// What the user and the program say of a take, for every file it writes.
public struct TakeMetadataOptions: Sendable {
    /// `--description`: the `bext` description (at most `BroadcastInfo.descriptionLimit` bytes).
    public var description = ""
    /// The program and its version, as the `bext` originator ("micmon 0.1.0").
    public var software = "micmon"
    public init(description: String = "", software: String = "micmon") {
        self.description = description
        self.software = software
    }
}

/// A file of the take as its metadata knows it: where it begins on the take's timeline, when its
/// first sample was captured, what went into its `bext`. Writer thread.
struct TakeFileMetadata {
    /// FILE as the user will find it (the asked container, not a crash-safe intermediate).
    let path: String
    let format: AudioFileFormat
    /// The take frame of the file's first frame.
    let firstTakeFrame: UInt64
    /// The first sample's time, when the take's clock was known.
    var origination: LocalTime?
    var timeReference: UInt64?
    var codingHistory: String
    /// Whether the file carries a `bext` chunk; why not when setting it failed.
    var hasBroadcastInfo = false
    var broadcastInfoError: String?
    /// Events the last sidecar was written from, and how many of them it placed in the file.
    var eventsSeen = -1
    var eventsPlaced = 0
    var eventsInRange = 0
    /// Why the sidecar could not be rewritten last time (the take goes on; the last good one stays).
    var sidecarError: String?
}

/// The metadata of a take's files. Made on the main thread; the writer thread uses it.
final class TakeMetadata: @unchecked Sendable {
    let options: TakeMetadataOptions
    let sampleRate: Int
    /// The recorded channels' names and the source port behind each ("" for none).
    let channelNames: [String]
    let sourcePorts: [String]
    let events: TakeEventLog
    private let counters: UnsafeMutablePointer<CaptureCounters>
    /// The largest capture latency of the source ports, in frames (main thread, before arming).
    private let captureLatency = Atomic<Int>(0)
    /// Resolved by the writer thread once the first frame was taken.
    private(set) var clock: TakeClock?
    private var clipRuns: ClipRuns

    /// A clip run ends after this long without a clipped sample on its channel (0.5 s).
    var clipRunGapFrames: UInt64 { UInt64(max(sampleRate / 2, 1)) }

    init(
        options: TakeMetadataOptions, sampleRate: Int, channelNames: [String], sourcePorts: [String],
        events: TakeEventLog, counters: UnsafeMutablePointer<CaptureCounters>
    ) {
        self.options = options
        self.sampleRate = sampleRate
        self.channelNames = channelNames
        self.sourcePorts = sourcePorts
        self.events = events
        self.counters = counters
        clipRuns = ClipRuns(channelCount: channelNames.count, gapFrames: UInt64(max(sampleRate / 2, 1)))
    }

    /// The sidecar's path for a file: FILE.json.
    static func sidecarPath(for path: String) -> String { path + ".json" }

    /// Notes the capture latency of the sources (the largest JACK reports). Main thread, before
    /// the take is armed.
    func noteCaptureLatency(frames: Int) { captureLatency.store(max(frames, 0), ordering: .relaxed) }

    /// The take's clock, once the realtime thread has taken the first frame (nil before, and
    /// where the cycle's time is unknown). Writer thread.
    func resolveClock() -> TakeClock? {
        if let clock { return clock }
        guard counters.pointee.framesTaken.load(ordering: .acquiring) > 0 else { return nil }
        let cycleStart = counters.pointee.firstCycleMicroseconds.load(ordering: .relaxed)
        guard cycleStart > 0 else { return nil }
        // Both clocks read together: the JACK time between two wall-clock reads.
        let before = WallClock.nanoseconds()
        let jackNow = JackClock.now()
        let after = WallClock.nanoseconds()
        clock = TakeClock(
            cycleStartMicroseconds: cycleStart, jackNowMicroseconds: jackNow,
            wallNowNanoseconds: before + (after - before) / 2, sampleRate: sampleRate,
            captureLatencyFrames: captureLatency.load(ordering: .relaxed))
        return clock
    }

    /// Frames the server skipped for every client before `takeFrame` (server gaps in the log).
    private func serverGapFrames(before takeFrame: UInt64) -> UInt64 {
        events.events(in: 0 ..< takeFrame).filter { $0.kind == .serverGap }.reduce(0) { $0 + $1.frameCount }
    }

    /// Before a file's first frame is written: its `bext` chunk (WAV, RF64) with the time of its
    /// first sample, take frame `firstTakeFrame`. A `bext` libsndfile refuses is noted in the
    /// sidecar, never the end of the take. Writer thread.
    func fileStarting(
        path: String, format: AudioFileFormat, writer: SoundFileWriter, firstTakeFrame: UInt64
    ) -> TakeFileMetadata {
        let clock = resolveClock()
        let gaps = serverGapFrames(before: firstTakeFrame)
        let time = clock?.localTime(ofTakeFrame: firstTakeFrame, serverGapFrames: gaps)
        var file = TakeFileMetadata(
            path: path, format: format, firstTakeFrame: firstTakeFrame, origination: time,
            timeReference: time.map { TakeClock.timeReference(of: $0, sampleRate: sampleRate) },
            codingHistory: codingHistory(format: format, channelCount: writer.channelCount))
        guard format.container.carriesBroadcastInfo, writer.format.container == format.container else { return file }
        let info = BroadcastInfo(
            description: options.description, originator: options.software,
            originationDate: time?.date ?? "", originationTime: time?.time ?? "",
            timeReference: file.timeReference ?? 0, codingHistory: file.codingHistory)
        do {
            try writer.setBroadcastInfo(info)
            file.hasBroadcastInfo = true
        } catch {
            file.broadcastInfoError = error.message
        }
        return file
    }

    /// The coding history line: `A=PCM,F=rate,W=bits,M=mode,T=micmon … float; in_1 from src …`
    /// (T holds no commas, as the format asks).
    func codingHistory(format: AudioFileFormat, channelCount: Int) -> String {
        let mode = channelCount == 1 ? "mono" : channelCount == 2 ? "stereo" : "\(channelCount)-channel"
        let algorithm: String
        switch format.container {
        case .ogg: algorithm = "VORBIS"
        case .opus: algorithm = "OPUS"
        case .mp3: algorithm = "MPEG1L3"
        default: algorithm = "PCM"
        }
        var fields = "A=\(algorithm),F=\(sampleRate),"
        if !format.container.isLossy { fields += "W=\(format.encoding.bitDepth)," }
        var free = options.software
        if !format.container.isLossy && format.encoding == .float { free += " float" }
        let sources = zip(channelNames, sourcePorts).map { name, source in
            source.isEmpty ? "\(name) unconnected" : "\(name) from \(source)"
        }
        if !sources.isEmpty { free += "; " + sources.joined(separator: "; ") }
        return fields + "M=\(mode),T=" + String(free.map { $0 == "," ? ";" : $0 }) + "\r\n"
    }

    /// Clip runs in frames about to be written at `takeFrame` (interleaved, the recorded
    /// channels): the first clipped sample of each run goes into the event log. Writer thread.
    func scanForClips(_ samples: UnsafeBufferPointer<Float>, atTakeFrame takeFrame: UInt64) {
        clipRuns.scan(samples, atTakeFrame: takeFrame) { channel, frame in
            events.append(TakeEvent(.clip, at: frame, channel: channel))
        }
    }

    /// The cue points of a file: every event it holds, at its file frame (up to
    /// `CueChunks.pointLimit`; cue positions are 32-bit). Empty for containers without cues.
    /// Writer thread, just before the file is closed.
    func cuePoints(for file: TakeFileMetadata, timeline: FileTimeline) -> [CuePoint] {
        guard file.format.container.carriesCuePoints else { return [] }
        var points: [CuePoint] = []
        for (event, frame) in placedEvents(for: file, timeline: timeline) where frame <= UInt64(UInt32.max) {
            points.append(CuePoint(id: UInt32(points.count + 1), frame: UInt32(frame), label: Sidecar.label(of: event)))
            if points.count == CueChunks.pointLimit { break }
        }
        return points
    }

    /// The events in the file's span of the take, each with the file frame it falls on (events
    /// the file does not hold yet are left out).
    func placedEvents(for file: TakeFileMetadata, timeline: FileTimeline) -> [(TakeEvent, UInt64)] {
        let end = (timeline.takeRange?.upperBound ?? file.firstTakeFrame) + 1
        return events.events(in: file.firstTakeFrame ..< end).compactMap { event in
            timeline.fileFrame(ofTakeFrame: event.takeFrame).map { (event, $0) }
        }
    }

    /// Rewrites the file's sidecar when events came (or were placed) since the last time, or
    /// `final`ly at its close; atomically (a new file renamed over the old). A failure is kept
    /// for the next time and never stops the take. Writer thread.
    func writeSidecar(for file: inout TakeFileMetadata, timeline: FileTimeline, final: Bool = false) {
        let count = events.count
        if !final && count == file.eventsSeen && file.eventsPlaced == file.eventsInRange { return }
        let placed = placedEvents(for: file, timeline: timeline)
        let end = (timeline.takeRange?.upperBound ?? file.firstTakeFrame) + 1
        file.eventsInRange = events.events(in: file.firstTakeFrame ..< end).count
        file.eventsPlaced = placed.count
        file.eventsSeen = count
        let text = Sidecar.document(
            file: file, metadata: self, markers: placed, frames: timeline.frameCount, complete: final)
        do {
            try FileSystem.writeWhole(text, to: Self.sidecarPath(for: file.path))
            file.sidecarError = nil
        } catch {
            file.sidecarError = error.description
        }
    }
}

/// Runs of clipped samples (|x| ≥ 1, full scale) per channel: a run begins at a clipped sample
/// with none on its channel in the `gapFrames` before it. Writer thread.
struct ClipRuns {
    /// Per channel: the take frame just past the last clipped sample, or nil before any.
    private var lastClipEnd: [UInt64?]
    let gapFrames: UInt64

    init(channelCount: Int, gapFrames: UInt64) {
        lastClipEnd = Array(repeating: nil, count: channelCount)
        self.gapFrames = gapFrames
    }

    /// Calls `found(channel, takeFrame)` (channel from 1) at the first sample of each new run,
    /// in sample order. Sixteen samples at a time are checked for any |x| ≥ 1 at once (NaN is
    /// not a clip: it compares false, as in the per-sample test); only a block that holds one is
    /// gone through sample by sample, so the cost of clean audio does not depend on the channel
    /// count's shape.
    mutating func scan(
        _ samples: UnsafeBufferPointer<Float>, atTakeFrame takeFrame: UInt64, found: (Int, UInt64) -> Void
    ) {
        let channels = lastClipEnd.count
        guard channels > 0, let base = samples.baseAddress else { return }
        let count = samples.count / channels * channels
        let raw = UnsafeRawPointer(base)
        let magnitudeBits = SIMD16<UInt32>(repeating: 0x7FFF_FFFF)
        let one = SIMD16<Float>(repeating: 1)
        var index = 0
        while index < count {
            let end = min(index + 16, count)
            if end - index == 16 {
                // SAFETY: index + 16 ≤ count floats of the buffer; an unaligned load.
                let bits = raw.loadUnaligned(fromByteOffset: index * 4, as: SIMD16<UInt32>.self)
                let magnitudes = unsafeBitCast(bits & magnitudeBits, to: SIMD16<Float>.self)
                if !any(magnitudes .>= one) {
                    index = end
                    continue
                }
            }
            while index < end {
                let sample = base[index]
                if sample >= 1 || sample <= -1 { note(channel: index % channels, frame: index / channels) }
                index += 1
            }
        }

        func note(channel: Int, frame: Int) {
            let place = takeFrame + UInt64(frame)
            if let end = lastClipEnd[channel], place < end + gapFrames {
                lastClipEnd[channel] = place + 1
                return
            }
            lastClipEnd[channel] = place + 1
            found(channel + 1, place)
        }
    }
}
