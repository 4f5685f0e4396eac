import Foundation
import Testing

@testable import DSP

private let rate = 48000.0
private let coefficients = MeterCoefficients(sampleRate: rate)

/// Meters `signal` in periods of `period` frames, continuing from `meter`.
private func metered(
    _ signal: [Float], period: Int = 256, from meter: ChannelMeter = ChannelMeter(),
    coefficients c: MeterCoefficients = coefficients
) -> ChannelMeter {
    var meter = meter
    signal.withUnsafeBufferPointer { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = min(period, buffer.count - offset)
            meter.process(buffer.baseAddress! + offset, count: n, coefficients: c)
            offset += n
        }
    }
    return meter
}

/// `count` samples of a sine of `amplitude` at `frequency` Hz, starting at phase 0.
private func sine(amplitude: Double, frequency: Double, count: Int) -> [Float] {
    (0 ..< count).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / rate)) }
}

/// 1 kHz at 48 kHz has its crests on samples 12, 60, …: 3 s ending on a crest.
private let crestEnding = 48 * 3000 + 13

@Suite struct KnownAnswers {
    @Test func fullScaleSine() {
        let r = metered(sine(amplitude: 1, frequency: 1000, count: crestEnding)).reading
        #expect(abs(r.peakDBFS) < 0.01)
        #expect(abs(r.holdDBFS) < 0.01)
        #expect(abs(r.maxPeakDBFS) < 0.01)
        #expect(abs(r.rmsDBFS - -3.0103) < 0.02)
        #expect(abs(r.meanRMSDBFS - -3.0103) < 0.01)
    }

    @Test func minus20DBFSSine() {
        let r = metered(sine(amplitude: 0.1, frequency: 1000, count: crestEnding)).reading
        #expect(abs(r.peakDBFS - -20) < 0.01)
        #expect(abs(r.maxPeakDBFS - -20) < 0.01)
        #expect(abs(r.rmsDBFS - -23.0103) < 0.02)
        #expect(r.clipCount == 0)
    }

    @Test func fullScaleSquare() {
        let square = (0 ..< (3 * 48000)).map { ($0 / 24) % 2 == 0 ? Float(1) : -1 }  // 1 kHz
        let r = metered(square).reading
        #expect(r.peakDBFS == 0)
        #expect(r.maxPeakDBFS == 0)
        #expect(abs(r.rmsDBFS) < 0.02)
        #expect(abs(r.meanRMSDBFS) < 1e-9)
        #expect(r.clipCount == UInt64(square.count))
    }

    @Test func dcAtHalf() {
        let r = metered([Float](repeating: 0.5, count: 3 * 48000)).reading
        #expect(abs(r.peakDBFS - -6.0206) < 0.001)
        #expect(abs(r.rmsDBFS - -6.0206) < 0.02)
        #expect(abs(r.meanRMSDBFS - -6.0206) < 0.001)
    }

    @Test func silenceReadsTheFloor() {
        let r = metered([Float](repeating: 0, count: 48000)).reading
        #expect(r.peakDBFS == -160)
        #expect(r.holdDBFS == -160)
        #expect(r.rmsDBFS == -160)
        #expect(r.maxPeakDBFS == -160)
        #expect(r.meanRMSDBFS == -160)
        #expect(MeterReading().meanRMSDBFS == Decibels.floor)  // no frames yet
    }

    @Test func clipCountCountsExactlyFullScaleAndAbove() {
        var signal = [Float](repeating: 0.999, count: 1000)
        for (i, v) in [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0].enumerated() { signal[10 + 50 * i] = Float(v) }
        for i in 0 ..< 3 { signal[700 + 10 * i] = i == 1 ? -1.2 : 1.2 }
        signal[900] = -0.99999994  // the largest Float below 1 does not clip
        let r = metered(signal, period: 64).reading
        #expect(r.clipCount == 10)
        #expect(r.maxPeak == Double(Float(1.2)))
        #expect(r.frameCount == 1000)
    }

