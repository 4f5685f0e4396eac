// The capture kernel's N-channel interleave (`CaptureKernel.interleave`: the stereo shuffle,
// the 4 × 4 transpose of `interleaveQuad` and the sample-by-sample rest) against the plain
// definition destination[frame · N + channel] = source[channel][start + frame], bit for bit.

import Testing

@testable import Engine

@Suite struct Interleave {
    /// Bit patterns that must survive the move: NaNs with payloads, ±∞, subnormals, ±0, ±1.
    static let specials: [UInt32] = [
        0x7FC0_0001, 0xFFBF_FFFF, 0x7F80_0000, 0xFF80_0000, 0x0000_0001, 0x8000_0001, 0, 0x8000_0000,
        0x3F80_0000, 0xBF80_0000,
    ]

    /// Interleaves `frameCount` frames from `start` of `channelCount` channels both ways; true when
    /// every float's bits agree (and nothing past the end was written).
    static func matches(channelCount: Int, start: Int, frameCount: Int, seed: UInt64) -> Bool {
        var g = SplitMix64(state: seed)
        let length = start + frameCount
        let sources = (0 ..< channelCount).map { _ -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: max(length, 1))
            for i in 0 ..< length {
                let r = g.next()
                let bits = r % 5 == 0 ? specials[Int(r >> 8) % specials.count] : UInt32(truncatingIfNeeded: r >> 16)
                p[i] = Float(bitPattern: bits)
            }
            return p
        }
        defer { for source in sources { source.deallocate() } }
        let pointers = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channelCount)
        defer { pointers.deallocate() }
        for (k, p) in sources.enumerated() { pointers[k] = UnsafePointer(p) }
        let total = frameCount * channelCount
        let guardBits: UInt32 = 0xDEAD_BEEF
        let out = UnsafeMutableBufferPointer<Float>.allocate(capacity: total + 8)
        defer { out.deallocate() }
        out.initialize(repeating: Float(bitPattern: guardBits))
        CaptureKernel.interleave(
            pointers, channelCount: channelCount, into: UnsafeMutableBufferPointer(rebasing: out[0 ..< total]),
            fromFrame: start, frameCount: frameCount)
        for frame in 0 ..< frameCount {
            for channel in 0 ..< channelCount
            where out[frame * channelCount + channel].bitPattern != sources[channel][start + frame].bitPattern {
                Issue.record("\(channelCount) channels, start \(start): frame \(frame) channel \(channel) differs")
                return false
            }
        }
        for i in total ..< total + 8 where out[i].bitPattern != guardBits {
            Issue.record("\(channelCount) channels: wrote past the end")
            return false
        }
        return true
    }

    @Test("1 to 9, 16, 31, 32 and 64 channels, frame counts 0 to 9, 16, 17, 8192, from several starts")
    func matchesDefinition() {
        var seed: UInt64 = 1
        for channelCount in Array(1 ... 9) + [16, 31, 32, 64] {
            for frameCount in Array(0 ... 9) + [16, 17, 8192] {
                for start in [0, 1, 3, 5] {
                    seed += 1
                    let same = Self.matches(
                        channelCount: channelCount, start: start, frameCount: frameCount, seed: seed)
                    #expect(same, "\(channelCount) channels, \(frameCount) frames from \(start)")
                }
            }
        }
    }
}

/// SplitMix64, for replayable test data (the interleave and clip-scan tests).
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
