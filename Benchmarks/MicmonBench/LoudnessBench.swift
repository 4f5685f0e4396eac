import DSP
import Engine
import Platform

/// What loudness and the standard meters cost (issue 20):
/// - the process thread: the capture kernel as `record` ran it before (capture ring, meters)
///   against the same with the analysis ring it now pushes every period, period by period through
///   the offline driver; the figure is the median repeat's ns per period. The standard meters
///   (`--meter`) run on the analysis thread, so they add nothing here;
/// - the analysis thread: `TakeAnalyzer` (libebur128 with true peak, statistics, correlation) on
///   two channels, alone and with `--meter vu` (the costliest recurrence), as CPU seconds per
///   second of audio.
enum LoudnessBench {
    struct Result: Codable {
        var periodFrames: Int
        /// ns per period, median of the repeats: record without and with the analysis ring.
        var recordNanoseconds: [Double]
        var withAnalysisNanoseconds: [Double]
        /// CPU seconds the analysis spends per second of two-channel audio, without and with vu.
        var analysisCPUPerAudioSecond: Double
        var analysisWithVUCPUPerAudioSecond: Double
    }

    static func interleavedVoice() -> [Float] {
        let voice = BenchVoice()
        var interleaved = [Float](repeating: 0, count: 2 * BenchVoice.frames)
        for frame in 0 ..< BenchVoice.frames {
            interleaved[2 * frame] = voice.primary[frame]
            interleaved[2 * frame + 1] = voice.reference[frame]
        }
        return interleaved
    }

    /// ns per period of each repeat; the two variants alternate, so a drift of the machine's load
    /// weighs on both alike.
    static func kernelRuns(periodFrames: Int, seconds: Int, repeats: Int) -> (without: [Double], with: [Double]) {
        let interleaved = interleavedVoice()
        var without: [Double] = []
        var with: [Double] = []
        for repeatIndex in 0 ..< 2 * repeats {
            let analyses = repeatIndex % 2 == 1
            var options = OfflineCapture.Options()
            options.blockFrames = periodFrames
            options.keepsTake = false
            options.ringFrames = 8 * periodFrames
            options.analysisRingFrames = analyses ? 8 * periodFrames : nil
            guard let capture = try? OfflineCapture(options) else { return ([], []) }
            let start = MonotonicClock.nanoseconds()
            for _ in 0 ..< seconds { capture.process(interleaved: interleaved) }
            let elapsed = Double(MonotonicClock.nanoseconds() - start)
            let perPeriod = elapsed / Double(seconds * BenchVoice.frames / periodFrames)
            if analyses { with.append(perPeriod) } else { without.append(perPeriod) }
        }
        return (without, with)
    }

    static func analysisRun(seconds: Int, meter: MeterType) -> Double {
        let interleaved = interleavedVoice()
        guard let analyzer = try? TakeAnalyzer(channelNames: ["in_1", "in_2"], sampleRate: BenchVoice.sampleRate)
        else { return .nan }
        let coefficients = BallisticCoefficients(type: meter, sampleRate: Double(BenchVoice.sampleRate))
        var meters = [BallisticMeter(), BallisticMeter()]
        let start = MonotonicClock.threadCPUNanoseconds()
        interleaved.withUnsafeBufferPointer { buffer in
            for _ in 0 ..< seconds {
                // The live thread takes what 50 ms brought: 2400 frames at a time.
                var frame = 0
                while frame < BenchVoice.frames {
                    let base = buffer.baseAddress! + 2 * frame
                    if meter != .peak {
                        for channel in 0 ..< 2 {
                            meters[channel].process(base + channel, count: 2400, stride: 2, coefficients: coefficients)
                        }
                    }
                    try? analyzer.add(base, frameCount: 2400)
                    frame += 2400
                }
            }
        }
        let cpu = Double(MonotonicClock.threadCPUNanoseconds() - start) / 1e9
        withExtendedLifetime(meters) {}
        return cpu / Double(seconds)
    }

    static func run(periodFrames: Int, seconds: Int, repeats: Int) -> Result {
        let kernel = kernelRuns(periodFrames: periodFrames, seconds: seconds, repeats: repeats)
        return Result(
            periodFrames: periodFrames, recordNanoseconds: kernel.without, withAnalysisNanoseconds: kernel.with,
            analysisCPUPerAudioSecond: analysisRun(seconds: seconds, meter: .peak),
            analysisWithVUCPUPerAudioSecond: analysisRun(seconds: seconds, meter: .vu))
    }
}
