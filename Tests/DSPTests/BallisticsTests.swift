// Known answers from the standards for `--meter`: the tone-burst responses of each IEC 60268-10
// PPM type, their return times, the IEC 60268-17 VU rise time and overshoot, each scale's
// reference level, and the K-System's reference.

import DSP
import Foundation
import Testing

@Suite struct BallisticsTests {
    static let rate = 48000.0

    /// A sine of `peakDBFS` for `seconds`, then `silence` seconds of nothing.
    static func tone(_ frequency: Double, peakDBFS: Double, seconds: Double, silence: Double = 0) -> [Float] {
        let amplitude = pow(10, peakDBFS / 20)
        let frames = Int((seconds * rate).rounded())
        return (0 ..< frames).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / rate)) }
            + [Float](repeating: 0, count: Int(silence * rate))
    }

    /// Runs `samples` through a fresh meter in periods of `period` frames; the meter after it
    /// and the reading after each period.
    static func run(_ type: MeterType, _ samples: [Float], period: Int = 256) -> (BallisticMeter, [Double]) {
        let c = BallisticCoefficients(type: type, sampleRate: rate)
        var meter = BallisticMeter()
        var readings: [Double] = []
        samples.withUnsafeBufferPointer { buffer in
            var start = 0
            while start < buffer.count {
                let count = min(period, buffer.count - start)
                meter.process(buffer.baseAddress! + start, count: count, coefficients: c)
                readings.append(meter.reading(type))
                start += count
            }
        }
        return (meter, readings)
    }

    /// The highest reading a burst of `ms` ms of 5 kHz gives, in dB under a steady tone's.
    static func burstDrop(_ type: MeterType, ms: Double) -> Double {
        let steady = run(type, tone(5000, peakDBFS: -10, seconds: 1)).0.maxLevel
        let burst = run(type, tone(5000, peakDBFS: -10, seconds: ms / 1000, silence: 0.1)).0.maxLevel
        return 20 * log10(burst / steady)
    }

    @Test(arguments: [(10.0, -1.0), (5, -2)])
    func typeIBursts(ms: Double, expected: Double) {
        let drop = Self.burstDrop(.ppm1, ms: ms)
        #expect(abs(drop - expected) <= 0.5, "Type I, \(ms) ms burst read \(drop) dB")
    }

    @Test(arguments: [MeterType.ppm2a, .ppm2b])
    func typeIIBursts(type: MeterType) {
        for (ms, expected, tolerance) in [(100.0, 0.0, 0.5), (10, -2, 0.5), (5, -4, 0.75), (1.5, -9, 1), (0.5, -17, 2)]
        {
            let drop = Self.burstDrop(type, ms: ms)
            #expect(abs(drop - expected) <= tolerance, "\(type) \(ms) ms burst read \(drop) dB")
        }
    }

    /// Return time: Type II falls 24 dB in 2.8 s (PPM 7 to PPM 1), Type I 20 dB in 1.5 s.
    @Test(arguments: [(MeterType.ppm2a, 24.0, 2.8), (.ppm2b, 24, 2.8), (.ppm1, 20, 1.5)])
    func returnTime(type: MeterType, decibels: Double, seconds: Double) {
        let samples = Self.tone(1000, peakDBFS: -6, seconds: 0.5, silence: seconds)
        let (meter, _) = Self.run(type, samples)
        let fell = 20 * log10(meter.maxLevel / meter.level)
        #expect(abs(fell - decibels) <= 0.5, "\(type) fell \(fell) dB in \(seconds) s")
    }

    /// Each scale's reference: a steady 1 kHz sine at the reference level reads 0 (PPM 4 for
    /// the BBC meter), and one 8 dB up reads +8 (two marks up).
    @Test(arguments: [MeterType.ppm1, .ppm2a, .ppm2b, .vu, .k12, .k14, .k20])
    func referenceLevel(type: MeterType) {
        let atReference = Self.run(type, Self.tone(1000, peakDBFS: type.referenceDBFS, seconds: 3)).0.reading(type)
        let zero = type == .ppm2a ? 4.0 : 0
        #expect(abs(atReference - zero) <= 0.2, "\(type) read \(atReference) at its reference")
        let above = Self.run(type, Self.tone(1000, peakDBFS: type.referenceDBFS + 8, seconds: 3)).0.reading(type)
        #expect(abs(above - (type == .ppm2a ? 6 : 8)) <= 0.2, "\(type) read \(above) 8 dB up")
    }

    /// PPM 4 is −18 dBFS and the marks are 4 dB apart: PPM 6 is −10 dBFS.
    @Test func bbcMarks() {
        let reading = Self.run(.ppm2a, Self.tone(1000, peakDBFS: -10, seconds: 2)).0.reading(.ppm2a)
        #expect(abs(reading - 6) <= 0.1)
    }

    /// IEC 60268-17: a reference-level sine applied at once reaches 99 % of its final reading
    /// in 300 ms ± 10 %, and overshoots by 1 … 1.5 %.
    @Test func vuRiseTimeAndOvershoot() {
        let c = BallisticCoefficients(type: .vu, sampleRate: Self.rate)
        let samples = Self.tone(1000, peakDBFS: -14, seconds: 3)
        var meter = BallisticMeter()
        var positions: [Double] = []
        samples.withUnsafeBufferPointer { buffer in
            for start in stride(from: 0, to: buffer.count, by: 48) {
                meter.process(buffer.baseAddress! + start, count: 48, coefficients: c)
                positions.append(meter.level)
            }
        }
        let final = positions.suffix(100).reduce(0, +) / 100
        let firstAt99 = positions.firstIndex { $0 >= 0.99 * final }.map { Double($0 + 1) / 1000 } ?? 99
        #expect(firstAt99 >= 0.27 && firstAt99 <= 0.33, "reached 99 % after \(firstAt99) s")
        let overshoot = (positions.max() ?? 0) / final - 1
        #expect(overshoot >= 0.01 && overshoot <= 0.015, "overshoot \(overshoot * 100) %")
    }

    /// K-System: a sine at −20 dB RMS (AES17) reads 0 on K-20; pink-ish noise at that RMS too;
    /// the peak section shows the crest above it.
    @Test func kMeterReference() {
        let (meter, _) = Self.run(.k20, Self.tone(1000, peakDBFS: -20, seconds: 3))
        #expect(abs(meter.reading(.k20)) <= 0.1)
        #expect(abs(meter.peakReading(.k20)) <= 0.1)
        var state: UInt64 = 12345
        let noise: [Float] = (0 ..< Int(3 * Self.rate)).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Double(state >> 11) / Double(1 << 53) * 2 - 1) * 0.1732
        }
        // Uniform noise of amplitude a has RMS a/√3 = 0.1 (−20 dB), read as AES17: −20 + 3.01.
        let noiseReading = Self.run(.k20, noise).0.reading(.k20)
        #expect(abs(noiseReading - 3.01) <= 0.3, "noise read \(noiseReading)")
    }

    /// The reading never depends on the period.
    @Test(arguments: MeterType.allCases)
    func periodDoesNotMatter(type: MeterType) {
        let samples = Self.tone(997, peakDBFS: -12, seconds: 0.7, silence: 0.3)
        let a = Self.run(type, samples, period: 64).0
        let b = Self.run(type, samples, period: 1000).0
        #expect(abs(a.level - b.level) <= 1e-9 * max(a.level, 1e-12) + 1e-15)
        #expect(a.maxLevel == b.maxLevel || type == .peak)
    }
}
