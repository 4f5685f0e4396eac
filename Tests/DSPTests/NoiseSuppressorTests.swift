import Testing

@testable import DSP

/// Deterministic test signals for two mics.
private struct TwoMicSignal {
    var primary: [Float]
    var reference: [Float]
    var count: Int { primary.count }

    /// The demo voice (talker near the primary, 8 dB quieter at the reference) with its own
    /// −52 dBFS room noise: speech, essentially clean.
    static func voice(seconds: Double, sampleRate: Int = 48_000) -> TwoMicSignal {
        let n = Int(seconds * Double(sampleRate))
        var source = DemoVoiceSource(sampleRate: Double(sampleRate), seed: 7)
        var p = [Float](repeating: 0, count: n)
        var r = [Float](repeating: 0, count: n)
        p.withUnsafeMutableBufferPointer { pp in
            r.withUnsafeMutableBufferPointer { rr in
                source.render(primary: pp.baseAddress!, reference: rr.baseAddress!, count: n)
            }
        }
        return TwoMicSignal(primary: p, reference: r)
    }

    /// Far-field noise: independent pinkish noise at each mic, equal level (a diffuse field),
    /// `referenceGainDecibels` changing the reference mic's sensitivity after `changeSeconds`.
    static func noise(
        seconds: Double, decibels: Double = -30, referenceGainDecibels: Double = 0,
        changeSeconds: Double = 0, sampleRate: Int = 48_000
    ) -> TwoMicSignal {
        let n = Int(seconds * Double(sampleRate))
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func uniform() -> Float {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Int64(bitPattern: state) >> 11) / Float(1 << 52)
        }
        let amplitude = Float(Decibels.gain(decibels: decibels)) * 1.7
        let referenceGain = Float(Decibels.gain(decibels: referenceGainDecibels))
        let change = Int(changeSeconds * Double(sampleRate))
        var p = [Float](repeating: 0, count: n)
        var r = [Float](repeating: 0, count: n)
        var lowP: Float = 0
        var lowR: Float = 0
        for i in 0 ..< n {
            // White plus a one-pole low-passed part: more energy low, like room noise.
            lowP = 0.97 * lowP + 0.03 * uniform()
            lowR = 0.97 * lowR + 0.03 * uniform()
            p[i] = amplitude * (0.5 * uniform() + 2 * lowP)
            r[i] = amplitude * (0.5 * uniform() + 2 * lowR) * (i >= change ? referenceGain : 1)
        }
        return TwoMicSignal(primary: p, reference: r)
    }

    static func + (a: TwoMicSignal, b: TwoMicSignal) -> TwoMicSignal {
        TwoMicSignal(primary: zip(a.primary, b.primary).map(+), reference: zip(a.reference, b.reference).map(+))
    }
}

/// Runs `signal` through a fresh suppressor in blocks of `block` frames.
private func denoise(
    _ signal: TwoMicSignal, block: Int, sampleRate: Int = 48_000, latency: NoiseSuppressorLatency = .standard
) throws -> [Float] {
    let suppressor = try NoiseSuppressor(sampleRate: sampleRate, latency: latency)
    var clean = [Float](repeating: 0, count: signal.count)
    signal.primary.withUnsafeBufferPointer { p in
        signal.reference.withUnsafeBufferPointer { r in
            clean.withUnsafeMutableBufferPointer { c in
                var done = 0
                while done < signal.count {
                    let n = min(block, signal.count - done)
                    suppressor.process(
                        primary: p.baseAddress! + done, reference: r.baseAddress! + done,
                        clean: c.baseAddress! + done, frameCount: n)
                    done += n
                }
            }
        }
    }
    return clean
}

private func meanSquare(_ x: ArraySlice<Float>) -> Double {
    x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(x.count, 1))
}

private func decibels(_ meanSquare: Double) -> Double { 10 * DSPMath.log10(max(meanSquare, 1e-30)) }

@Suite("Noise suppressor")
struct NoiseSuppressorTests {
    @Test("Only 44.1 and 48 kHz are accepted")
    func sampleRates() throws {
        #expect(throws: NoiseSuppressorError.unsupportedSampleRate(96_000)) { try NoiseSuppressor(sampleRate: 96_000) }
        #expect(throws: NoiseSuppressorError.unsupportedSampleRate(16_000)) { try NoiseSuppressor(sampleRate: 16_000) }
        #expect(try NoiseSuppressor(sampleRate: 44_100).latencyFrames > 0)
        // Lag at most 10 ms at either rate.
        for rate in [44_100, 48_000] {
            let latency = try NoiseSuppressor(sampleRate: rate).latencyFrames
            #expect(Double(latency) / Double(rate) <= 0.010)
            // The low-latency mode for live headphone monitoring: at most 2.7 ms.
            let low = try NoiseSuppressor(sampleRate: rate, latency: .low).latencyFrames
            #expect(Double(low) / Double(rate) <= 0.0027)
        }
    }

