import CEbur128
import Platform
import SoundFile

// The floor of `micmon report` (issue 20): the least any libebur128-based report of a file can
// cost. It reads the file as `micmon report` does (libsndfile, floats, 8192 frames at a time),
// deinterleaves each channel into its own mono libebur128 state in histogram mode with only
// integrated loudness and LRA (no true peak, no sample peak, no momentary or short-term reads,
// no statistics), and reads the two numbers at the end. The calling thread (the main thread).

/// libebur128 alone on a file: integrated loudness and LRA per channel, as `micmon report`'s
/// default per-channel mode measures them.
enum ReportFloorBench {
    struct Result: Codable {
        var path: String
        var seconds: Double
        var channels: Int
        /// CPU seconds of each repeat (this thread, user + system).
        var cpuSeconds: [Double]
        /// Each channel's integrated loudness (LUFS) and LRA (LU), to compare with the report's.
        var integratedLUFS: [Double]
        var loudnessRangeLU: [Double]
        var failure: String?
    }

    static let blockFrames = 8192

    /// One pass over `path`; nil when the file or libebur128 refused.
    static func measure(path: String) -> (integrated: [Double], range: [Double], seconds: Double, channels: Int)? {
        guard let reader = try? SoundFileReader(path: path) else { return nil }
        defer { reader.close() }
        let channels = reader.channelCount
        let mode = EBUR128_MODE_I.rawValue | EBUR128_MODE_LRA.rawValue | EBUR128_MODE_HISTOGRAM.rawValue
        var states: [UnsafeMutablePointer<ebur128_state>?] = (0 ..< channels).map { _ in
            ebur128_init(1, UInt(reader.sampleRate), Int32(bitPattern: mode))
        }
        defer { for index in states.indices { ebur128_destroy(&states[index]) } }
        guard states.allSatisfy({ $0 != nil }) else { return nil }
        var interleaved = [Float](repeating: 0, count: blockFrames * channels)
        var mono = [Float](repeating: 0, count: blockFrames)
        var frames = 0
        while true {
            let count = interleaved.withUnsafeMutableBufferPointer { reader.read(into: $0) }
            if count <= 0 { break }
            interleaved.withUnsafeBufferPointer { source in
                mono.withUnsafeMutableBufferPointer { channel in
                    for index in 0 ..< channels {
                        for frame in 0 ..< count { channel[frame] = source[frame * channels + index] }
                        _ = ebur128_add_frames_float(states[index], channel.baseAddress!, count)
                    }
                }
            }
            frames += count
        }
        var integrated: [Double] = []
        var range: [Double] = []
        for state in states {
            var value = -Double.infinity
            integrated.append(ebur128_loudness_global(state, &value) == 0 ? value : -.infinity)
            value = 0
            range.append(ebur128_loudness_range(state, &value) == 0 ? value : .nan)
        }
        return (integrated, range, Double(frames) / Double(reader.sampleRate), channels)
    }

    static func run(path: String, repeats: Int) -> Result {
        var result = Result(
            path: path, seconds: 0, channels: 0, cpuSeconds: [], integratedLUFS: [], loudnessRangeLU: [])
        for _ in 0 ..< repeats {
            let start = MonotonicClock.threadCPUNanoseconds()
            guard let pass = measure(path: path) else {
                result.failure = "report-floor: \(path) could not be read or measured"
                return result
            }
            result.cpuSeconds.append(Double(MonotonicClock.threadCPUNanoseconds() - start) / 1e9)
            result.seconds = pass.seconds
            result.channels = pass.channels
            result.integratedLUFS = pass.integrated
            result.loudnessRangeLU = pass.range
        }
        return result
    }
}