    @Test func nonFiniteSamplesCountAsClipsAndDoNotPoison() {
        var signal = [Float](repeating: 0.25, count: 4800)
        signal[100] = .nan
        signal[200] = .infinity
        signal[300] = -.infinity
        let r = metered(signal).reading
        #expect(r.clipCount == 3)
        #expect(r.peak == 0.25 && r.hold == 0.25 && r.maxPeak == 0.25)
        #expect(r.meanSquare.isFinite && r.sumOfSquares.isFinite)
        #expect(abs(r.sumOfSquares - 0.0625 * 4797) < 1e-9)
    }
}

@Suite struct Ballistics {
    /// 0.5 s of full-scale DC, then `silence` frames of silence.
    func burstThenSilence(_ silence: Int) -> ChannelMeter {
        let burst = metered([Float](repeating: 1, count: 24000))
        return metered([Float](repeating: 0, count: silence), period: 1000, from: burst)
    }

    @Test func peakFallsTwentyDecibelsInOnePointSevenSeconds() {
        let r = burstThenSilence(Int(1.7 * rate)).reading
        #expect(abs(r.peakDBFS - -20) < 0.2)
        #expect(abs(r.peakDBFS - -20) < 0.01)  // and in fact much closer
        let later = burstThenSilence(Int(3.4 * rate)).reading
        #expect(abs(later.peakDBFS - -40) < 0.02)  // linear in dB
    }

    @Test func holdStaysTwoSecondsThenFalls() {
        let holding = burstThenSilence(Int(2 * rate)).reading
        #expect(holding.holdDBFS == 0)
        let falling = burstThenSilence(Int(2.1 * rate)).reading
        #expect(falling.holdDBFS < 0)
        #expect(abs(falling.holdDBFS - -20 * 0.1 / 1.7) < 0.01)  // 0.1 s of fall-back
        #expect(falling.hold >= falling.peak)
        let long = burstThenSilence(Int(6 * rate)).reading
        #expect(abs(long.holdDBFS - -20 * 4 / 1.7) < 0.02)
        #expect(long.maxPeakDBFS == 0)
    }

    @Test func holdNeverBelowPeak() {
        var src = DemoVoiceSource(sampleRate: rate, seed: 9)
        var a = [Float](repeating: 0, count: 480)
        var b = a
        var meter = ChannelMeter()
        for _ in 0 ..< 500 {
            src.render(primary: &a, reference: &b, count: a.count)
            meter = metered(a, period: 480, from: meter)
            #expect(meter.hold >= meter.peak)
        }
    }

    @Test func longSilenceFlushesToExactZero() {  // no denormals on the realtime thread
        let r = burstThenSilence(Int(40 * rate))
        #expect(r.peak == 0 && r.hold == 0 && r.meanSquare == 0)
        #expect(r.reading.peakDBFS == -160 && r.reading.maxPeakDBFS == 0)
    }

    @Test func rmsStepReachesOneMinusOneOverEAtTheTimeConstant() {
        let silence = metered([Float](repeating: 0, count: 1000))
        let r = metered([Float](repeating: 1, count: Int(0.3 * rate)), from: silence).reading
        #expect(abs(r.meanSquare - (1 - exp(-1))) < 1e-9)
    }

    @Test func coefficientsAtCommonRates() {
        for fs in [44100.0, 48000, 96000, 192000] {
            let c = MeterCoefficients(sampleRate: fs)
            #expect(abs(pow(c.peakDecay, 1.7 * fs) - 0.1) < 1e-9)
            #expect(abs(pow(c.rmsRetain, 0.3 * fs) - exp(-1)) < 1e-9)
            #expect(c.rmsRetain + c.rmsGain == 1)
            #expect(c.holdFrames == Int(2 * fs))
        }
        let custom = MeterCoefficients(
            sampleRate: 1000, fallbackDecibelsPerSecond: 0, rmsTimeConstant: 0.125, holdSeconds: 0.5)
        #expect(custom.peakDecay == 1 && custom.holdFrames == 500)
    }