    @Test(
        "Speech alone passes: level within 0.5 dB and the waveform within 20 dB SNR of the delayed input",
        arguments: NoiseSuppressorLatency.allCases)
    func speechPasses(_ latency: NoiseSuppressorLatency) throws {
        let signal = TwoMicSignal.voice(seconds: 6)
        let clean = try denoise(signal, block: 256, latency: latency)
        let lag = try NoiseSuppressor(sampleRate: 48_000, latency: latency).latencyFrames
        // Compare the last 5 s (after the first second of settling), aligned by the lag.
        let start = 48_000
        let input = signal.primary[start ..< (signal.count - lag)]
        let output = clean[(start + lag)...]
        let levelChange = decibels(meanSquare(output)) - decibels(meanSquare(input))
        #expect(abs(levelChange) < 0.5, "level change \(levelChange) dB")
        var errorEnergy = 0.0
        for (x, y) in zip(input, output) { errorEnergy += Double(y - x) * Double(y - x) }
        let snr = decibels(meanSquare(input)) - decibels(errorEnergy / Double(input.count))
        #expect(snr > 20, "speech-only output differs from the input by SNR \(snr) dB")
    }

    @Test(
        "Far-field noise alone is attenuated by at least 12 dB after half a second",
        arguments: NoiseSuppressorLatency.allCases)
    func noiseIsAttenuated(_ latency: NoiseSuppressorLatency) throws {
        let signal = TwoMicSignal.noise(seconds: 4)
        let clean = try denoise(signal, block: 128, latency: latency)
        let start = 24_000
        let attenuation = decibels(meanSquare(signal.primary[start...])) - decibels(meanSquare(clean[start...]))
        #expect(attenuation >= 12, "attenuation \(attenuation) dB")
    }

    @Test(
        "A far point source (the same noise at both mics, 5 samples apart) is cancelled: ≥ 20 dB, more than diffuse noise"
    )
    func coherentNoiseIsCancelled() throws {
        let diffuse = TwoMicSignal.noise(seconds: 4)
        var reference = [Float](repeating: 0, count: diffuse.count)
        for i in 5 ..< diffuse.count { reference[i] = 0.9 * diffuse.primary[i - 5] }
        let coherent = TwoMicSignal(primary: diffuse.primary, reference: reference)
        let start = 48_000
        let input = decibels(meanSquare(coherent.primary[start...]))
        let coherentAttenuation = input - decibels(meanSquare(try denoise(coherent, block: 256)[start...]))
        let diffuseAttenuation = input - decibels(meanSquare(try denoise(diffuse, block: 256)[start...]))
        #expect(coherentAttenuation >= 20, "coherent: \(coherentAttenuation) dB")
        #expect(
            coherentAttenuation > diffuseAttenuation + 3,
            "coherent \(coherentAttenuation) dB, diffuse \(diffuseAttenuation) dB")
    }

    @Test(
        "A 3 dB mic mismatch from the start: within 1.5 dB after 0.5 s, within 0.5 dB after 3 s",
        arguments: [3.0, -3.0])
    func mismatchFromTheStart(referenceGain: Double) throws {
        let signal = TwoMicSignal.noise(seconds: 3, referenceGainDecibels: referenceGain)
        let suppressor = try NoiseSuppressor(sampleRate: 48_000)
        var clean = [Float](repeating: 0, count: signal.count)
        signal.primary.withUnsafeBufferPointer { p in
            signal.reference.withUnsafeBufferPointer { r in
                suppressor.process(
                    primary: p.baseAddress!, reference: r.baseAddress!, clean: &clean, frameCount: 24_000)
                #expect(abs(Double(suppressor.kernel.calibrationDecibels) + referenceGain) < 1.5)
                suppressor.process(
                    primary: p.baseAddress! + 24_000, reference: r.baseAddress! + 24_000,
                    clean: &clean, frameCount: signal.count - 24_000)
            }
        }
        #expect(abs(Double(suppressor.kernel.calibrationDecibels) + referenceGain) < 0.5)
        let attenuation = decibels(meanSquare(signal.primary[24_000...])) - decibels(meanSquare(clean[24_000...]))
        #expect(attenuation >= 12, "attenuation \(attenuation) dB")
    }

    @Test("A 3 dB mismatch appearing mid-stream is followed within 10 s, either way", arguments: [3.0, -3.0])
    func mismatchIsCalibrated(referenceGain: Double) throws {
        let sampleRate = 48_000
        let signal = TwoMicSignal.noise(seconds: 16, referenceGainDecibels: referenceGain, changeSeconds: 2)
        let suppressor = try NoiseSuppressor(sampleRate: sampleRate)
        var clean = [Float](repeating: 0, count: 480)
        var settledAt: Double?
        var calibrationBefore: Float = .nan
        for blockStart in stride(from: 0, to: signal.count, by: 480) {
            signal.primary.withUnsafeBufferPointer { p in
                signal.reference.withUnsafeBufferPointer { r in
                    suppressor.process(
                        primary: p.baseAddress! + blockStart, reference: r.baseAddress! + blockStart,
                        clean: &clean, frameCount: 480)
                }
            }
            let t = Double(blockStart + 480) / Double(sampleRate)
            if abs(t - 2) < 0.005 { calibrationBefore = suppressor.kernel.calibrationDecibels }
            // The calibration is primary − reference: a louder reference lowers it.
            let error = abs(Double(suppressor.kernel.calibrationDecibels - calibrationBefore) + referenceGain)
            if t > 2 {
                if error < 0.5 { if settledAt == nil { settledAt = t - 2 } } else { settledAt = nil }
            }
        }
        #expect(abs(calibrationBefore) < 1, "matched mics calibrated to \(calibrationBefore) dB")
        let settled = try #require(settledAt, "never settled within 0.5 dB")
        #expect(settled <= 10, "settled after \(settled) s")
    }

    @Test(
        "The output does not depend on the block size",
        arguments: [1, 16, 32, 97, 256, 1024, 4096], NoiseSuppressorLatency.allCases)
    func blockSizeIndependence(block: Int, latency: NoiseSuppressorLatency) throws {
        let signal = TwoMicSignal.voice(seconds: 1.5) + TwoMicSignal.noise(seconds: 1.5, decibels: -35)
        let reference = try denoise(signal, block: 64, latency: latency)
        let clean = try denoise(signal, block: block, latency: latency)
        #expect(clean == reference)
    }

    @Test(
        "Silence, DC, full-scale clipping and denormal input give finite output",
        arguments: ["silence", "dc", "clipped", "denormal", "one-mic"])
    func hostileInputStaysFinite(kind: String) throws {
        let n = 48_000
        var p = [Float](repeating: 0, count: n)
        var r = [Float](repeating: 0, count: n)
        for i in 0 ..< n {
            switch kind {
            case "dc":
                p[i] = 0.5
                r[i] = 0.5
            case "clipped":
                p[i] = (i / 40) % 2 == 0 ? 1 : -1
                r[i] = (i / 37) % 2 == 0 ? 1 : -1
            case "denormal":
                p[i] = Float.leastNonzeroMagnitude * Float(i % 7)
                r[i] = Float.leastNormalMagnitude / 3
            case "one-mic": p[i] = Float(i % 100) / 200
            default: break
            }
        }
        let clean = try denoise(TwoMicSignal(primary: p, reference: r), block: 128)
        #expect(clean.allSatisfy { $0.isFinite })
        #expect(clean.allSatisfy { abs($0) <= 4 })
    }

    @Test("44.1 kHz works like 48 kHz: noise down, speech through")
    func at44100() throws {
        let noise = TwoMicSignal.noise(seconds: 3, sampleRate: 44_100)
        let clean = try denoise(noise, block: 512, sampleRate: 44_100)
        let attenuation = decibels(meanSquare(noise.primary[22_050...])) - decibels(meanSquare(clean[22_050...]))
        #expect(attenuation >= 12, "attenuation \(attenuation) dB")
    }
}

