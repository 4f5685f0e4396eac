// `ChannelMeter.processChannels` (four channels per SIMD pass, then a pair, then one) against
// the per-channel `process`, bit for bit, over the random signals of `StereoPath`.

import Testing

@testable import DSP

@Suite struct ManyChannelPath {
    /// Meters `channels` in periods from `periods` (cycled) both ways; true when every channel's
    /// state matches bit for bit after every period.
    static func matches(_ channels: [[Float]], periods: [Int], coefficients c: MeterCoefficients) -> Bool {
        let count = channels.count
        let frames = channels[0].count
        var scalar = [ChannelMeter](repeating: ChannelMeter(), count: count)
        let lanes = UnsafeMutablePointer<ChannelMeter>.allocate(capacity: count)
        defer { lanes.deallocate() }
        lanes.initialize(repeating: ChannelMeter(), count: count)
        // Stable copies of the signals, so their addresses can be held across the loop.
        let storage = channels.map { signal -> UnsafeMutablePointer<Float> in
            let copy = UnsafeMutablePointer<Float>.allocate(capacity: signal.count)
            copy.initialize(from: signal, count: signal.count)
            return copy
        }
        defer { for copy in storage { copy.deallocate() } }
        let inputs = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: count)
        defer { inputs.deallocate() }
        var offset = 0
        var k = 0
        while offset < frames {
            let n = min(periods[k % periods.count], frames - offset)
            k += 1
            for channel in 0 ..< count {
                inputs[channel] = UnsafePointer(storage[channel] + offset)
                scalar[channel].process(storage[channel] + offset, count: n, coefficients: c)
            }
            ChannelMeter.processChannels(lanes, inputs: inputs, channelCount: count, count: n, coefficients: c)
            offset += n
            for channel in 0 ..< count where StereoPath.bits(scalar[channel]) != StereoPath.bits(lanes[channel]) {
                let text = "\(count) channels: channel \(channel) differs after frame \(offset) (period \(n))"
                Issue.record("\(text): per channel \(scalar[channel]), lanes \(lanes[channel])")
                return false
            }
        }
        return true
    }

    /// `count` signals of `frames` frames, each from its own seed.
    static func signals(_ count: Int, frames: Int, seed: UInt64) -> [[Float]] {
        (0 ..< count).map { StereoPath.signal(frames: frames, seed: seed &* 7919 &+ UInt64($0) &* 104_729 &+ 1) }
    }

    @Test(
        "every channel count from 1 to 9, every coefficient set: random signals with silence, clipping, NaN, ±∞, subnormals",
        arguments: 0 ..< 7)
    func matchesScalarPath(coefficientSet: Int) {
        let c = StereoPath.coefficientSets[coefficientSet]
        for count in 1 ... 9 {
            let channels = Self.signals(count, frames: 30_000, seed: UInt64(count * 10 + coefficientSet))
            for periods in [[32], [1], [3, 64, 5, 1000, 16, 31], [4096], [30_000]] {
                let same = Self.matches(channels, periods: periods, coefficients: c)
                #expect(same, "\(count) channels, periods \(periods)")
            }
        }
    }

    @Test("16 and 64 channels at 16-, 32- and 8192-frame periods", arguments: [16, 64])
    func matchesAtScale(count: Int) {
        let channels = Self.signals(count, frames: 20_000, seed: UInt64(count))
        for periods in [[16], [32], [8192]] {
            let same = Self.matches(channels, periods: periods, coefficients: StereoPath.coefficientSets[0])
            #expect(same, "\(count) channels, periods \(periods)")
        }
    }

    @Test("silence on some lanes and a full-scale clip on others, in the same pass")
    func mixedLanes() {
        let frames = 50_000
        let channels: [[Float]] = [
            [Float](repeating: 0, count: frames),
            (0 ..< frames).map { $0 % 100 == 0 ? 1 : 0.5 },
            (0 ..< frames).map { $0 == 20_000 ? .nan : Float.leastNonzeroMagnitude },
            (0 ..< frames).map { $0 < 1000 ? 0.9 : 0 },
            (0 ..< frames).map { $0 == 7 ? -.infinity : 0.25 },
        ]
        let same = Self.matches(channels, periods: [32, 4096], coefficients: StereoPath.coefficientSets[0])
        #expect(same)
    }
}
