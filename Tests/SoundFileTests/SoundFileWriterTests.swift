import Foundation
import SoundFile
import Testing

/// What `SoundFileWriter` leaves on disk, without a server.
@Suite("Sound file writer")
struct SoundFileWriterTests {
    /// The bytes of a take of `frames` stereo frames of a ramp under ±0.5, written as `format`.
    func writeTake(_ format: AudioFileFormat, frames: Int = 4096) throws -> (
        bytes: [UInt8], hadPeak: Bool, back: [Float]
    ) {
        let path = NSTemporaryDirectory() + "micmon-writer-\(UUID().uuidString).\(format.container.fileExtension)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try SoundFileWriter(path: path, format: format, sampleRate: 48000, channelCount: 2)
        let hadPeak = writer.hasPeakChunk
        let samples = (0 ..< frames * 2).map { Self.sample($0, of: frames * 2) }
        try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
        writer.updateHeader()
        try writer.close()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        return (bytes, hadPeak, try SoundFileReader(path: path).readAllFloats())
    }

    /// Sample `index` of the ramp: left rising, right falling, |x| < 0.5.
    static func sample(_ index: Int, of count: Int) -> Float {
        let sign: Float = index % 2 == 0 ? 1 : -1
        return sign * Float(index / 2) / Float(count)
    }

    func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        return bytes.indices.dropLast(needle.count - 1).contains {
            bytes[$0 ..< $0 + needle.count].elementsEqual(needle)
        }
    }

    /// libsndfile 1.2 turns the PEAK chunk *on* when asked to turn it off for a file that had
    /// none (RF64, which every .wav take is opened as); the writer then scanned every buffer.
    @Test(
        "float takes carry no PEAK chunk in any container, and keep every sample",
        arguments: [ContainerFormat.wav, .rf64, .w64, .caf])
    func noPeakChunk(_ container: ContainerFormat) throws {
        let take = try writeTake(AudioFileFormat(container: container, encoding: .float))
        let writerKeptPeak = take.hadPeak
        let fileHasPeakChunk = contains(take.bytes, "PEAK") || contains(take.bytes, "peak")
        let samplesBack = take.back.count
        let firstWrongSample = take.back.enumerated().first { $1 != Self.sample($0, of: 4096 * 2) }?.offset
        #expect(!writerKeptPeak)
        #expect(!fileHasPeakChunk)
        #expect(samplesBack == 4096 * 2)
        #expect(firstWrongSample == nil)
    }
}