@Suite("Noise suppressor on the demo scenes")
struct NoiseSuppressorDemoTests {
    /// The meter's reading of the noise reduction, as `MeterOutput` computes it: in_1's RMS
    /// (0.3 s) over the clean channel's, in dB, read every 100 ms after the first 2 s.
    static func reductionReadings(noise: DemoVoiceSource.Noise, latency: NoiseSuppressorLatency) throws -> [Double] {
        let rate = 48_000
        let n = 12 * rate
        var source = DemoVoiceSource(sampleRate: Double(rate), seed: 1, noise: noise)
        var p = [Float](repeating: 0, count: n)
        var r = [Float](repeating: 0, count: n)
        p.withUnsafeMutableBufferPointer { pp in
            r.withUnsafeMutableBufferPointer { rr in
                source.render(primary: pp.baseAddress!, reference: rr.baseAddress!, count: n)
            }
        }
        let clean = try denoise(TwoMicSignal(primary: p, reference: r), block: 256, latency: latency)
        let retain = DSPMath.exp(-1 / (0.3 * Double(rate)))
        var inputSquare = 0.0
        var cleanSquare = 0.0
        var readings: [Double] = []
        for i in 0 ..< n {
            inputSquare = retain * inputSquare + (1 - retain) * Double(p[i]) * Double(p[i])
            cleanSquare = retain * cleanSquare + (1 - retain) * Double(clean[i]) * Double(clean[i])
            if i >= 2 * rate && i % (rate / 10) == 0 {
                readings.append(max(0, decibels(inputSquare) - decibels(cleanSquare)))
            }
        }
        return readings
    }

    @Test(
        "demo --denoise's fan scene reads at least 10 dB of noise reduction most of the time",
        arguments: NoiseSuppressorLatency.allCases)
    func fanSceneShowsTheReduction(_ latency: NoiseSuppressorLatency) throws {
        let readings = try Self.reductionReadings(noise: .fan, latency: latency).sorted()
        let median = readings[readings.count / 2]
        #expect(median >= 10, "median noise reduction \(median) dB")
        // The quiet room has next to nothing to take away.
        let quiet = try Self.reductionReadings(noise: .room, latency: latency).sorted()
        #expect(quiet[quiet.count / 2] < 3)
    }
}
