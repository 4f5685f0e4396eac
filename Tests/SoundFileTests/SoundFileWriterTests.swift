import Foundation
import Glibc
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

    // MARK: Creating the file: once, exclusively, never through what is there

    static let format = AudioFileFormat(container: .wav, encoding: .float)

    func folder() -> String {
        let path = NSTemporaryDirectory() + "micmon-writer-create-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func contents(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    func kind(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
    }

    /// A short take through a writer at `path`; returns the frames read back from `path`.
    func writeShortTake(_ path: String, replacesExisting: Bool) throws -> Int {
        let writer = try SoundFileWriter(
            path: path, format: Self.format, sampleRate: 48000, channelCount: 2, replacesExisting: replacesExisting)
        let samples = [Float](repeating: 0.25, count: 2 * 480)
        try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
        try writer.close()
        return Int(try SoundFileReader(path: path).frameCount)
    }

    /// Issue 23 defects 2 and 3 at their cause: the writer opened FILE with truncation
    /// (`sf_open`), so whatever was there (a file, what a link pointed at) was overwritten.
    @Test("without replacesExisting anything at the path is refused and left as it was")
    func exclusiveCreationRefusesWhatIsThere() throws {
        let base = folder()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let existing = base + "/existing.wav"
        try Data("an older take".utf8).write(to: URL(fileURLWithPath: existing))
        let victim = base + "/victim.txt"
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: victim))
        let link = base + "/link.wav"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
        let dangling = base + "/dangling.wav"
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: base + "/missing.wav")
        for path in [existing, link, dangling] {
            var refusal: SoundFileError?
            do { _ = try writeShortTake(path, replacesExisting: false) } catch let error as SoundFileError {
                refusal = error
            }
            #expect(refusal?.isAlreadyThere == true, "\(path): \(String(describing: refusal))")
        }
        #expect(contents(existing) == "an older take")
        #expect(contents(victim) == "someone else's")
        #expect(kind(link) == S_IFLNK && kind(dangling) == S_IFLNK)
        #expect(kind(base + "/missing.wav") == nil)
    }

    @Test("replacesExisting replaces a regular file or a symbolic link itself, never what the link points at")
    func replacingReplacesTheEntry() throws {
        let base = folder()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let existing = base + "/existing.wav"
        try Data("an older take".utf8).write(to: URL(fileURLWithPath: existing))
        let victim = base + "/victim.txt"
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: victim))
        let link = base + "/link.wav"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
        let dangling = base + "/dangling.wav"
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: base + "/missing.wav")
        for path in [existing, link, dangling, base + "/new.wav"] {
            #expect(try writeShortTake(path, replacesExisting: true) == 480)
            #expect(kind(path) == S_IFREG)
        }
        #expect(contents(victim) == "someone else's")
        #expect(kind(base + "/missing.wav") == nil)
        let names = try FileManager.default.contentsOfDirectory(atPath: base).sorted()
        #expect(names == ["dangling.wav", "existing.wav", "link.wav", "new.wav", "victim.txt"])
    }

    @Test("a directory, a FIFO, a device or a link to one is refused, with or without replacesExisting, at once")
    func onlyRegularFilesAreReplaced() throws {
        let base = folder()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let directory = base + "/directory.wav"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let fifo = base + "/fifo.wav"
        #expect(mkfifo(fifo, 0o644) == 0)
        let device = base + "/null.wav"
        try FileManager.default.createSymbolicLink(atPath: device, withDestinationPath: "/dev/null")
        let directoryLink = base + "/folder-link.wav"
        try FileManager.default.createSymbolicLink(atPath: directoryLink, withDestinationPath: directory)
        let before = try FileManager.default.contentsOfDirectory(atPath: base).sorted()
        for path in [directory, fifo, device, directoryLink] {
            for replaces in [false, true] {
                #expect(throws: SoundFileError.self, "\(path) replaces \(replaces)") {
                    try writeShortTake(path, replacesExisting: replaces)
                }
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: base).sorted() == before)
        #expect(kind(directory) == S_IFDIR && kind(fifo) == S_IFIFO)
        #expect(kind(device) == S_IFLNK && kind(directoryLink) == S_IFLNK)
        #expect(kind("/dev/null") == S_IFCHR)
    }

    @Test("the file is the one the writer created, kept open: moved away mid-take, it still gets every frame")
    func keptOpen() throws {
        let base = folder()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let path = base + "/take.wav"
        let writer = try SoundFileWriter(path: path, format: Self.format, sampleRate: 48000, channelCount: 2)
        #expect(rename(path, base + "/moved.wav") == 0)
        let samples = [Float](repeating: 0.25, count: 2 * 480)
        try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
        try writer.close()
        #expect(kind(path) == nil)
        #expect(try SoundFileReader(path: base + "/moved.wav").frameCount == 480)
    }
}
