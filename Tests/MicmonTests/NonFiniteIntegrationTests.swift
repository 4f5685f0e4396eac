import DSP
import Foundation
import Glibc
import SoundFile
import Testing

/// `micmon play` never sends a NaN or ±∞ to JACK: a JACK client recording its outputs gets 0 in
/// their place, every other sample (1e30 included) as in the file, and the summary counts them.
extension JackIntegrationTests.PlayIntegrationTests {
    @Test("a file holding NaN, ±∞ and 1e30 plays as 0 for each non-finite sample, counted in the summary")
    func nonFiniteSamplesPlayAsZero() throws {
        let count = 9600
        var samples = Self.referenceStereo(count)
        let poisoned: [(index: Int, value: Float)] = [
            (2 * 100, .nan), (2 * 101 + 1, .infinity), (2 * 2000, -.infinity), (2 * 3000 + 1, .nan),
            (2 * 4000, 1e30), (2 * 4001 + 1, -1e30),
        ]
        for (index, value) in poisoned { samples[index] = value }
        let path = TestEnvironment.scratchFolder("play-nonfinite") + "/poisoned.wav"
        try Self.writeFile(path, rate: try Self.serverRate(), channels: 2, samples: samples)
        let (left, right, result) = try Self.playAndRecord(path, recorderName: "precnan")
        #expect(result.exitCode == 0, "stderr: \(result.stderr)")
        try #require(left.count >= count, "only \(left.count) frames recorded")
        #expect(left.allSatisfy(\.isFinite) && right.allSatisfy(\.isFinite), "a non-finite sample reached JACK")
        var mismatches: [Int] = []
        for frame in 0 ..< count {
            let wantLeft = samples[2 * frame].isFinite ? samples[2 * frame] : 0
            let wantRight = samples[2 * frame + 1].isFinite ? samples[2 * frame + 1] : 0
            if left[frame].bitPattern != wantLeft.bitPattern || right[frame].bitPattern != wantRight.bitPattern {
                mismatches.append(frame)
            }
        }
        #expect(mismatches.isEmpty, "first mismatches at frames \(mismatches.prefix(8))")
        #expect(left[4000] == 1e30 && right[4001] == -1e30)
        let summary = result.stdout.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") } ?? ""
        #expect(summary.contains("\"non_finite_replaced\":4"), "\(summary)")
    }
}
