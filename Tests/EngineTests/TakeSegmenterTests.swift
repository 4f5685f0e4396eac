import Foundation
import Realtime
import SoundFile
import Testing

@testable import Engine

/// The writer's segmenter without a server: frames go into the capture ring as the realtime
/// side would queue them, files come out, cut by splits, split requests and the level trigger
/// (with pre-roll and hang), each checked frame for frame against the source.
@Suite("Writer: splits, trigger, pre-roll")
final class TakeSegmenterTests {
    static let rate = 8000
    let samples = SPSCRing<Float>(capacity: 8000 * 2 * 8)
    let drops = SPSCRing<DropEvent>(capacity: 8)
    let counters = UnsafeMutablePointer<CaptureCounters>.allocate(capacity: 1)
    let folder = NSTemporaryDirectory() + "micmon-segmenter-\(UUID().uuidString)"

    init() {
        counters.initialize(to: CaptureCounters())
    }

    deinit {
        counters.deinitialize(count: 1)
        counters.deallocate()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Channel 1 of source frame n: a quiet ramp (below -40 dBFS) with bursts of 0.5 where
    /// `bursts` says; channel 2 its negative.
    static func source(_ n: Int, bursts: [Range<Int>]) -> Float {
        if bursts.contains(where: { $0.contains(n) }) { return 0.5 }
        return Float(n % 1000) / 100_000
    }

    func makeWriter(
        _ rotation: TakeRotation, control: TakeControl? = nil, events: TakeEventLog = TakeEventLog(),
        pattern: String = "/take-%H%M%S.wav", replacesExisting: Bool = false, names: TakeFileNames = TakeFileNames(),
        serverGaps: SPSCRing<DropEvent>.Consumer? = nil
    ) throws -> TakeWriter {
        let opener = TakeFileOpener(
            pattern: FilePattern(folder + pattern), format: AudioFileFormat(container: .wav, encoding: .float),
            sampleRate: Self.rate, channelCount: 2, replacesExisting: replacesExisting, numbersTakenNames: true,
            names: names)
        let first = rotation.trigger == nil ? try opener.open(at: 0) : nil
        return TakeWriter(
            first: first, opener: opener, rotation: rotation, sampleRate: Self.rate, samples: samples.consumer,
            drops: drops.consumer, serverGaps: serverGaps, counters: counters, channelCount: 2, control: control,
            events: events, wakeInterval: .milliseconds(2))
    }

    /// Queues source frames `range` as the realtime side would (whole runs, then the count).
    func queue(_ range: Range<Int>, bursts: [Range<Int>] = []) {
        var frames: [Float] = []
        for n in range {
            let x = Self.source(n, bursts: bursts)
            frames += [x, -x]
        }
        var offset = 0
        while offset < frames.count {
            let run = min(4096, frames.count - offset)
            while samples.producer.availableToWrite() < run { usleep(1000) }
            let pushed = frames[offset ..< offset + run].withUnsafeBufferPointer { samples.producer.push($0) }
            #expect(pushed)
            offset += run
            counters.pointee.framesTaken.add(UInt64(run / 2), ordering: .releasing)
        }
    }

    /// Checks `file` holds exactly source frames `range`.
    func expectHolds(_ file: ClosedTakeFile, _ range: Range<Int>, bursts: [Range<Int>] = []) throws {
        #expect(file.takeRange == UInt64(range.lowerBound) ..< UInt64(range.upperBound), "\(file.path)")
        #expect(file.frameCount == UInt64(range.count))
        let read = try SoundFileReader(path: file.path).readAllFloats()
        #expect(read.count == range.count * 2, "\(file.path)")
        for (i, n) in range.enumerated() where i * 2 + 1 < read.count {
            let x = Self.source(n, bursts: bursts)
            if read[2 * i] != x || read[2 * i + 1] != -x {
                Issue.record("\(file.path) frame \(i) (source \(n)): \(read[2 * i]), expected \(x)")
                return
            }
        }
    }

    /// Each closed file counts the server gaps within its own take frames (what its
    /// `--on-file-closed` hook gets as MICMON_SERVER_GAPS and MICMON_SERVER_GAP_FRAMES), not the
    /// run's: the realtime side logs a gap before the frames after it.
    @Test("--split: each file counts the server gaps within its own take frames")
    func serverGapsPerFile() throws {
        var rotation = TakeRotation()
        rotation.splitSeconds = 1
        let gaps = SPSCRing<DropEvent>(capacity: 4)
        let writer = try makeWriter(rotation, serverGaps: gaps.consumer)
        writer.start()
        queue(0 ..< 5000)
        #expect(gaps.producer.pushOne(DropEvent(startFrame: 5000, frameCount: 512)))
        queue(5000 ..< 17000)
        #expect(gaps.producer.pushOne(DropEvent(startFrame: 17000, frameCount: 256)))
        #expect(gaps.producer.pushOne(DropEvent(startFrame: 18000, frameCount: 1024)))
        queue(17000 ..< 20000)
        let result = writer.finish()
        #expect(result.failure == nil)
        #expect(result.files.map(\.serverGaps) == [1, 0, 2])
        #expect(result.files.map(\.serverGapFrames) == [512, 0, 1280])
        #expect(result.serverGaps.count == 3)
    }

    @Test("--split: files of exactly the split's frames, concatenated the source, none lost or repeated")
    func splitsEveryDuration() throws {
        var rotation = TakeRotation()
        rotation.splitSeconds = 1
        let writer = try makeWriter(rotation)
        writer.start()
        queue(0 ..< 20000)
        let result = writer.finish()
        #expect(result.failure == nil)
        #expect(result.framesWritten == 20000)
        #expect(result.files.map(\.frameCount) == [8000, 8000, 4000])
        let names = Set(result.files.map(\.path))
        #expect(names.count == 3, "a name was used twice: \(result.files.map(\.path))")
        for (file, range) in zip(result.files, [0 ..< 8000, 8000 ..< 16000, 16000 ..< 20000]) {
            try expectHolds(file, range)
        }
    }

    @Test("a split request cuts the file at its frame")
    func splitRequest() throws {
        let control = TakeControl()
        let events = TakeEventLog()
        let writer = try makeWriter(TakeRotation(), control: control, events: events)
        control.post(TakeRequest(.split, at: 3000))
        writer.start()
        queue(0 ..< 10000)
        let result = writer.finish()
        #expect(result.files.count == 2)
        try expectHolds(result.files[0], 0 ..< 3000)
        try expectHolds(result.files[1], 3000 ..< 10000)
        #expect(events.events == [TakeEvent(.split, at: 3000)])
    }

    @Test("split requests at a file's start, or twice at one frame, make no empty file")
    func splitRequestsAtTheStart() throws {
        let control = TakeControl()
        let writer = try makeWriter(TakeRotation(), control: control)
        control.post(TakeRequest(.split, at: 0))
        control.post(TakeRequest(.split, at: 4000))
        control.post(TakeRequest(.split, at: 4000))
        writer.start()
        queue(0 ..< 6000)
        let result = writer.finish()
        #expect(result.files.map(\.frameCount) == [4000, 2000])
        try expectHolds(result.files[0], 0 ..< 4000)
        try expectHolds(result.files[1], 4000 ..< 6000)
    }

    @Test("trigger: one file per burst, from the pre-roll before the crossing to the hang time after it")
    func triggerWithPreRollAndHang() throws {
        var rotation = TakeRotation()
        rotation.preRollSeconds = 0.25  // 2000 frames
        // -12 dBFS on (0.251), -18 off (0.126): the ramp stays below both.
        rotation.trigger = LevelTrigger(onDecibels: -12, hangSeconds: 0.1)  // 800 frames
        let events = TakeEventLog()
        let writer = try makeWriter(rotation, events: events)
        writer.start()
        // The second burst comes 600 frames after the first take ended: its pre-roll reaches
        // back only to there (no frame is in two files).
        let bursts = [5000 ..< 5100, 20000 ..< 20050, 21400 ..< 21410]
        queue(0 ..< 30000, bursts: bursts)
        let result = writer.finish()
        #expect(result.failure == nil)
        #expect(result.files.count == 3)
        let expected = [3000 ..< 5900, 18000 ..< 20850, 20850 ..< 22210]
        for (file, range) in zip(result.files, expected) { try expectHolds(file, range, bursts: bursts) }
        #expect(
            events.events == [
                TakeEvent(.triggerStart, at: 5000), TakeEvent(.triggerStop, at: 5900),
                TakeEvent(.triggerStart, at: 20000), TakeEvent(.triggerStop, at: 20850),
                TakeEvent(.triggerStart, at: 21400), TakeEvent(.triggerStop, at: 22210),
            ])
        #expect(result.framesWritten == UInt64(expected.map(\.count).reduce(0, +)))
    }