    @Test func periodSizeDoesNotChangeTheState() {
        var src = DemoVoiceSource(sampleRate: rate, seed: 3)
        var signal = [Float](repeating: 0, count: 5 * 48000)
        var other = signal
        src.render(primary: &signal, reference: &other, count: signal.count)
        for i in stride(from: 0, to: signal.count, by: 7919) { signal[i] = 1.1 }  // clips
        signal.replaceSubrange(96000 ..< 96000 + 48000, with: repeatElement(0, count: 48000))  // a hold that falls
        signal[200_000] = .nan
        let reference = metered(signal, period: 1)
        for period in [16, 64, 1000, 4096, signal.count] {
            #expect(metered(signal, period: period) == reference, "period \(period)")
        }
        #expect(reference.frameCount == UInt64(signal.count))
    }
}

@Suite struct DecibelConversions {
    @Test func knownValues() {
        #expect(Decibels.amplitudeToDBFS(1) == 0)
        #expect(abs(Decibels.amplitudeToDBFS(0.5) - -6.020599913279624) < 1e-12)
        #expect(abs(Decibels.amplitudeToDBFS(0.1) - -20) < 1e-12)
        #expect(abs(Decibels.meanSquareToDBFS(0.5) - -3.010299956639812) < 1e-12)
        #expect(abs(Decibels.meanSquareToDBFS(0.5) + Decibels.aes17Offset) < 1e-12)  // sine → 0 dB AES17
        #expect(abs(Decibels.amplitudeToDBFS(2) - 6.020599913279624) < 1e-12)
    }

    @Test func floorForSilenceTinyAndNonFinite() {
        for x in [0, 1e-9, 1e-8, -1, .nan, .infinity, .leastNonzeroMagnitude] {
            #expect(Decibels.amplitudeToDBFS(x) == -160)
        }
        for x in [0, 1e-17, 1e-16, .nan] {
            #expect(Decibels.meanSquareToDBFS(x) == -160)
        }
        #expect(Decibels.amplitudeToDBFS(1.0001e-8) > -160)
    }

    @Test func elementaryFunctionsMatchLibm() {
        var x = -700.0
        while x < 700 {
            #expect(abs(DSPMath.exp(x) / Foundation.exp(x) - 1) < 1e-14, "exp \(x)")
            x += 3.7
        }
        for v in [1e-300, 1e-20, 0.001, 0.5, 0.7071, 1, 1.5, 2, 10, 12345.678, 1e100, 1.7e308] {
            #expect(abs(DSPMath.log(v) - Foundation.log(v)) <= 1e-15 * max(1, abs(Foundation.log(v))), "log \(v)")
            #expect(abs(DSPMath.squareRoot(v) / v.squareRoot() - 1) < 1e-15, "sqrt \(v)")
        }
        #expect(DSPMath.log(1) == 0 && DSPMath.exp(0) == 1)
        x = -20
        while x < 20 {
            #expect(abs(DSPMath.sin(x) - Foundation.sin(x)) < 1e-15, "sin \(x)")
            #expect(abs(DSPMath.cos(x) - Foundation.cos(x)) < 1e-15, "cos \(x)")
            x += 0.0137
        }
        #expect(DSPMath.roundToInt(2.5) == 3 && DSPMath.roundToInt(-2.5) == -3 && DSPMath.roundToInt(-0.4) == 0)
    }
}

/// `ChannelMeter.processStereo` must leave exactly the state two `process` calls leave, bit for
/// bit, for any signal and any period size: it is the capture kernel's two-channel path.
@Suite struct StereoPath {
    /// SplitMix64: a small deterministic generator, so a failure can be replayed.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    /// A signal of random segments: noise over a wide range of levels, silence long enough to
    /// flush, DC, full-scale and over-range samples, NaN and ±∞, subnormals, single spikes.
    static func signal(frames: Int, seed: UInt64) -> [Float] {
        var g = Generator(state: seed)
        var out: [Float] = []
        out.reserveCapacity(frames)
        while out.count < frames {
            let length = min(frames - out.count, 1 + g.below(g.below(4) == 0 ? 20_000 : 600))
            switch g.below(10) {
            case 0:
                out += repeatElement(0, count: length)
            case 1:
                out += repeatElement(Float(g.unit() * 2 - 1), count: length)
            case 2:  // clipping: exactly ±1 and beyond
                for _ in 0 ..< length { out.append([1, -1, 1.5, -3, 0.999_999_94, Float(g.unit())][g.below(6)]) }
            case 3:  // non-finite and subnormal samples among small noise
                for _ in 0 ..< length {
                    let special: [Float] = [
                        .nan, .infinity, -.infinity, .leastNonzeroMagnitude, -.leastNormalMagnitude / 3, 1e-30,
                    ]
                    out.append(g.below(8) == 0 ? special[g.below(special.count)] : Float(g.unit() - 0.5) * 1e-6)
                }
            case 4:  // one spike, then quiet
                out.append(Float(g.unit() * 1.2))
                out += (1 ..< length).map { _ in Float(g.unit() - 0.5) * 1e-3 }
            default:
                let level = pow(10, -12 * g.unit())
                out += (0 ..< length).map { _ in Float((g.unit() * 2 - 1) * level) }
            }
        }
        return out
    }

