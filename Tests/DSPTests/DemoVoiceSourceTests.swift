import Testing

@testable import DSP

/// Renders `seconds` of the demo in calls of `chunk` frames.
private func demo(seed: UInt64, seconds: Double, sampleRate: Double = 48000, chunk: Int = 256) -> (
    primary: [Float], reference: [Float]
) {
    var source = DemoVoiceSource(sampleRate: sampleRate, seed: seed)
    let count = Int(seconds * sampleRate)
    var primary = [Float](repeating: 0, count: count)
    var reference = primary
    primary.withUnsafeMutableBufferPointer { p in
        reference.withUnsafeMutableBufferPointer { r in
            var offset = 0
            while offset < count {
                let n = min(chunk, count - offset)
                source.render(primary: p.baseAddress! + offset, reference: r.baseAddress! + offset, count: n)
                offset += n
            }
        }
    }
    return (primary, reference)
}

private func meanSquare(_ x: ArraySlice<Float>) -> Double {
    x.reduce(0) { $0 + Double($1) * Double($1) } / Double(x.count)
}

@Suite struct DemoVoiceSourceTests {
    @Test func deterministicForASeedAndIndependentOfChunking() {
        let a = demo(seed: 7, seconds: 3, chunk: 4096)
        let b = demo(seed: 7, seconds: 3, chunk: 37)
        #expect(a.primary == b.primary)
        #expect(a.reference == b.reference)
        let c = demo(seed: 8, seconds: 3)
        #expect(a.primary != c.primary)
    }

    @Test(arguments: [8000.0, 44100, 48000, 96000, 192000])
    func neverClipsAndPeaksAroundMinus8(sampleRate: Double) {
        for seed: UInt64 in [0, 1] {
            let (p, r) = demo(seed: seed, seconds: 15, sampleRate: sampleRate, chunk: 1024)
            let peakP = Decibels.amplitudeToDBFS(Double(p.map(\.magnitude).max()!))
            let peakR = Decibels.amplitudeToDBFS(Double(r.map(\.magnitude).max()!))
            #expect(peakP > -13 && peakP < -5, "primary peak \(peakP) at \(sampleRate)")
            #expect(peakR < peakP - 5)
            #expect(!p.contains { !($0.magnitude < 1) } && !r.contains { !($0.magnitude < 1) })
        }
    }

    @Test func primaryIsLouderThanReference() {
        let (p, r) = demo(seed: 1, seconds: 30)
        let difference = Decibels.meanSquareToDBFS(meanSquare(p[...])) - Decibels.meanSquareToDBFS(meanSquare(r[...]))
        #expect(difference > 6 && difference < 10)  // the voice is 8 dB lower at the reference
    }

    @Test func speechHasSyllablesAndPauses() {
        let (p, _) = demo(seed: 2, seconds: 30)
        let window = 2400  // 50 ms
        let levels = stride(from: 0, to: p.count - window, by: window).map {
            Decibels.meanSquareToDBFS(meanSquare(p[$0 ..< ($0 + window)]))
        }
        let quiet = levels.filter { $0 < -45 }.count  // only noise: pauses
        let loud = levels.filter { $0 > -25 }.count  // vowels
        #expect(quiet > levels.count / 10)
        #expect(loud > levels.count / 5)
        #expect(levels.allSatisfy { $0 > -60 })  // the noise never stops
    }

    @Test func referenceLagsThePrimary() {
        let (p, r) = demo(seed: 4, seconds: 5)
        func correlation(_ lag: Int) -> Double {
            var sum = 0.0
            for i in 0 ..< (p.count - lag) { sum += Double(p[i]) * Double(r[i + lag]) }
            return sum
        }
        let best = (0 ... 40).max { correlation($0) < correlation($1) }!
        #expect((13 ... 17).contains(best), "lag \(best)")  // 0.3 ms = 14 frames, + the low-pass
    }
}
