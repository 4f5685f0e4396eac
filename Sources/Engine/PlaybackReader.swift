// The reader thread of a playback session: the file (converted, looped) into the playback
// ring. Made on the main thread; runs on its own thread until `stop()` (main thread).

import DSP
import Platform
import Realtime
import SoundFile
import Synchronization

/// The reader thread of `micmon play`: streams the file from disk (never all of it in memory),
/// makes it stereo (a mono file is doubled; past two channels, the first two are used),
/// converts the rate with libsamplerate when the file's rate or the playback rate asks for it,
/// loops, and keeps the ring full. It waits on a short timer when the ring is full.
final class PlaybackReader: @unchecked Sendable {
    private let file: SoundFileReader
    private let ring: SPSCRing<Float>.Producer
    private let counters: UnsafeMutablePointer<PlaybackCounters>
    /// Times to play the file: `loops + 1`, or nil to loop until stopped.
    private let plays: Int?
    private let resampler: Resampler?
    private let stopRequested = Atomic<Bool>(false)
    /// Set when reading or converting failed; the message is in `failure`.
    let hasFailed = Atomic<Bool>(false)
    private(set) var failure: String?
    private var thread: WorkerThread?

    static let chunkFrames = 4096

    init(
        file: SoundFileReader, ring: SPSCRing<Float>.Producer, counters: UnsafeMutablePointer<PlaybackCounters>,
        loops: Int, ratio: Double
    ) throws {
        self.file = file
        self.ring = ring
        self.counters = counters
        plays = loops < 0 ? nil : loops + 1
        resampler = ratio == 1 ? nil : try Resampler(channelCount: 2, ratio: ratio)
    }

    func start() {
        thread = WorkerThread { [self] in run() }
        if thread == nil { fail("could not start the reader thread") }
    }

    /// Asks the thread to end and waits for it. Main thread.
    func stop() {
        stopRequested.store(true, ordering: .releasing)
        thread?.join()
        thread = nil
    }

    private func run() {
        let channels = file.channelCount
        var raw = [Float](repeating: 0, count: Self.chunkFrames * channels)
        var stereo = [Float](repeating: 0, count: Self.chunkFrames * 2)
        var converted = [Float](repeating: 0, count: Self.chunkFrames * 2 * 5)
        var produced: UInt64 = 0
        var playsLeft = plays
        var pending = 0  // stereo frames in `stereo` not yet fed to the resampler
        var endOfInput = false
        while !stopRequested.load(ordering: .acquiring) {
            if pending == 0 && !endOfInput {
                var frames = raw.withUnsafeMutableBufferPointer { file.read(into: $0) }
                if frames == 0 {
                    if let left = playsLeft { playsLeft = left - 1 }
                    if playsLeft == 0 || file.frameCount == 0 {
                        endOfInput = true
                    } else if !file.rewind() {
                        fail("cannot seek back to the start of \(file.path) to loop")
                        return
                    } else {
                        frames = raw.withUnsafeMutableBufferPointer { file.read(into: $0) }
                    }
                }
                for frame in 0 ..< frames {
                    stereo[2 * frame] = raw[frame * channels]
                    stereo[2 * frame + 1] = raw[frame * channels + (channels > 1 ? 1 : 0)]
                }
                pending = frames
            }
            // Convert (or pass through) what is pending into `converted`.
            var out = 0
            if let resampler {
                do {
                    let result = try stereo.withUnsafeBufferPointer { input in
                        try converted.withUnsafeMutableBufferPointer { output in
                            try resampler.process(
                                input: UnsafeBufferPointer(rebasing: input[0 ..< pending * 2]),
                                output: output, endOfInput: endOfInput)
                        }
                    }
                    // Shift the unused input down.
                    let used = result.inputFramesUsed
                    if used < pending { for i in 0 ..< (pending - used) * 2 { stereo[i] = stereo[used * 2 + i] } }
                    pending -= used
                    out = result.outputFrames
                } catch {
                    fail("\(error)")
                    return
                }
                if endOfInput && out == 0 && pending == 0 { break }
            } else {
                if pending == 0 && endOfInput { break }
                for i in 0 ..< pending * 2 { converted[i] = stereo[i] }
                out = pending
                pending = 0
            }
            if out > 0 && !push(converted, frames: out) { return }
            produced += UInt64(out)
        }
        // Everything is queued: the callback finishes when it has played this many frames.
        counters.pointee.framesTotal.store(produced, ordering: .releasing)
    }

    /// Pushes `frames` stereo frames, waiting while the ring is full. False when asked to stop.
    private func push(_ samples: [Float], frames: Int) -> Bool {
        var offset = 0
        while offset < frames {
            if stopRequested.load(ordering: .acquiring) { return false }
            let room = ring.availableToWrite() / 2
            if room == 0 {
                sleep(seconds: 0.005)
                continue
            }
            let count = min(room, frames - offset)
            samples.withUnsafeBufferPointer { buffer in
                _ = ring.push(UnsafeBufferPointer(rebasing: buffer[offset * 2 ..< (offset + count) * 2]))
            }
            offset += count
        }
        return true
    }

    private func fail(_ message: String) {
        failure = message
        hasFailed.store(true, ordering: .releasing)
    }
}