    static func bits(_ m: ChannelMeter) -> [UInt64] {
        [
            m.peak.bitPattern, m.hold.bitPattern, UInt64(bitPattern: Int64(m.holdFramesLeft)), m.meanSquare.bitPattern,
            m.maxPeak.bitPattern, m.clipCount, m.sumOfSquares.bitPattern, m.frameCount, m.nonFiniteCount,
        ]
    }

    /// Meters `left`/`right` in periods from `periods` (cycled) both ways; true when the states
    /// match bit for bit after every period.
    static func matches(_ left: [Float], _ right: [Float], periods: [Int], coefficients c: MeterCoefficients) -> Bool {
        var scalar = [ChannelMeter(), ChannelMeter()]
        let stereo = UnsafeMutablePointer<ChannelMeter>.allocate(capacity: 2)
        defer { stereo.deallocate() }
        stereo.initialize(repeating: ChannelMeter(), count: 2)
        var offset = 0
        var k = 0
        while offset < left.count {
            let n = min(periods[k % periods.count], left.count - offset)
            k += 1
            left.withUnsafeBufferPointer { l in
                right.withUnsafeBufferPointer { r in
                    scalar[0].process(l.baseAddress! + offset, count: n, coefficients: c)
                    scalar[1].process(r.baseAddress! + offset, count: n, coefficients: c)
                    ChannelMeter.processStereo(
                        stereo, left: l.baseAddress! + offset, right: r.baseAddress! + offset,
                        count: n, coefficients: c)
                }
            }
            offset += n
            if bits(scalar[0]) != bits(stereo[0]) || bits(scalar[1]) != bits(stereo[1]) {
                Issue.record(
                    "differs after frame \(offset) (period \(n)): per channel \(scalar), stereo \([stereo[0], stereo[1]])"
                )
                return false
            }
        }
        return true
    }

    static let coefficientSets = [
        coefficients,
        MeterCoefficients(sampleRate: 44100),
        // Fast ballistics: holds run out, peaks and the mean square reach the flush floor often.
        MeterCoefficients(
            sampleRate: 48000, fallbackDecibelsPerSecond: 20_000, rmsTimeConstant: 0.002, holdSeconds: 0.004),
        // A long hold over a fast fall: the peak and the mean square reach their floors while the
        // hold still counts down, and the fast loop's flush bounds decide where it may run.
        MeterCoefficients(sampleRate: 48000, fallbackDecibelsPerSecond: 600, rmsTimeConstant: 0.01, holdSeconds: 1),
        // The same, with the mean square falling well before the peak.
        MeterCoefficients(sampleRate: 48000, fallbackDecibelsPerSecond: 100, rmsTimeConstant: 0.005, holdSeconds: 1),
        MeterCoefficients(sampleRate: 8000, fallbackDecibelsPerSecond: 0, rmsTimeConstant: 0.01, holdSeconds: 0),
        // A hold too long for the Double counter: the per-channel fallback.
        MeterCoefficients(sampleRate: 48000, holdSeconds: 1e12),
    ]

