import Foundation
import Testing
@testable import DSP

private let rate = 48000.0
private let coefficients = MeterCoefficients(sampleRate: rate)

/// Meters `signal` in periods of `period` frames, continuing from `meter`.
private func metered(_ signal: [Float], period: Int = 256, from meter: ChannelMeter = ChannelMeter(),
             coefficients c: MeterCoefficients = coefficients) -> ChannelMeter {
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
    (0..<count).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / rate)) }
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
        let square = (0..<(3 * 48000)).map { ($0 / 24) % 2 == 0 ? Float(1) : -1 }  // 1 kHz
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
        for i in 0..<3 { signal[700 + 10 * i] = i == 1 ? -1.2 : 1.2 }
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
        var a = [Float](repeating: 0, count: 480), b = a
        var meter = ChannelMeter()
        for _ in 0..<500 {
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
        let custom = MeterCoefficients(sampleRate: 1000, fallbackDecibelsPerSecond: 0, rmsTimeConstant: 0.125, holdSeconds: 0.5)
        #expect(custom.peakDecay == 1 && custom.holdFrames == 500)
    }

    @Test func periodSizeDoesNotChangeTheState() {
        var src = DemoVoiceSource(sampleRate: rate, seed: 3)
        var signal = [Float](repeating: 0, count: 5 * 48000), other = signal
        src.render(primary: &signal, reference: &other, count: signal.count)
        for i in stride(from: 0, to: signal.count, by: 7919) { signal[i] = 1.1 }  // clips
        signal.replaceSubrange(96000..<96000 + 48000, with: repeatElement(0, count: 48000))  // a hold that falls
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
