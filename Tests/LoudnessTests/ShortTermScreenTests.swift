// The short-term screen: its bound is never below libebur128's own short-term reading at any
// hop (programmes built to put the energy at the window's edges), it is tight enough on a steady
// signal to skip reads, and the take's highest short-term loudness through the screen is the one
// reading every hop gives, bit for bit.

import CEbur128
import Engine
import Loudness
import Testing

@Suite struct ShortTermScreenTests {
    static let rate = 48000
    static let hop = 4800

    /// Mono test programmes of `seconds`, each a different trap: lone 100–200 ms bursts 3.2 s
    /// apart (the energy sits in the window's oldest hops), noise whose level jumps every 0.7 s,
    /// a swelling tone, silence then noise.
    static func programmes(seconds: Int) -> [(String, [Float])] {
        let frames = rate * seconds
        var noise = TruePeakScreenTests.Noise(state: 0x2545_F491_4F6C_DD1D)
        func make(_ sample: (Int) -> Float) -> [Float] { (0 ..< frames).map(sample) }
        return [
            (
                "lone bursts",
                make { frame in
                    let place = frame % (rate * 32 / 10)
                    let length = (frame / (rate * 32 / 10)) % 2 == 0 ? hop : 2 * hop
                    return place < length ? 0.8 * noise.next() : 0
                }
            ),
            ("level jumps", make { frame in Float(1 + (frame / (rate * 7 / 10)) % 5) * 0.15 * noise.next() }),
            (
                "swelling tone",
                make { frame in
                    let t = Float(frame) / Float(rate)
                    return (0.3 + 0.25 * sinf(2 * Float.pi * t / 11)) * sinf(2 * Float.pi * 997 * t)
                }
            ),
            ("silence then noise", make { frame in frame < frames / 2 ? 0 : 0.5 * noise.next() }),
        ]
    }

    @Test func theBoundIsNeverBelowTheReading() throws {
        for (name, samples) in Self.programmes(seconds: 12) {
            for roles in [[LoudnessChannelRole.left], [.dualMono]] {
                let meter = try LoudnessMeter(roles: roles, sampleRate: Self.rate, truePeak: false)
                var screen = ShortTermScreen()
                try samples.withUnsafeBufferPointer { buffer in
                    for hop in 1 ... samples.count / Self.hop {
                        try meter.add(buffer.baseAddress! + (hop - 1) * Self.hop, frameCount: Self.hop)
                        screen.noteMomentary(meter.momentaryLUFS)
                        let reading = meter.shortTermLUFS
                        guard hop >= 30, reading.isFinite else { continue }
                        #expect(screen.couldExceed(reading), "\(name), hop \(hop): \(reading) LUFS")
                    }
                }
            }
        }
    }

    @Test func aSteadyToneLeavesNoRoomAboveItsReading() throws {
        var samples = [Float](repeating: 0, count: 10 * Self.rate)
        for frame in samples.indices {
            let phase = 2 * Double.pi * 997 * Double(frame) / Double(Self.rate)
            samples[frame] = Float(0.5 * sin(phase))
        }
        let meter = try LoudnessMeter(roles: [.left], sampleRate: Self.rate, truePeak: false)
        var screen = ShortTermScreen()
        var skipped = 0
        try samples.withUnsafeBufferPointer { buffer in
            for hop in 1 ... samples.count / Self.hop {
                try meter.add(buffer.baseAddress! + (hop - 1) * Self.hop, frameCount: Self.hop)
                screen.noteMomentary(meter.momentaryLUFS)
                if hop >= 30 && !screen.couldExceed(meter.shortTermLUFS + 0.3) { skipped += 1 }
            }
        }
        // The bound sits 10·log10(32/30) ≈ 0.28 dB above a steady reading: every hop from 3 s on.
        #expect(skipped == samples.count / Self.hop - 29)
    }

    /// The analyzer's highest short-term loudness equals the highest of libebur128's readings at
    /// every hop from 3 s on, in every loudness mode, fed in uneven calls.
    @Test func theHighestShortTermIsTheEveryHopOne() throws {
        let programmes = Self.programmes(seconds: 12)
        var sizes = TruePeakScreenTests.Noise(state: 77)
        for mode in LoudnessMode.allCases {
            for (index, (name, first)) in programmes.enumerated() {
                let second = programmes[(index + 1) % programmes.count].1
                var interleaved = [Float](repeating: 0, count: 2 * first.count)
                for frame in 0 ..< first.count {
                    interleaved[2 * frame] = first[frame]
                    interleaved[2 * frame + 1] = second[frame]
                }
                let analyzer = try TakeAnalyzer(channelNames: ["a", "b"], sampleRate: Self.rate, mode: mode)
                let roles: [[LoudnessChannelRole]] =
                    switch mode {
                    case .perChannel: [[.left], [.left]]
                    case .dualMono: [[.dualMono], [.dualMono]]
                    case .stereo: [[.left, .right]]
                    }
                let references = try roles.map { try LoudnessMeter(roles: $0, sampleRate: Self.rate, truePeak: false) }
                var highest = references.map { _ in -Double.infinity }
                try interleaved.withUnsafeBufferPointer { buffer in
                    var done = 0
                    while done < first.count {
                        let count = min(first.count - done, 1 + Int(abs(sizes.next()) * 9000))
                        try analyzer.add(buffer.baseAddress! + 2 * done, frameCount: count)
                        done += count
                    }
                    for hop in 1 ... first.count / Self.hop {
                        let block = buffer.baseAddress! + 2 * (hop - 1) * Self.hop
                        for (programme, meter) in references.enumerated() {
                            if meter.channelCount == 2 {
                                try meter.add(block, frameCount: Self.hop)
                            } else {
                                let channel = (0 ..< Self.hop).map { block[2 * $0 + programme] }
                                try channel.withUnsafeBufferPointer {
                                    try meter.add($0.baseAddress!, frameCount: Self.hop)
                                }
                            }
                            if hop >= 30 { highest[programme] = max(highest[programme], meter.shortTermLUFS) }
                        }
                    }
                }
                let result = analyzer.result()
                #expect(
                    result.programmes.map(\.maxShortTermLUFS) == highest, "\(name) and the next, \(mode.rawValue)")
            }
        }
    }
}