    @Test("--force never replaces a file of the run: 20 triggered takes of one name, then a later take's")
    func forceKeepsTheRunsFiles() throws {
        var rotation = TakeRotation()
        rotation.trigger = LevelTrigger(onDecibels: -12, hangSeconds: 0.1)
        let names = TakeFileNames()
        let bursts = (0 ..< 20).map { 1000 + 2000 * $0 ..< 1100 + 2000 * $0 }
        let writer = try makeWriter(rotation, pattern: "/burst.wav", replacesExisting: true, names: names)
        writer.start()
        queue(0 ..< 41000, bursts: bursts)
        let result = writer.finish()
        #expect(result.files.map(\.path) == [folder + "/burst.wav"] + (2 ... 20).map { folder + "/burst-\($0).wav" })
        for (file, burst) in zip(result.files, bursts) {
            try expectHolds(file, burst.lowerBound ..< burst.upperBound + 800, bursts: bursts)
        }
        // The run's next take (the server came back): numbered on, nothing replaced.
        counters.pointee.framesTaken.store(0, ordering: .relaxed)
        let later = try makeWriter(rotation, pattern: "/burst.wav", replacesExisting: true, names: names)
        later.start()
        queue(0 ..< 2000, bursts: [1000 ..< 1100])
        #expect(later.finish().files.map(\.path) == [folder + "/burst-21.wav"])
        try expectHolds(result.files[0], 1000 ..< 1900, bursts: bursts)
    }

