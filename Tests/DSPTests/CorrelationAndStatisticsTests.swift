// The inter-mic correlation meter (−1…+1, 300 ms time constant) and the whole-take statistics
// (clips as runs, DC offset, noise floor).

import DSP
import Foundation
import Testing

@Suite struct CorrelationTests {
    static func sine(_ frequency: Double, gain: Double = 0.5, frames: Int = 48000, phase: Double = 0) -> [Float] {
        (0 ..< frames).map { Float(gain * sin(2 * Double.pi * frequency * Double($0) / 48000 + phase)) }
    }

    static func correlate(_ x: [Float], _ y: [Float]) -> CorrelationMeter {
        var meter = CorrelationMeter(sampleRate: 48000)
        meter.add(x, y, count: min(x.count, y.count))
        return meter
    }

    /// The same signal reads +1 (at any gain), an inverted one −1 (a swapped-polarity cable), a
    /// quarter-period shift 0, unrelated noise about 0, silence 0.
    @Test func knownAnswers() {
        let x = Self.sine(440)
        #expect(abs(Self.correlate(x, x.map { $0 * 0.3 }).value - 1) < 1e-6)
        #expect(abs(Self.correlate(x, x.map { -$0 }).value + 1) < 1e-6)
        #expect(abs(Self.correlate(x, x.map { -$0 }).overall + 1) < 1e-6)
        #expect(abs(Self.correlate(x, Self.sine(440, phase: Double.pi / 2)).overall) < 0.01)
        var state: UInt64 = 99
        let noise: [Float] = (0 ..< 48000).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Double(state >> 11) / Double(1 << 53) - 0.5)
        }
        #expect(abs(Self.correlate(x, noise).overall) < 0.05)
        #expect(Self.correlate(x, [Float](repeating: 0, count: 48000)).value == 0)
    }

    /// The running reading forgets with its time constant τ = 300 ms: 1 s of an inverted signal
    /// after 1 s of the same one leaves e^(−1/τ) of the old +1, so it reads 2·e^(−1/0.3) − 1 ≈
    /// −0.929, while the take-wide value sits near 0.
    @Test func runningReadingForgets() {
        var meter = CorrelationMeter(sampleRate: 48000)
        let x = Self.sine(300)
        let inverted = x.map { -$0 }
        meter.add(x, x, count: x.count)
        meter.add(x, inverted, count: x.count)
        #expect(abs(meter.value - (2 * exp(-1 / 0.3) - 1)) < 0.005, "read \(meter.value)")
        #expect(abs(meter.overall) < 0.01)
        #expect(CorrelationMeter.defaultTimeConstant == 0.3)
    }
}

@Suite struct SignalStatisticsTests {
    @Test func clipsAreRunsAndDCIsTheMean() {
        var stats = SignalStatistics(sampleRate: 48000)
        var samples = [Float](repeating: 0.25, count: 4800)
        samples[100] = 1
        samples[101] = -1
        samples[102] = 1.5
        samples[2000] = -1
        samples.withUnsafeBufferPointer { stats.add($0.baseAddress!, count: $0.count) }
        #expect(stats.clipCount == 2)
        #expect(stats.clipSamples == 4)
        #expect(stats.clipStarts == [100, 2000])
        #expect(abs(stats.dcOffset - (0.25 * 4796 + 1 - 1 + 1.5 - 1) / 4800) < 1e-9)
        #expect(stats.samplePeak == 1.5)
    }

    /// 16-bit PCM clips at its largest code, 32767/32768, as libsndfile reads it.
    @Test func integerFullScale() {
        var stats = SignalStatistics(sampleRate: 48000, fullScale: SignalStatistics.fullScale(integerBits: 16))
        let samples: [Float] = [0.5, Float(32767.0 / 32768.0), 0.5, Float(32766.0 / 32768.0)]
        samples.withUnsafeBufferPointer { stats.add($0.baseAddress!, count: $0.count) }
        #expect(stats.clipCount == 1)
    }

    /// The noise floor is the quiet tenth of the take: 9 s of a −20 dB tone and 1 s of −60 dB
    /// noise reads about −60 (bins of 0.5 dB); silence reads the −160 floor.
    @Test func noiseFloor() {
        var stats = SignalStatistics(sampleRate: 48000)
        var state: UInt64 = 5
        let quiet: [Float] = (0 ..< 48000).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let unit: Double = Double(state >> 11) / Double(UInt64(1) << 53)
            let amplitude: Double = 0.001 * 3.0.squareRoot()
            return Float((unit * 2 - 1) * amplitude)
        }
        let toneAmplitude: Double = 0.1 * 2.0.squareRoot()
        let loud: [Float] = (0 ..< (9 * 48000)).map { (frame: Int) -> Float in
            Float(toneAmplitude * sin(Double(frame) * 0.05))
        }
        loud.withUnsafeBufferPointer { stats.add($0.baseAddress!, count: $0.count) }
        quiet.withUnsafeBufferPointer { stats.add($0.baseAddress!, count: $0.count) }
        let floor = try! #require(stats.noiseFloorDBFS)
        #expect(abs(floor - -60) < 1, "read \(floor)")
        var silent = SignalStatistics(sampleRate: 48000)
        let zeros = [Float](repeating: 0, count: 4800)
        zeros.withUnsafeBufferPointer { silent.add($0.baseAddress!, count: $0.count) }
        #expect(silent.noiseFloorDBFS == Decibels.floor)
        #expect(SignalStatistics(sampleRate: 48000).noiseFloorDBFS == nil)
    }
}
