import DSP
import Testing

@Suite("Reference signal")
struct ReferenceSignalTests {
    func frames(from start: UInt64, count: Int) -> [Float] {
        (0 ..< count).flatMap { i in
            [
                ReferenceSignal.value(channel: 0, frame: start + UInt64(i)),
                ReferenceSignal.value(channel: 1, frame: start + UInt64(i)),
            ]
        }
    }

    @Test func valuesAreOnTheirGrids() {
        for n in UInt64(0) ..< 100_000 {
            let ramp = ReferenceSignal.value(channel: 0, frame: n)
            let hash = ReferenceSignal.value(channel: 1, frame: n)
            #expect(ramp * 32768 == (ramp * 32768).rounded() && ramp >= -1 && ramp < 1)
            #expect(hash * 8_388_608 == (hash * 8_388_608).rounded() && hash >= -1 && hash < 1)
        }
    }

    @Test func aTakeIsLocatedAndMatches() {
        let start: UInt64 = 5_000_123
        let take = frames(from: start, count: 10_000)
        let match = take.withUnsafeBufferPointer { ReferenceSignal.match(interleaved: $0) }
        #expect(match.startFrame == start)
        #expect(match.mismatchedFrames == 0)
        #expect(match.firstMismatch == nil)
    }

    @Test func aChangedSampleIsCounted() {
        var take = frames(from: 77, count: 1000)
        take[2 * 500 + 1] += 1.0 / 8_388_608
        let match = take.withUnsafeBufferPointer { ReferenceSignal.match(interleaved: $0) }
        #expect(match.startFrame == 77)
        #expect(match.mismatchedFrames == 1)
        #expect(match.firstMismatch == 500)
    }

    @Test func aRepeatedPeriodIsCaught() {
        let take = frames(from: 1000, count: 256) + frames(from: 1128, count: 256)  // 128 frames repeated
        let match = take.withUnsafeBufferPointer { ReferenceSignal.match(interleaved: $0) }
        #expect(match.startFrame == 1000)
        #expect(match.mismatchedFrames == 256)
        #expect(match.firstMismatch == 256)
    }
}
