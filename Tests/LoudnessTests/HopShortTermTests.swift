// The live loudness readings at the hops: the analyzer's momentary and short-term loudness equal
// libebur128's own readings of the same frames at every 100 ms hop (momentary bit for bit,
// short-term within 1e-9 LU), in every loudness mode, so the JSON `meter` lines carry the same
// values as reading the library's whole windows; between hops they hold the last hop's.

import CEbur128
import DSP
import Engine
import Loudness
import TerminalUI
import Testing

@Suite struct HopShortTermTests {
    static let rate = ShortTermScreenTests.rate
    static let hop = ShortTermScreenTests.hop

    /// Two channels of the short-term screen's trap programmes (each with the next), interleaved.
    static func pairs(seconds: Int) -> [(String, [Float])] {
        let programmes = ShortTermScreenTests.programmes(seconds: seconds)
        return programmes.enumerated().map { index, entry in
            let second = programmes[(index + 1) % programmes.count].1
            var interleaved = [Float](repeating: 0, count: 2 * entry.1.count)
            for frame in 0 ..< entry.1.count {
                interleaved[2 * frame] = entry.1[frame]
                interleaved[2 * frame + 1] = second[frame]
            }
            return (entry.0, interleaved)
        }
    }

    /// libebur128's meters for the programmes of `mode` over two channels (the old live path).
    static func references(_ mode: LoudnessMode) throws -> [LoudnessMeter] {
        let roles: [[LoudnessChannelRole]] =
            switch mode {
            case .perChannel: [[.left], [.left]]
            case .dualMono: [[.dualMono], [.dualMono]]
            case .stereo: [[.left, .right]]
            }
        return try roles.map { try LoudnessMeter(roles: $0, sampleRate: rate, truePeak: false) }
    }

    /// Feeds `frameCount` interleaved stereo frames to each reference meter (its own channels).
    static func feed(_ meters: [LoudnessMeter], _ block: UnsafePointer<Float>, frameCount: Int) throws {
        for (programme, meter) in meters.enumerated() {
            if meter.channelCount == 2 {
                try meter.add(block, frameCount: frameCount)
            } else {
                let channel = (0 ..< frameCount).map { block[2 * $0 + programme] }
                try channel.withUnsafeBufferPointer { try meter.add($0.baseAddress!, frameCount: frameCount) }
            }
        }
    }

    /// The `meter` JSON line of these programmes (no channels), as micmon prints it.
    static func meterLine(_ programmes: [ProgrammeLoudness], momentary: [Double], shortTerm: [Double]) -> String {
        var status = MeterStatus(elapsedSeconds: 0, sampleRate: rate)
        status.loudness = LoudnessDisplay(
            programmes: programmes.indices.map { index in
                let p = programmes[index]
                return LoudnessDisplay.Programme(
                    name: p.name, momentaryLUFS: momentary[index], shortTermLUFS: shortTerm[index],
                    integratedLUFS: p.integratedLUFS, loudnessRangeLU: p.loudnessRangeLU, truePeakDBTP: p.truePeakDBTP)
            })
        return JSONLines.meter(channels: [], status: status)
    }

    @Test func theLiveReadingsAreTheLibrarysAtEveryHop() throws {
        var sizes = TruePeakScreenTests.Noise(state: 91)
        for mode in LoudnessMode.allCases {
            for (name, interleaved) in Self.pairs(seconds: 8) {
                let analyzer = try TakeAnalyzer(channelNames: ["a", "b"], sampleRate: Self.rate, mode: mode)
                #expect(analyzer.readsLoudnessAtHops)
                let references = try Self.references(mode)
                try interleaved.withUnsafeBufferPointer { buffer in
                    for hop in 0 ..< interleaved.count / 2 / Self.hop {
                        let block = buffer.baseAddress! + 2 * hop * Self.hop
                        // Uneven calls inside the hop; between them the readings hold the last hop's.
                        func windows() -> [[Double]] {
                            analyzer.readings().programmes.map { [$0.momentaryLUFS, $0.shortTermLUFS] }
                        }
                        let held = windows()
                        let split = 1 + Int(abs(sizes.next()) * Float(Self.hop - 2))
                        try analyzer.add(block, frameCount: split)
                        #expect(windows() == held, "\(name), \(mode.rawValue), hop \(hop)")
                        try analyzer.add(block + 2 * split, frameCount: Self.hop - split)
                        try Self.feed(references, block, frameCount: Self.hop)

                        let live = analyzer.readings().programmes
                        let momentary = references.map(\.momentaryLUFS)
                        let shortTerm = references.map(\.shortTermLUFS)
                        let place = "\(name), \(mode.rawValue), hop \(hop + 1)"
                        #expect(live.map(\.momentaryLUFS) == momentary, "\(place)")
                        for (reading, reference) in zip(live.map(\.shortTermLUFS), shortTerm) {
                            let same = reading == reference || abs(reading - reference) <= 1e-9
                            #expect(same, "\(place): \(reading) against \(reference) LUFS")
                        }
                        let old = Self.meterLine(live, momentary: momentary, shortTerm: shortTerm)
                        let new = Self.meterLine(
                            live, momentary: live.map(\.momentaryLUFS), shortTerm: live.map(\.shortTermLUFS))
                        #expect(new == old, "\(place)")
                    }
                }
            }
        }
    }

