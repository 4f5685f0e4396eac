// Judges a take recorded on PipeWire against a witness that recorded the same port beside it
// (jack_capture): both hold the counter source (`TestSignal`), decoded frame by frame. On a
// loaded 2-core machine at quantum 256 the graph itself is sometimes damaged (the source woke
// late: a period lost, a period of silence); a take may differ from the counter only where the
// witness shows the same frames, or where micmon reported damage. Test threads.

import DSP
import SoundFile

enum PipeWireTakeJudge {
    /// A recording as comparable keys per frame and channel: a float's bit pattern, or the
    /// integer libsndfile reads back from PCM.
    struct Recording {
        let frameCount: Int
        let keys: [Int64]
        /// Maps a float of the signal (or of a float witness) to this recording's key.
        let key: (Float) -> Int64
        /// The low 16 bits of the source frame a ramp key stands for.
        let lowBits: (Int64) -> UInt64
        let sampleRate: Int

        func sample(_ frame: Int, _ channel: Int) -> Int64 { keys[2 * frame + channel] }

        /// Whether frame `i` holds source frame `n`.
        func holds(_ i: Int, source n: UInt64) -> Bool {
            sample(i, 0) == key(TestSignal.value(channel: 0, frame: n))
                && sample(i, 1) == key(TestSignal.value(channel: 1, frame: n))
        }

        /// The source frame frame `i` holds, if any (within the first `highLimit` × 65536 frames).
        func sourceFrame(_ i: Int, highLimit: UInt64 = 64) -> UInt64? {
            let low = lowBits(sample(i, 0))
            for high in UInt64(0) ..< highLimit where holds(i, source: low + high << 16) { return low + high << 16 }
            return nil
        }

        /// Reads a take (any encoding) or a float witness.
        init(path: String) throws {
            let reader = try SoundFileReader(path: path)
            guard reader.channelCount == TestSignal.channelCount else {
                throw TakeCheck.WrongChannelCount(channelCount: reader.channelCount)
            }
            sampleRate = reader.sampleRate
            let encoding = reader.encoding ?? .float
            let container = reader.container ?? .wav
            if encoding == .float {
                keys = reader.readAllFloats().map { Int64($0.bitPattern) }
                key = { Int64($0.bitPattern) }
                lowBits = { TestSignal.frameLowBits(rampSample: Float(bitPattern: UInt32(truncatingIfNeeded: $0))) }
            } else {
                keys = reader.readAllInts().map { Int64($0) }
                key = { Int64(TakeCheck.expectedInt($0, encoding: encoding, container: container)) }
                lowBits = { UInt64(max(0, min(65535, Int($0 >> 16) + 32768))) }
            }
            frameCount = keys.count / 2
        }
    }

    /// A stretch of frames that follow the counter: `count` frames from take frame `start`,
    /// holding source frames `source ..< source + count`.
    struct Run: Equatable {
        let start: Int
        let count: Int
        let source: UInt64
        var end: Int { start + count }
    }

    /// The runs of a recording (frames in none are damage: silence, or anything else).
    static func runs(_ recording: Recording) -> [Run] {
        var runs: [Run] = []
        var i = 0
        while i < recording.frameCount {
            guard let source = recording.sourceFrame(i) else {
                i += 1
                continue
            }
            var j = i + 1
            while j < recording.frameCount && recording.holds(j, source: source + UInt64(j - i)) { j += 1 }
            runs.append(Run(start: i, count: j - i, source: source))
            i = j
        }
        return runs
    }

    /// One place where the take leaves the counter: its take frames, and whether the witness
    /// holds the very same frames there.
    struct Damage: CustomStringConvertible {
        let takeFrames: Range<Int>
        let seenByWitness: Bool
        /// The witness holds the same frames there but for those in gaps micmon reported (silence
        /// it placed where it lost frames the witness got): the take is on the witness's timeline.
        var seenButReported = false
        /// The first frame's two samples (keys), to tell silence on one input from both.
        var firstFrame: (Int64, Int64) = (0, 0)
        var description: String {
            "take frames \(takeFrames.lowerBound)..<\(takeFrames.upperBound) starting (\(firstFrame.0), \(firstFrame.1))"
                + (seenByWitness
                    ? " (the witness holds the same)"
                    : seenButReported
                        ? " (the witness holds the same but where micmon reported a loss)" : " (NOT in the witness)")
        }
    }

    struct Verdict: CustomStringConvertible {
        let frameCount: Int
        let exactFrames: Int
        let firstSource: UInt64?
        let lastSource: UInt64?
        let damages: [Damage]
        /// The frames the take holds none of the counter, or never came near it.
        var unexplained: [Damage] { damages.filter { !$0.seenByWitness && !$0.seenButReported } }
        /// True when every frame is the counter, contiguous.
        var isExact: Bool { damages.isEmpty && exactFrames == frameCount && frameCount > 0 }
        var description: String {
            "\(frameCount) frames, \(exactFrames) on the counter (source \(firstSource.map(String.init) ?? "-") … "
                + "\(lastSource.map(String.init) ?? "-")), \(damages.count) damaged stretches"
                + (damages.isEmpty ? "" : ": " + damages.prefix(8).map(\.description).joined(separator: "; "))
        }
    }