    @Test("trigger on one chosen channel")
    func triggerChannel() throws {
        var rotation = TakeRotation()
        // Watching the second channel (index 1) alone: it fires at the burst's first frame too.
        rotation.trigger = LevelTrigger(onDecibels: -12, hangSeconds: 0.1, channel: 1)
        let writer = try makeWriter(rotation)
        writer.start()
        queue(0 ..< 10000, bursts: [5000 ..< 5100])
        let result = writer.finish()
        #expect(result.files.count == 1)
        try expectHolds(result.files[0], 5000 ..< 5900, bursts: [5000 ..< 5100])
    }

    @Test("a take still in its hang time when the run ends is closed with what came")
    func triggerOpenAtEnd() throws {
        var rotation = TakeRotation()
        rotation.trigger = LevelTrigger(onDecibels: -12, hangSeconds: 1)
        let writer = try makeWriter(rotation)
        writer.start()
        queue(0 ..< 6000, bursts: [5000 ..< 5100])
        let result = writer.finish()
        #expect(result.files.count == 1)
        try expectHolds(result.files[0], 5000 ..< 6000, bursts: [5000 ..< 5100])
    }

    @Test("the pre-roll ring keeps exactly its last frames over many wraps")
    func preRollBufferWraps() {
        let buffer = PreRollBuffer(frames: 7, channelCount: 2)
        var next = 0
        for run in [3, 5, 1, 9, 2, 6] {
            let frames = (0 ..< run).flatMap { i in [Float(next + i), -Float(next + i)] }
            frames.withUnsafeBufferPointer { buffer.append($0) }
            next += run
        }
        var kept: [Float] = []
        buffer.takeAll { kept += $0 }
        #expect(kept == (next - 7 ..< next).flatMap { [Float($0), -Float($0)] })
        #expect(buffer.frameCount == 0)
    }
}

/// `--split-on-clock` boundaries and the times files are named by.
@Suite("Split clock")
struct SplitClockTests {
    @Test("a boundary on a whole second is named by that second, whatever the first frame's time")
    func boundaryNamesItsSecond() {
        // Zones are whole seconds from UTC: a whole local second is a whole UTC second.
        for step in 0 ..< 2000 {
            let first = 1_796_000_000 + Double(step) * 0.000_731
            let clock = SplitClock(firstFrameWallClock: first, sampleRate: 48000)
            var frame: UInt64 = 0
            for _ in 0 ..< 3 {
                frame = clock.nextBoundary(after: frame, every: 1)
                let second = clock.wallClock(ofTakeFrame: frame).rounded(.down)
                let expected = (first + Double(frame) / 48000).rounded()
                if second != expected {
                    Issue.record("first frame at \(first): boundary frame \(frame) is named \(second), not \(expected)")
                    return
                }
            }
        }
    }
}