    @Test("random signals with silence, clipping and non-finite samples, every period size", arguments: 0 ..< 7)
    func matchesScalarPath(coefficientSet: Int) {
        let c = Self.coefficientSets[coefficientSet]
        for seed: UInt64 in 1 ... 3 {
            let left = Self.signal(frames: 120_000, seed: seed)
            let right = Self.signal(frames: 120_000, seed: seed &* 1000 &+ 17)
            for periods in [[32], [1], [3, 64, 5, 1000, 16, 31], [256], [4096], [left.count]] {
                let same = Self.matches(left, right, periods: periods, coefficients: c)
                #expect(same, "seed \(seed), periods \(periods)")
            }
        }
    }

    @Test(
        "a burst, then silence and faint noise that decay to the flush floors while the hold counts down",
        arguments: [3, 4])
    func decaysToTheFloorsDuringTheHold(coefficientSet: Int) {
        // 600 dB/s, τ = 10 ms or 100 dB/s, τ = 5 ms, 1 s hold: a floor within about 0.4 s.
        let c = Self.coefficientSets[coefficientSet]
        var g = Generator(state: 99)
        var left: [Float] = []
        var right: [Float] = []
        for burst in 0 ..< 6 {
            let level = Float(0.2 + 0.7 * g.unit())
            left += repeatElement(level, count: 50)
            right += repeatElement(-level / 2, count: 50)
            // Silence on the left; on the right, noise below the peak floor after a while.
            let quiet = 30_000 + burst * 37
            left += repeatElement(0, count: quiet)
            right += (0 ..< quiet).map { $0 < 15_000 ? 0 : Float((g.unit() - 0.5) * 1e-13) }
        }
        for periods in [[32], [1], [7, 300], [4096]] {
            let same = Self.matches(left, right, periods: periods, coefficients: c)
            #expect(same, "periods \(periods)")
        }
    }

    @Test("the demo voice and the reference signal, 32-frame periods")
    func matchesOnProgramSignals() {
        var voice = DemoVoiceSource(sampleRate: rate, seed: 5)
        var primary = [Float](repeating: 0, count: 10 * 48000)
        var reference = primary
        voice.render(primary: &primary, reference: &reference, count: primary.count)
        let voiceMatches = Self.matches(primary, reference, periods: [32], coefficients: coefficients)
        #expect(voiceMatches)
        let ramp = (0 ..< 200_000).map { ReferenceSignal.value(channel: 0, frame: UInt64($0)) }
        let hash = (0 ..< 200_000).map { ReferenceSignal.value(channel: 1, frame: UInt64($0)) }
        let referenceMatches = Self.matches(ramp, hash, periods: [32], coefficients: coefficients)
        #expect(referenceMatches)
        let unevenMatches = Self.matches(ramp, hash, periods: [37, 64], coefficients: coefficients)
        #expect(unevenMatches)
    }
}

/// The bounds behind `processStereo`'s fast loop: from the bound, pure decay over a whole run
/// never reaches the flush floor (the scalar recurrences, with their roundings).
@Suite struct FastRunBounds {
    /// The sets whose fast loop has bounds (an infinite bound means the loop is never taken).
    static let boundedSets = StereoPath.coefficientSets.filter {
        $0.peakStaysAboveFloor.isFinite && $0.meanSquareStaysAboveFloor.isFinite
    }

    @Test("most coefficient sets have finite bounds, so the test below checks something")
    func boundsExist() {
        #expect(
            Self.boundedSets.count >= StereoPath.coefficientSets.count / 2,
            "only \(Self.boundedSets.count) bounded sets")
    }

    @Test("peak and mean square starting at the bound stay above the floors for a whole run", arguments: boundedSets)
    func boundsHold(c: MeterCoefficients) {
        var meter = ChannelMeter()
        meter.peak = c.peakStaysAboveFloor
        meter.hold = 1
        meter.holdFramesLeft = Int.max / 2
        meter.meanSquare = c.meanSquareStaysAboveFloor
        let silence = [Float](repeating: 0, count: MeterCoefficients.fastRunFrames)
        silence.withUnsafeBufferPointer { meter.process($0.baseAddress!, count: $0.count, coefficients: c) }
        #expect(meter.peak >= 1e-10)
        #expect(meter.meanSquare >= 1e-20)
        // And the bound is not wildly loose: one run's decay, give or take a little.
        #expect(meter.peak < 1.001e-10)
        #expect(meter.meanSquare < 1.001e-20)
    }
}
