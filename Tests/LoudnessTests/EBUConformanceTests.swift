// EBU Tech 3341 (loudness, true peak) and Tech 3342 (loudness range) test signals, synthesized as
// the documents define them (1 kHz sines at stated levels and durations; "dBFS" is the sine's
// peak per channel), measured through `TakeAnalyzer` exactly as live takes and `micmon report`
// are. Tolerances are the documents': ±0.1 LU for M, S and I, ±1 LU for LRA, +0.2/−0.4 dB for
// true peak.

import DSP
import Engine
import Testing

/// A test programme: segments of a sine (frequency, peak level in dBFS, seconds), continuous
/// phase, the same on every channel.
struct TestProgramme {
    var sampleRate = 48000
    var channels = 2
    var segments: [(frequency: Double, peakDBFS: Double, seconds: Double)]
    var phaseDegrees = 0.0

    func samples() -> [Float] {
        var out: [Float] = []
        var phase = phaseDegrees * Double.pi / 180
        for segment in segments {
            let frames = Int((segment.seconds * Double(sampleRate)).rounded())
            let amplitude = segment.peakDBFS <= -200 ? 0 : pow10(segment.peakDBFS / 20)
            let step = 2 * Double.pi * segment.frequency / Double(sampleRate)
            out.reserveCapacity(out.count + frames * channels)
            for _ in 0 ..< frames {
                let x = Float(amplitude * sin(phase))
                for _ in 0 ..< channels { out.append(x) }
                phase += step
                if phase > 2 * Double.pi { phase -= 2 * Double.pi }
            }
        }
        return out
    }

    /// The analysis, fed in blocks of `block` frames (any size reads the same).
    func analyse(mode: LoudnessMode, block: Int = 1024) throws -> TakeAnalysisResult {
        let names = (1 ... channels).map { "ch\($0)" }
        let analyzer = try TakeAnalyzer(channelNames: names, sampleRate: sampleRate, mode: mode)
        let all = samples()
        try all.withUnsafeBufferPointer { buffer in
            var frame = 0
            let total = all.count / channels
            while frame < total {
                let count = min(block, total - frame)
                try analyzer.add(buffer.baseAddress! + frame * channels, frameCount: count)
                frame += count
            }
        }
        return analyzer.result()
    }
}

private func pow10(_ x: Double) -> Double { exp(x * 2.302585092994046) }
private func sin(_ x: Double) -> Double { _sin(x) }
@_silgen_name("sin") private func _sin(_ x: Double) -> Double
@_silgen_name("exp") private func exp(_ x: Double) -> Double

private func sine(_ peak: Double, _ seconds: Double) -> (frequency: Double, peakDBFS: Double, seconds: Double) {
    (1000, peak, seconds)
}

@Suite struct EBUTech3341Tests {
    /// Cases 1–5: integrated loudness of a stereo programme.
    @Test(arguments: [
        ([sine(-23, 20)], -23.0),
        ([sine(-33, 20)], -33.0),
        ([sine(-36, 10), sine(-23, 60), sine(-36, 10)], -23.0),
        ([sine(-72, 10), sine(-36, 10), sine(-23, 60), sine(-36, 10), sine(-72, 10)], -23.0),
        ([sine(-26, 20), sine(-20, 20.1), sine(-26, 20)], -23.0),
    ])
    func integratedLoudness(segments: [(frequency: Double, peakDBFS: Double, seconds: Double)], expected: Double)
        throws
    {
        let result = try TestProgramme(segments: segments).analyse(mode: .stereo)
        #expect(result.programmes.count == 1)
        #expect(abs(result.programmes[0].integratedLUFS - expected) <= 0.1)
    }

    /// Case 1, momentary and short-term: a steady −23 dBFS stereo sine reads −23.0 in both.
    @Test func momentaryAndShortTermOfASteadyTone() throws {
        let result = try TestProgramme(segments: [sine(-23, 20)]).analyse(mode: .stereo)
        #expect(abs(result.programmes[0].momentaryLUFS - -23) <= 0.1)
        #expect(abs(result.programmes[0].shortTermLUFS - -23) <= 0.1)
        #expect(abs(result.programmes[0].maxShortTermLUFS - -23) <= 0.1)
    }

