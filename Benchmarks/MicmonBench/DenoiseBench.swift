import DSP
import Platform

/// Cost of `DSP.NoiseSuppressor` (the `--denoise` path) per period, called as the capture
/// kernel calls it: once per period with the two inputs, on the demo voice (one second, looped).
/// The figure is the median repeat; the clean output feeds a checksum that is reported.
enum DenoiseBench {
    /// Nanoseconds per period, one value per repeat, with a checksum of the clean output.
    typealias Result = MeterBench.Result

    static func run(periodFrames: Int, framesPerRepeat: Int, repeats: Int) -> Result {
        let voice = BenchVoice()
        let primary = voice.primary
        let reference = voice.reference
        let clean = UnsafeMutablePointer<Float>.allocate(capacity: periodFrames)
        defer { clean.deallocate() }
        let periods = framesPerRepeat / periodFrames
        let periodsInSignal = BenchVoice.frames / periodFrames
        var result = Result(periodFrames: periodFrames, nanosecondsPerPeriod: [], checksum: 0)
        for _ in 0 ..< repeats {
            // SAFETY of the bench: 44.1/48 kHz are always accepted.
            let suppressor = try! NoiseSuppressor(sampleRate: BenchVoice.sampleRate)
            let kernel = suppressor.kernel
            var slot = 0
            let start = MonotonicClock.nanoseconds()
            for _ in 0 ..< periods {
                let offset = slot * periodFrames
                kernel.process(
                    primary: primary + offset, reference: reference + offset, clean: clean, frameCount: periodFrames)
                slot += 1
                if slot == periodsInSignal { slot = 0 }
            }
            let elapsed = MonotonicClock.nanoseconds() - start
            result.nanosecondsPerPeriod.append(Double(elapsed) / Double(periods))
            for i in 0 ..< periodFrames { result.checksum += Double(clean[i]) }
            withExtendedLifetime(suppressor) {}
        }
        withExtendedLifetime(voice) {}
        return result
    }
}
