import DSP
import Platform

/// Cost of `DSP.NoiseSuppressor` (the `--denoise` path) per period, called as the capture
/// kernel calls it: once per period with the two inputs, on the demo voice (one second, looped).
/// The figures are the median repeat's mean period, and of each repeat its 99.9th-percentile and
/// its longest single period (the periods that run a frame's transforms). The longest includes
/// any preemption of the bench thread, which on a shared host is far longer than a frame; the
/// percentile leaves out the rarest such periods. The clean output feeds a checksum that is reported.
enum DenoiseBench {
    struct Result: Codable {
        var periodFrames: Int
        /// `NoiseSuppressorLatency.rawValue`.
        var latency: String
        /// Mean nanoseconds per period (both channels), one value per repeat.
        var nanosecondsPerPeriod: [Double]
        /// The 99.9th-percentile period of each repeat, in nanoseconds.
        var percentilePeriodNanoseconds: [Double]
        /// The longest single period of each repeat, in nanoseconds.
        var worstPeriodNanoseconds: [Double]
        var checksum: Double
    }

    static func run(
        periodFrames: Int, framesPerRepeat: Int, repeats: Int, latency: NoiseSuppressorLatency = .standard
    ) -> Result {
        let voice = BenchVoice()
        let primary = voice.primary
        let reference = voice.reference
        let clean = UnsafeMutablePointer<Float>.allocate(capacity: periodFrames)
        defer { clean.deallocate() }
        let periods = framesPerRepeat / periodFrames
        let periodsInSignal = BenchVoice.frames / periodFrames
        var result = Result(
            periodFrames: periodFrames, latency: latency.rawValue, nanosecondsPerPeriod: [],
            percentilePeriodNanoseconds: [], worstPeriodNanoseconds: [], checksum: 0)
        var durations = [UInt64](repeating: 0, count: periods)
        for _ in 0 ..< repeats {
            // SAFETY of the bench: 44.1/48 kHz are always accepted.
            let suppressor = try! NoiseSuppressor(sampleRate: BenchVoice.sampleRate, latency: latency)
            let kernel = suppressor.kernel
            var slot = 0
            let start = MonotonicClock.nanoseconds()
            for period in 0 ..< periods {
                let offset = slot * periodFrames
                let before = MonotonicClock.nanoseconds()
                kernel.process(
                    primary: primary + offset, reference: reference + offset, clean: clean, frameCount: periodFrames)
                durations[period] = MonotonicClock.nanoseconds() - before
                slot += 1
                if slot == periodsInSignal { slot = 0 }
            }
            let elapsed = MonotonicClock.nanoseconds() - start
            result.nanosecondsPerPeriod.append(Double(elapsed) / Double(periods))
            durations.sort()
            result.percentilePeriodNanoseconds.append(Double(durations[periods * 999 / 1000]))
            result.worstPeriodNanoseconds.append(Double(durations[periods - 1]))
            for i in 0 ..< periodFrames { result.checksum += Double(clean[i]) }
            withExtendedLifetime(suppressor) {}
        }
        withExtendedLifetime(voice) {}
        return result
    }
}