    /// The short-term envelope of `report --svg` (a point at each hop) is the library's
    /// short-term loudness at each hop, to a Float's precision (one unit in the last place: the
    /// two sums round apart by 1e-12 relative), in every mode.
    @Test func theEnvelopeIsTheLibrarysAtEveryHop() throws {
        for mode in LoudnessMode.allCases {
            for (name, interleaved) in Self.pairs(seconds: 5) {
                let analyzer = try TakeAnalyzer(
                    channelNames: ["a", "b"], sampleRate: Self.rate, mode: mode, keepsEnvelope: true)
                let references = try Self.references(mode)
                var expected = [[Float]](repeating: [], count: references.count)
                let hops = interleaved.count / 2 / Self.hop
                try interleaved.withUnsafeBufferPointer { buffer in
                    try analyzer.add(buffer.baseAddress!, frameCount: hops * Self.hop)
                    for hop in 0 ..< hops {
                        try Self.feed(references, buffer.baseAddress! + 2 * hop * Self.hop, frameCount: Self.hop)
                        for (index, meter) in references.enumerated() {
                            expected[index].append(Float(meter.shortTermLUFS))
                        }
                    }
                }
                let envelopes = analyzer.result().programmes.map(\.shortTermEnvelope)
                #expect(envelopes.map(\.count) == expected.map(\.count), "\(name), \(mode.rawValue)")
                for (envelope, reference) in zip(envelopes, expected) {
                    for (point, (got, want)) in zip(envelope, reference).enumerated() {
                        let same = got == want || got.nextUp == want || got.nextDown == want
                        #expect(same, "\(name), \(mode.rawValue), point \(point): \(got) against \(want)")
                    }
                }
            }
        }
    }

    /// The take's final readings (the summary's, `micmon report`'s) stay the library's own at
    /// the last frame, also when the take ends inside a hop.
    @Test func theFinalReadingsAreTheLibrarysAtTheLastFrame() throws {
        let (_, interleaved) = Self.pairs(seconds: 5)[1]
        let frames = interleaved.count / 2 - 1234
        let analyzer = try TakeAnalyzer(channelNames: ["a", "b"], sampleRate: Self.rate, mode: .perChannel)
        let references = try Self.references(.perChannel)
        try interleaved.withUnsafeBufferPointer { buffer in
            try analyzer.add(buffer.baseAddress!, frameCount: frames)
            try Self.feed(references, buffer.baseAddress!, frameCount: frames)
        }
        let result = analyzer.result()
        #expect(result.programmes.map(\.momentaryLUFS) == references.map(\.momentaryLUFS))
        #expect(result.programmes.map(\.shortTermLUFS) == references.map(\.shortTermLUFS))
        #expect(result.programmes.map(\.integratedLUFS) == references.map(\.integratedLUFS))
    }

    /// Where libebur128's 100 ms window is not its hop (11 025 Hz: 1 102 against 1 103 frames),
    /// the readings are the library's whole windows at the last frame.
    @Test func anOddRateReadsTheWholeWindows() throws {
        let rate = 11025
        let analyzer = try TakeAnalyzer(channelNames: ["a"], sampleRate: rate)
        #expect(!analyzer.readsLoudnessAtHops)
        let meter = try LoudnessMeter(roles: [.left], sampleRate: rate, truePeak: false)
        var noise = TruePeakScreenTests.Noise(state: 5)
        let samples = (0 ..< 2 * rate + 77).map { _ in 0.3 * noise.next() }
        try samples.withUnsafeBufferPointer { buffer in
            try analyzer.add(buffer.baseAddress!, frameCount: buffer.count)
            try meter.add(buffer.baseAddress!, frameCount: buffer.count)
        }
        let live = analyzer.readings().programmes[0]
        #expect(live.momentaryLUFS == meter.momentaryLUFS)
        #expect(live.shortTermLUFS == meter.shortTermLUFS)
    }
}
