import Testing

@testable import DSP

/// The meters count NaN and ±∞ samples apart from the clips, on the per-channel path and the
/// stereo fast path alike, and read finite input exactly as before.
@Suite("Meters count non-finite samples apart")
struct MeterNonFiniteTests {
    static let coefficients = MeterCoefficients(sampleRate: 48000)

    /// 0.25 everywhere, with NaN, +∞, −∞ and a signalling NaN at `places`, and a finite 1e30.
    static func signal(count: Int, places: [Int]) -> [Float] {
        var signal = [Float](repeating: 0.25, count: count)
        let specials: [Float] = [.nan, .infinity, -.infinity, .signalingNaN]
        for (k, place) in places.enumerated() { signal[place] = specials[k % specials.count] }
        signal[count / 2] = 1e30
        return signal
    }

    @Test("the per-channel path counts each NaN and ±∞, and no finite sample")
    func perChannel() {
        let signal = Self.signal(count: 4800, places: [10, 200, 3000, 4799])
        var meter = ChannelMeter()
        signal.withUnsafeBufferPointer {
            meter.process($0.baseAddress!, count: $0.count, coefficients: Self.coefficients)
        }
        let reading = meter.reading
        #expect(reading.nonFiniteCount == 4)
        // 1e30 is a finite clip; the non-finite ones are clips too, as before.
        #expect(reading.clipCount == 5)
        #expect(reading.maxPeak == Double(Float(1e30)))
    }

    @Test("the stereo path counts them per channel, in every run of its fast loop", arguments: [1, 64, 256, 5000])
    func stereo(period: Int) {
        let frames = 3 * MeterCoefficients.fastRunFrames + 17
        let left = Self.signal(count: frames, places: [5, 4096, frames - 1])
        var right = [Float](repeating: -0.5, count: frames)
        right[9000] = .nan
        let meters = UnsafeMutablePointer<ChannelMeter>.allocate(capacity: 2)
        defer { meters.deallocate() }
        meters.initialize(repeating: ChannelMeter(), count: 2)
        var offset = 0
        while offset < frames {
            let n = min(period, frames - offset)
            left.withUnsafeBufferPointer { l in
                right.withUnsafeBufferPointer { r in
                    ChannelMeter.processStereo(
                        meters, left: l.baseAddress! + offset, right: r.baseAddress! + offset, count: n,
                        coefficients: Self.coefficients)
                }
            }
            offset += n
        }
        #expect(meters[0].nonFiniteCount == 3)
        #expect(meters[1].nonFiniteCount == 1)
        #expect(meters[0].reading.nonFiniteCount == 3)
    }

    @Test("finite input never counts")
    func finiteNeverCounts() {
        var signal = [Float](repeating: -0.999, count: 10_000)
        for i in stride(from: 0, to: signal.count, by: 7) { signal[i] = 1.5 * Float(1 + i % 3) }
        var meter = ChannelMeter()
        signal.withUnsafeBufferPointer {
            meter.process($0.baseAddress!, count: $0.count, coefficients: Self.coefficients)
        }
        #expect(meter.nonFiniteCount == 0)
        let meters = UnsafeMutablePointer<ChannelMeter>.allocate(capacity: 2)
        defer { meters.deallocate() }
        meters.initialize(repeating: ChannelMeter(), count: 2)
        signal.withUnsafeBufferPointer { s in
            ChannelMeter.processStereo(
                meters, left: s.baseAddress!, right: s.baseAddress!, count: s.count, coefficients: Self.coefficients)
        }
        #expect(meters[0].nonFiniteCount == 0 && meters[1].nonFiniteCount == 0)
    }
}
