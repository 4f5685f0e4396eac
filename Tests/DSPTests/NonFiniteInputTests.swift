import Testing

@testable import DSP

/// The suppressor's state must never keep a non-finite value: a NaN, an infinity or an absurd
/// magnitude in either input affects only the frames that hold it.
@Suite("Noise suppressor and non-finite input")
struct NonFiniteInputTests {
    /// Two seconds of the demo voice: primary and reference.
    private static func voice() -> (primary: [Float], reference: [Float]) {
        let n = 96_000
        var source = DemoVoiceSource(sampleRate: 48_000, seed: 11)
        var primary = [Float](repeating: 0, count: n)
        var reference = [Float](repeating: 0, count: n)
        primary.withUnsafeMutableBufferPointer { p in
            reference.withUnsafeMutableBufferPointer { r in
                source.render(primary: p.baseAddress!, reference: r.baseAddress!, count: n)
            }
        }
        return (primary, reference)
    }

    private static func denoise(primary: [Float], reference: [Float]) throws -> [Float] {
        let suppressor = try NoiseSuppressor(sampleRate: 48_000)
        var clean = [Float](repeating: .nan, count: primary.count)
        primary.withUnsafeBufferPointer { p in
            reference.withUnsafeBufferPointer { r in
                clean.withUnsafeMutableBufferPointer { c in
                    var done = 0
                    while done < primary.count {
                        let n = min(256, primary.count - done)
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

    private static func meanSquare(_ x: ArraySlice<Float>) -> Double {
        x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(x.count, 1))
    }

    @Test(
        "one bad sample in either mic leaves every output sample finite and the take's end as it was",
        arguments: [Float.nan, .infinity, -.infinity, 1e30, -Float.greatestFiniteMagnitude],
        [false, true])
    func recovers(bad: Float, inReference: Bool) throws {
        let (primary, reference) = Self.voice()
        let expected = try Self.denoise(primary: primary, reference: reference)
        var poisonedPrimary = primary
        var poisonedReference = reference
        if inReference { poisonedReference[24_000] = bad } else { poisonedPrimary[24_000] = bad }
        let clean = try Self.denoise(primary: poisonedPrimary, reference: poisonedReference)
        let firstNonFinite = clean.firstIndex { !$0.isFinite }
        #expect(firstNonFinite == nil, "output sample \(firstNonFinite ?? -1) is not finite")
        // The last half second: the state has forgotten the bad sample.
        let tail = 72_000 ..< 96_000
        let drift = Self.meanSquare(clean[tail]) / Self.meanSquare(expected[tail])
        #expect(drift > 0.9 && drift < 1.1, "the last half second's power moved by a factor \(drift)")
    }

    @Test("finite audio up to +24 dBFS passes into the suppressor unchanged; beyond it is clamped, non-finite is 0")
    func admissibleCopy() {
        let input: [Float] = [0, -0.5, 1, 8, -15.5, 16, 17, -3e4, .nan, .infinity, .leastNonzeroMagnitude]
        var output = [Float](repeating: 7, count: input.count)
        input.withUnsafeBufferPointer { i in
            output.withUnsafeMutableBufferPointer { o in
                copyAdmissible(o.baseAddress!, from: i.baseAddress!, count: i.count)
            }
        }
        #expect(output == [0, -0.5, 1, 8, -15.5, 16, 16, -16, 0, 0, .leastNonzeroMagnitude])
    }
}