    /// Case 9: 1.34 s at −20 dBFS, 1.66 s at −30, five times: short-term −23.0 throughout.
    @Test func shortTermOfCase9() throws {
        let segments = Array(repeating: [sine(-20, 1.34), sine(-30, 1.66)], count: 5).flatMap { $0 }
        let result = try TestProgramme(segments: segments).analyse(mode: .stereo)
        #expect(abs(result.programmes[0].shortTermLUFS - -23) <= 0.1)
        #expect(abs(result.programmes[0].maxShortTermLUFS - -23) <= 0.1)
    }

    /// Case 12: 0.18 s at −20 dBFS, 0.22 s at −30, twenty times: momentary −23.0.
    @Test func momentaryOfCase12() throws {
        let segments = Array(repeating: [sine(-20, 0.18), sine(-30, 0.22)], count: 20).flatMap { $0 }
        let result = try TestProgramme(segments: segments).analyse(mode: .stereo)
        #expect(abs(result.programmes[0].momentaryLUFS - -23) <= 0.1)
    }

    /// The modes: one channel of case 1 alone is a mono programme at −26.0 (half the power of the
    /// stereo pair); as dual mono it counts twice, −23.0; per-channel measures each channel apart.
    @Test func loudnessModes() throws {
        let programme = TestProgramme(segments: [sine(-23, 20)])
        let perChannel = try programme.analyse(mode: .perChannel)
        #expect(perChannel.programmes.map(\.name) == ["ch1", "ch2"])
        for entry in perChannel.programmes { #expect(abs(entry.integratedLUFS - -26.01) <= 0.1) }
        let dualMono = try programme.analyse(mode: .dualMono)
        for entry in dualMono.programmes { #expect(abs(entry.integratedLUFS - -23) <= 0.1) }
        let stereo = try programme.analyse(mode: .stereo)
        #expect(stereo.programmes.map(\.name) == ["stereo"])
    }

    /// True peak: sines whose peaks fall between samples. At −6 dBFS peak (576, 1152, 3456 and
    /// 11520 Hz at 48 kHz) the reading is −6.0; a tone at fs/4 with 45° phase, whose samples sit
    /// 3 dB under its peak, reads its real peak: 0.0 for a 0 dBFS peak, +3.0 for +3 dBFS.
    @Test(arguments: [
        (576.0, -6.0, 0.0, -6.0), (1152, -6, 0, -6), (3456, -6, 0, -6), (11520, -6, 0, -6),
        (12000, 0, 45, 0), (12000, 3.0103, 45, 3.0),
    ])
    func truePeak(frequency: Double, peak: Double, phase: Double, expected: Double) throws {
        let programme = TestProgramme(
            channels: 1, segments: [(frequency, peak, 2)], phaseDegrees: phase)
        let result = try programme.analyse(mode: .perChannel)
        let reading = result.channels[0].truePeakDBTP
        #expect(reading <= expected + 0.2 && reading >= expected - 0.4, "read \(reading) dBTP")
        if phase == 45 {
            // The samples themselves sit 3 dB lower: what true peak exists to see.
            #expect(abs(result.channels[0].samplePeakDBFS - (expected - 3.01)) <= 0.05)
        }
    }
}

@Suite struct EBUTech3342Tests {
    /// Cases 1–4: loudness range of stereo programmes.
    @Test(arguments: [
        ([sine(-20, 20), sine(-30, 20)], 10.0),
        ([sine(-20, 20), sine(-15, 20)], 5.0),
        ([sine(-40, 20), sine(-20, 20)], 20.0),
        ([sine(-50, 20), sine(-35, 20), sine(-20, 20), sine(-35, 20), sine(-50, 20)], 15.0),
    ])
    func loudnessRange(segments: [(frequency: Double, peakDBFS: Double, seconds: Double)], expected: Double) throws {
        let result = try TestProgramme(segments: segments).analyse(mode: .stereo)
        #expect(abs(result.programmes[0].loudnessRangeLU - expected) <= 1)
    }
}

@Suite struct AnalysisBlockTests {
    /// The reading never depends on how the frames were split (live periods, file blocks).
    @Test func blockSizeDoesNotChangeTheResult() throws {
        let programme = TestProgramme(segments: [sine(-30, 2), sine(-18, 3.3), sine(-40, 1.1)])
        let a = try programme.analyse(mode: .perChannel, block: 64)
        let b = try programme.analyse(mode: .perChannel, block: 4801)
        #expect(a.programmes == b.programmes)
        #expect(a.channels == b.channels)
        #expect(a.correlation == b.correlation)
    }
}
