import Foundation
import SoundFile
import Testing

/// `sync()`: the header rewritten and the data flushed, so an open take reads back in full.
@Suite("Sound file sync")
struct SoundFileSyncTests {
    @Test("after sync() a take still open reads back every frame written")
    func syncedTakeReadsBack() throws {
        do {
            let path = NSTemporaryDirectory() + "micmon-sync-\(UUID().uuidString).w64"
            defer { try? FileManager.default.removeItem(atPath: path) }
            let writer = try SoundFileWriter(
                path: path, format: AudioFileFormat(container: .w64, encoding: .float), sampleRate: 48000,
                channelCount: 2)
            let samples = (0 ..< 2 * 4800).map { Float($0) / 16384 }
            try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
            try writer.sync()
            let reader = try SoundFileReader(path: path)
            #expect(reader.frameCount == 4800)
            #expect(reader.readAllFloats() == samples)
            try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
            try writer.sync()
            #expect(try SoundFileReader(path: path).frameCount == 9600)
            try writer.close()
            try writer.sync()  // after close: nothing to do, no error
        }
    }
}
