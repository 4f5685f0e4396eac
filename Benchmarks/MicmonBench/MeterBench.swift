import DSP
import Platform

/// Cost of metering two channels per period as the capture kernel does it: one
/// `DSP.ChannelMeter.processStereo` call per period, on a voice-like signal (`DemoVoiceSource`,
/// one second, played in a loop). Each repeat meters `framesPerRepeat` frames in periods of the given size;
/// the figure is the median repeat. The meter states feed a checksum that is reported, so the
/// calls cannot be optimised away (they are cross-module and not inlinable in any case).
enum MeterBench {
    struct Result: Codable {
        var periodFrames: Int
        /// Nanoseconds per period (both channels), one value per repeat.
        var nanosecondsPerPeriod: [Double]
        var checksum: Double
    }

    static func run(periodFrames: Int, framesPerRepeat: Int, repeats: Int) -> Result {
        let coefficients = MeterCoefficients(sampleRate: Double(BenchVoice.sampleRate))
        let voice = BenchVoice()
        let primary = voice.primary
        let reference = voice.reference
        let meters = UnsafeMutablePointer<ChannelMeter>.allocate(capacity: 2)
        defer { meters.deallocate() }

        let periods = framesPerRepeat / periodFrames
        let periodsInSignal = BenchVoice.frames / periodFrames
        var result = Result(periodFrames: periodFrames, nanosecondsPerPeriod: [], checksum: 0)
        for _ in 0 ..< repeats {
            meters.initialize(repeating: ChannelMeter(), count: 2)
            var slot = 0
            let start = MonotonicClock.nanoseconds()
            for _ in 0 ..< periods {
                let offset = slot * periodFrames
                ChannelMeter.processStereo(
                    meters, left: primary + offset, right: reference + offset,
                    count: periodFrames, coefficients: coefficients)
                slot += 1
                if slot == periodsInSignal { slot = 0 }
            }
            let elapsed = MonotonicClock.nanoseconds() - start
            result.nanosecondsPerPeriod.append(Double(elapsed) / Double(periods))
            for channel in 0 ..< 2 {
                let m = meters[channel]
                result.checksum +=
                    m.peak + m.hold + m.meanSquare + m.maxPeak + m.sumOfSquares
                    + Double(m.clipCount) + Double(m.frameCount) + Double(m.holdFramesLeft)
            }
        }
        withExtendedLifetime(voice) {}
        return result
    }
}

/// One second of the demo voice at 48 kHz, primary and reference, that the kernel benches play
/// period by period in a loop (48000 is a multiple of every power-of-two period up to 64).
final class BenchVoice {
    static let sampleRate = 48000
    static let frames = sampleRate
    let primary = UnsafeMutablePointer<Float>.allocate(capacity: BenchVoice.frames)
    let reference = UnsafeMutablePointer<Float>.allocate(capacity: BenchVoice.frames)

    init() {
        var voice = DemoVoiceSource(sampleRate: Double(Self.sampleRate), seed: 1)
        voice.render(primary: primary, reference: reference, count: Self.frames)
    }

    deinit {
        primary.deallocate()
        reference.deallocate()
    }
}
