import Foundation
import Glibc
import SoundFile
import Testing

/// When and how `SoundFileWriter` puts its file at the path: a new name that never replaces,
/// a replacement that never takes a file another writer holds, and a file that appears only
/// complete (`Placement.atClose`).
@Suite("Sound file writer: placing the file")
struct SoundFilePlacementTests {
    let format = AudioFileFormat(container: .wav, encoding: .float)

    func folder() -> String {
        let path = NSTemporaryDirectory() + "micmon-placement-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func names(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    func writeFrames(_ writer: SoundFileWriter, _ count: Int) throws {
        let samples = [Float](repeating: 0.25, count: count * 2)
        try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
    }

    @Test("at close: nothing at the path until close, then the whole file; no temporary name left")
    func appearsAtClose() throws {
        let folder = folder()
        let path = folder + "/out.wav"
        let writer = try SoundFileWriter(
            path: path, format: format, sampleRate: 48000, channelCount: 2, placement: .atClose)
        try writeFrames(writer, 1000)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(names(folder).count == 1 && names(folder)[0].hasPrefix(".out.wav.micmon-"))
        try writer.close()
        #expect(names(folder) == ["out.wav"])
        #expect(try SoundFileReader(path: path).frameCount == 1000)
    }

    @Test("at close, discarded: the path and the folder as they were")
    func discardLeavesNothing() throws {
        let folder = folder()
        let path = folder + "/out.wav"
        try Data("older".utf8).write(to: URL(fileURLWithPath: path))
        let writer = try SoundFileWriter(
            path: path, format: format, sampleRate: 48000, channelCount: 2, replacesExisting: true,
            placement: .atClose)
        try writeFrames(writer, 100)
        writer.discard()
        #expect(names(folder) == ["out.wav"])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "older")
    }

    @Test("at close, something appeared at the path meanwhile: refused (already there), it is kept")
    func appearedMeanwhileIsKept() throws {
        let folder = folder()
        let path = folder + "/out.wav"
        let writer = try SoundFileWriter(
            path: path, format: format, sampleRate: 48000, channelCount: 2, placement: .atClose)
        try writeFrames(writer, 100)
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: SoundFileError.self) { try writer.close() }
        do { try writer.close() } catch { Issue.record("a second close threw \(error)") }
        #expect(names(folder) == ["out.wav"])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "someone else's")
    }

    @Test("replacing a file another writer holds: refused as in use; both files intact")
    func heldFileIsNotReplaced() throws {
        let folder = folder()
        let path = folder + "/take.wav"
        let first = try SoundFileWriter(path: path, format: format, sampleRate: 48000, channelCount: 2)
        try writeFrames(first, 500)
        var refusal: SoundFileError?
        do {
            _ = try SoundFileWriter(
                path: path, format: format, sampleRate: 48000, channelCount: 2, replacesExisting: true)
        } catch { refusal = error }
        #expect(refusal?.isInUse == true, "\(String(describing: refusal))")
        try first.close()
        #expect(names(folder) == ["take.wav"])
        #expect(try SoundFileReader(path: path).frameCount == 500)
        // Once the first writer has closed it, the file may be replaced.
        let second = try SoundFileWriter(
            path: path, format: format, sampleRate: 48000, channelCount: 2, replacesExisting: true)
        try writeFrames(second, 200)
        try second.close()
        #expect(try SoundFileReader(path: path).frameCount == 200)
    }
}