    /// Compares `take` with `witness`. Each stretch between two runs of the take (and before the
    /// first, after the last) is checked against the witness after (before) the same source frame:
    /// the same frames there mean the graph delivered them so.
    /// `reported`: take frames micmon said it lost (its missed gaps); a stretch whose other
    /// frames the witness holds alike is `seenButReported`.
    static func judge(take: Recording, witness: WitnessRecording, reported: [Range<Int>] = []) -> Verdict {
        let takeRuns = runs(take).filter { $0.count >= 8 }
        let exact = takeRuns.reduce(0) { $0 + $1.count }
        guard let first = takeRuns.first, let last = takeRuns.last else {
            return Verdict(
                frameCount: take.frameCount, exactFrames: 0, firstSource: nil, lastSource: nil,
                damages: take.frameCount == 0 ? [] : [Damage(takeFrames: 0 ..< take.frameCount, seenByWitness: false)])
        }
        var damages: [Damage] = []
        func matches(takeFrames: Range<Int>, witnessStart: Int, excusing: [Range<Int>] = []) -> Bool {
            guard witnessStart >= 0, witnessStart + takeFrames.count <= witness.frameCount else { return false }
            for (offset, i) in takeFrames.enumerated() where !excusing.contains(where: { $0.contains(i) }) {
                for channel in 0 ..< 2
                where take.sample(i, channel) != take.key(witness.sample(witnessStart + offset, channel)) {
                    return false
                }
            }
            return true
        }
        if first.start > 0 {
            let frames = 0 ..< first.start
            let at = witness.index(ofSource: first.source).map { $0 - frames.count } ?? -1
            damages.append(Damage(takeFrames: frames, seenByWitness: matches(takeFrames: frames, witnessStart: at)))
        }
        for (previous, next) in zip(takeRuns, takeRuns.dropFirst()) {
            // The stretch from the frame after `previous` through the first frames of `next`: the
            // witness must hold the same after the same source frame.
            let frames = previous.end ..< min(next.start + 8, take.frameCount)
            let lastGood = previous.source + UInt64(previous.count - 1)
            let at = witness.index(ofSource: lastGood).map { $0 + 1 } ?? -1
            var damage = Damage(takeFrames: frames, seenByWitness: matches(takeFrames: frames, witnessStart: at))
            let excused = reported.filter { $0.overlaps(frames) }
            damage.seenButReported =
                !damage.seenByWitness && !excused.isEmpty
                && matches(takeFrames: frames, witnessStart: at, excusing: excused)
            damages.append(damage)
        }
        if last.end < take.frameCount {
            let frames = last.end ..< take.frameCount
            let at = witness.index(ofSource: last.source + UInt64(last.count - 1)).map { $0 + 1 } ?? -1
            damages.append(Damage(takeFrames: frames, seenByWitness: matches(takeFrames: frames, witnessStart: at)))
        }
        damages = damages.map { damage in
            var marked = damage
            if let frame = damage.takeFrames.first {
                marked.firstFrame = (take.sample(frame, 0), take.sample(frame, 1))
            }
            return marked
        }
        return Verdict(
            frameCount: take.frameCount, exactFrames: exact, firstSource: first.source,
            lastSource: last.source + UInt64(last.count - 1), damages: damages)
    }

    /// One place where a recording of a counter leaves it and comes back: at source frame
    /// `sourceFrame` (the first one it did not hold in line), `skipped` source frames never
    /// appeared (negative: repeated) and `inserted` frames of something else (silence) took their
    /// place.
    struct Discontinuity: Equatable, CustomStringConvertible {
        let sourceFrame: UInt64
        let skipped: Int
        let inserted: Int
        var description: String { "at source frame \(sourceFrame): \(skipped) skipped, \(inserted) inserted" }
    }

    /// The discontinuities between a recording's runs of the counter (runs of 8 frames or more).
    static func discontinuities(_ runs: [Run]) -> [Discontinuity] {
        let long = runs.filter { $0.count >= 8 }
        return zip(long, long.dropFirst()).map { previous, next in
            let end = previous.source + UInt64(previous.count)
            return Discontinuity(
                sourceFrame: end, skipped: Int(Int64(next.source) - Int64(end)), inserted: next.start - previous.end)
        }
    }

    /// The witness (a float recording) with its runs, to find a source frame in it.
    struct WitnessRecording {
        let samples: [Float]
        let runs: [Run]
        let sampleRate: Int
        var frameCount: Int { samples.count / 2 }

        init(path: String) throws {
            let recording = try Recording(path: path)
            samples = recording.keys.map { Float(bitPattern: UInt32(truncatingIfNeeded: $0)) }
            runs = PipeWireTakeJudge.runs(recording)
            sampleRate = recording.sampleRate
        }

        func sample(_ frame: Int, _ channel: Int) -> Float { samples[2 * frame + channel] }

        /// The witness frame holding source frame `n`, if it holds it.
        func index(ofSource n: UInt64) -> Int? {
            guard let run = runs.first(where: { $0.source <= n && n < $0.source + UInt64($0.count) }) else {
                return nil
            }
            return run.start + Int(n - run.source)
        }
    }
}
