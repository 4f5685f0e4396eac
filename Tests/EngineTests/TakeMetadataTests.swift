import Foundation
import Platform
import Realtime
import SoundFile
import Testing

@testable import Engine

/// The writer's markers, end to end without a server: the test thread plays the realtime side
/// (ring, drop log, counters), the writer thread starts stalled, and every event (a drop, a
/// server gap, a clip run, two marks posted through `TakeControl`) must land at its frame in the
/// cue chunk and in the sidecar.
@Suite("Take metadata: cues and sidecar")
struct TakeMetadataTests {
    static let rate = 48000

    /// A scratch folder of its own.
    static func folder(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "micmon-metadata-\(name)-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The sidecar's markers as (kind, start_frame, length, channel, label).
    static func sidecarMarkers(_ path: String) throws -> [(String, Int, Int, Int?, String?)] {
        let data = try #require(FileManager.default.contents(atPath: path + ".json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let markers = try #require(object["markers"] as? [[String: Any]])
        return markers.map {
            (
                $0["kind"] as? String ?? "", $0["start_frame"] as? Int ?? -1, $0["length"] as? Int ?? 0,
                $0["channel"] as? Int, $0["label"] as? String
            )
        }
    }

    @Test(
        "a stalled writer places a drop, a server gap, a clip run and two marks at their frames in the cues and the sidecar"
    )
    func markersLandAtTheirFrames() throws {
        let path = Self.folder("markers") + "/take.wav"
        let file = try SoundFileWriter(
            path: path, format: AudioFileFormat(container: .wav, encoding: .float), sampleRate: Self.rate,
            channelCount: 2)
        let samples = SPSCRing<Float>(capacity: Self.rate * 2 * 4)
        let drops = SPSCRing<DropEvent>(capacity: 16)
        let counters = UnsafeMutablePointer<CaptureCounters>.allocate(capacity: 1)
        counters.initialize(to: CaptureCounters())
        defer {
            counters.deinitialize(count: 1)
            counters.deallocate()
        }
        let events = TakeEventLog()
        let control = TakeControl()
        let metadata = TakeMetadata(
            options: TakeMetadataOptions(description: "markers", software: "micmon test"), sampleRate: Self.rate,
            channelNames: ["in_1", "in_2"], sourcePorts: ["src:out_1", "src:out_2"], events: events,
            counters: counters)
        let writer = TakeWriter(
            file: file, samples: samples.consumer, drops: drops.consumer, counters: counters, channelCount: 2,
            wakeInterval: .milliseconds(20), stallSeconds: 0.3, metadata: metadata, control: control)
        writer.start()

        // The realtime side: periods of 0.25, one clip run on in_2 (frames 30000 and 30001), a
        // dropped stretch at 48000 (4800 frames, logged, never queued), then on to 96000.
        let producer = samples.producer
        var taken: UInt64 = 0
        func take(_ frames: Int) {
            var left = frames
            while left > 0 {
                let count = min(left, 256)
                let slices = try! #require(producer.writableSlices(count: count * 2))
                for index in 0 ..< count * 2 {
                    let frame = taken + UInt64(index / 2)
                    let clipped = index % 2 == 1 && (frame == 30000 || frame == 30001)
                    let value: Float = clipped ? 1.0 : 0.25
                    if index < slices.first.count {
                        slices.first[index] = value
                    } else {
                        slices.second[index - slices.first.count] = value
                    }
                }
                producer.commitWrite(count: count * 2)
                taken += UInt64(count)
                left -= count
                counters.pointee.framesTaken.store(taken, ordering: .releasing)
            }
        }
        take(20000)
        control.post(TakeRequest(.mark, at: 20000, label: "first"))
        take(28000)
        let dropSlot = try #require(drops.producer.writableSlices(count: 1))
        dropSlot.first[0] = DropEvent(startFrame: 48000, frameCount: 4800)
        drops.producer.commitWrite(count: 1)
        taken += 4800
        counters.pointee.framesTaken.store(taken, ordering: .releasing)
        // The writer is still stalled: the ring holds 48000 frames; make room as it drains.
        while taken < 96000 {
            let before = taken
            if producer.availableToWrite() >= 512 * 2 { take(min(256, Int(96000 - taken))) }
            if taken == before { sleep(seconds: 0.005) }
            if before < 60000 && taken >= 60000 {
                events.append(TakeEvent(.serverGap, at: 60000, frameCount: 512))
            }
            if before < 70000 && taken >= 70000 { control.post(TakeRequest(.mark, at: 70000, label: "second")) }
        }
        let result = writer.finish()
        #expect(result.failure == nil)
        #expect(result.framesWritten == 96000)

        let reader = try SoundFileReader(path: path)
        #expect(reader.frameCount == 96000)
        #expect(reader.cuePoints.map(\.frame) == [20000, 30000, 48000, 60000, 70000])
        let markers = try Self.sidecarMarkers(path)
        #expect(markers.map(\.0) == ["mark", "clip", "drop", "server_gap", "mark"])
        #expect(markers.map(\.1) == [20000, 30000, 48000, 60000, 70000])
        #expect(markers[1].3 == 2)
        #expect(markers[2].2 == 4800)
        #expect(markers[3].2 == 512)
        #expect(markers.compactMap(\.4) == ["first", "second"])
        // The cue chunk's labels, read from the file's bytes (libsndfile does not read `labl`).
        let bytes = try #require(FileManager.default.contents(atPath: path))
        let text = String(decoding: bytes.suffix(600), as: UTF8.self)
        for label in ["mark: first", "clip ch2", "drop 4800 frames", "server gap 512 frames", "mark: second"] {
            #expect(text.contains(label), "no label \(label)")
        }
    }

    @Test("a clip run is the first clipped sample, per channel, until half a second without one")
    func clipRuns() {
        var runs = ClipRuns(channelCount: 2, gapFrames: 100)
        var found: [(Int, UInt64)] = []
        var block = [Float](repeating: 0, count: 1000 * 2)
        for frame in [10, 11, 50, 200, 260, 900] { block[frame * 2] = -1 }
        block[11 * 2 + 1] = 1.5
        block.withUnsafeBufferPointer { runs.scan($0, atTakeFrame: 5000) { found.append(($0, $1)) } }
        #expect(found.map(\.0) == [1, 2, 1, 1])
        #expect(found.map(\.1) == [5010, 5011, 5200, 5900])
        // The next block goes on from where the last left off: a clip 50 frames on is the same run.
        var next = [Float](repeating: 0, count: 10 * 2)
        next[0] = 1
        found = []
        next.withUnsafeBufferPointer { runs.scan($0, atTakeFrame: 5950) { found.append(($0, $1)) } }
        #expect(found.isEmpty)
    }

    @Test(
        "the clip scan finds what a sample-by-sample scan finds, in the same order, at any channel count and block",
        arguments: [1, 2, 3, 17, 64])
    func clipScanMatchesPerSampleScan(channels: Int) {
        var generator = SplitMix64(state: UInt64(channels))
        let frames = 700
        var samples = (0 ..< frames * channels).map { _ in Float.random(in: -0.9 ... 0.9, using: &generator) }
        // Clips (±1 exactly, beyond), NaN (not a clip), ±∞ (a clip) at random places, some in runs.
        let specials: [Float] = [1, -1, 1.5, -3, .nan, .infinity, -.infinity, 0.99999994, -0.99999994]
        for _ in 0 ..< 60 {
            let at = Int.random(in: 0 ..< samples.count, using: &generator)
            samples[at] = specials.randomElement(using: &generator)!
        }
        /// The scan as it was: every sample, frame by frame, channel by channel.
        func reference(_ blocks: [Range<Int>]) -> [(Int, UInt64)] {
            var lastEnd = [UInt64?](repeating: nil, count: channels)
            var found: [(Int, UInt64)] = []
            for block in blocks {
                for frame in block {
                    for channel in 0 ..< channels {
                        let sample = samples[frame * channels + channel]
                        guard sample >= 1 || sample <= -1 else { continue }
                        let place = 9000 + UInt64(frame)
                        if let end = lastEnd[channel], place < end + 20 {
                            lastEnd[channel] = place + 1
                            continue
                        }
                        lastEnd[channel] = place + 1
                        found.append((channel + 1, place))
                    }
                }
            }
            return found
        }
        // The same take in blocks of odd lengths, as the writer's wakes would hand them over.
        let blocks = [0 ..< 1, 1 ..< 5, 5 ..< 133, 133 ..< 134, 134 ..< 600, 600 ..< frames]
        var runs = ClipRuns(channelCount: channels, gapFrames: 20)
        var found: [(Int, UInt64)] = []
        samples.withUnsafeBufferPointer { all in
            for block in blocks {
                let part = UnsafeBufferPointer(
                    rebasing: all[block.lowerBound * channels ..< block.upperBound * channels])
                runs.scan(part, atTakeFrame: 9000 + UInt64(block.lowerBound)) { found.append(($0, $1)) }
            }
        }
        let expected = reference(blocks)
        #expect(!expected.isEmpty)
        #expect(found.map(\.0) == expected.map(\.0))
        #expect(found.map(\.1) == expected.map(\.1))
    }

    @Test("TimeReference counts samples since local midnight, rounded; server gaps move later frames on")
    func timeReference() {
        let time = LocalTime(
            year: 2026, month: 12, day: 1, hour: 15, minute: 4, second: 5, nanosecond: 500_000_000,
            utcOffsetSeconds: 3600)
        #expect(TakeClock.timeReference(of: time, sampleRate: 48000) == UInt64(15 * 3600 + 4 * 60 + 5) * 48000 + 24000)
        let clock = TakeClock(sampleRate: 48000, firstSampleNanoseconds: 1_000_000_000_000)
        #expect(clock.nanoseconds(ofTakeFrame: 48000) == 1_001_000_000_000)
        #expect(clock.nanoseconds(ofTakeFrame: 24000, serverGapFrames: 24000) == 1_001_000_000_000)
        // The first sample is the cycle's start less the capture latency.
        let fromCycle = TakeClock(
            cycleStartMicroseconds: 5_000_000, jackNowMicroseconds: 5_500_000, wallNowNanoseconds: 2_000_000_000_000,
            sampleRate: 48000, captureLatencyFrames: 480)
        #expect(fromCycle.firstSampleNanoseconds == 2_000_000_000_000 - 500_000_000 - 10_000_000)
    }
}
