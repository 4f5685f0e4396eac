import Foundation
import SoundFile
import Testing

/// The `bext` chunk and the cue chunks as libsndfile 1.2.0 takes them (docs/recording.md).
@Suite("Broadcast info and cue points")
struct BroadcastInfoTests {
    static let info = BroadcastInfo(
        description: "studio A, take 3", originator: "micmon 0.1.0", originationDate: "2026-12-01",
        originationTime: "15:04:05", timeReference: 2_714_640_000 + 5_000_000_000,
        codingHistory: "A=PCM,F=48000,W=32,M=stereo,T=micmon 0.1.0 float; in_1 from a:out_1")

    static func path(_ name: String) -> String {
        NSTemporaryDirectory() + "micmon-bext-\(UUID().uuidString)-\(name)"
    }

    static func write(_ path: String, _ container: ContainerFormat, frames: Int = 4800) throws -> SoundFileWriter {
        let writer = try SoundFileWriter(
            path: path, format: AudioFileFormat(container: container, encoding: .pcm24), sampleRate: 48000,
            channelCount: 2)
        try writer.setBroadcastInfo(info)
        let samples = [Float](repeating: 0.125, count: frames * 2)
        try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
        return writer
    }

    @Test(
        "wav and rf64 carry every field, 64-bit TimeReference included; the header updates keep it",
        arguments: [
            ContainerFormat.wav, .rf64,
        ])
    func roundTrip(_ container: ContainerFormat) throws {
        let path = Self.path("take.\(container.rawValue)")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try Self.write(path, container)
        // Still open, as a killed take would leave it: the header rewritten by sync() holds it.
        try writer.sync()
        let open = try #require(try SoundFileReader(path: path).broadcastInfo)
        #expect(open.timeReference == Self.info.timeReference)
        try writer.close()
        let read = try #require(try SoundFileReader(path: path).broadcastInfo)
        #expect(read.description == Self.info.description)
        #expect(read.originator == Self.info.originator)
        #expect(read.originationDate == Self.info.originationDate)
        #expect(read.originationTime == Self.info.originationTime)
        #expect(read.timeReference == Self.info.timeReference)
        // libsndfile appends a line of its own after ours.
        #expect(read.codingHistory.hasPrefix(Self.info.codingHistory + "\r\n"))
        #expect(read.codingHistory.contains("T=libsndfile"))
        #expect(try SoundFileReader(path: path).frameCount == 4800)
    }

    @Test("after the first frame a bext is refused with libsndfile's reason; w64 has none")
    func refusals() throws {
        let path = Self.path("late.wav")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try SoundFileWriter(
            path: path, format: AudioFileFormat(container: .wav, encoding: .float), sampleRate: 48000, channelCount: 1)
        let samples = [Float](repeating: 0, count: 480)
        try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
        #expect(throws: SoundFileError.self) { try writer.setBroadcastInfo(Self.info) }
        try writer.close()
        let w64 = Self.path("take.w64")
        defer { try? FileManager.default.removeItem(atPath: w64) }
        #expect(!ContainerFormat.w64.carriesBroadcastInfo)
        let other = try SoundFileWriter(
            path: w64, format: AudioFileFormat(container: .w64, encoding: .float), sampleRate: 48000, channelCount: 1)
        #expect(throws: SoundFileError.self) { try other.setBroadcastInfo(Self.info) }
        try other.close()
    }

    @Test("cues appended at close: libsndfile reads them from a wav take; an rf64 take's ds64 size covers them")
    func cues() throws {
        let points = [
            CuePoint(id: 1, frame: 100, label: "mark: applause"),
            CuePoint(id: 2, frame: 2400, label: "drop 256 frames"),
            CuePoint(id: 3, frame: 4799),
        ]
        for container in [ContainerFormat.wav, .rf64] {
            let path = Self.path("cues.\(container.rawValue)")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let writer = try Self.write(path, container, frames: 4801)
            try writer.close(cues: points)
            let reader = try SoundFileReader(path: path)
            #expect(reader.frameCount == 4801, "\(container)")
            #expect(reader.broadcastInfo?.description == Self.info.description, "\(container)")
            let bytes = try #require(FileManager.default.contents(atPath: path))
            let marker = String(decoding: bytes[0 ..< 4], as: UTF8.self)
            let riffSize =
                marker == "RIFF"
                ? bytes[4 ..< 8].reversed().reduce(0) { $0 << 8 | Int($1) }
                : bytes[20 ..< 28].reversed().reduce(0) { $0 << 8 | Int($1) }
            #expect(riffSize == bytes.count - 8, "\(container): the RIFF size covers the appended chunks")
            let cue = try #require(Self.find("cue ", in: bytes), "\(container): no cue chunk")
            #expect(Self.integer(bytes, at: cue + 8) == 3)
            #expect((0 ..< 3).map { Self.integer(bytes, at: cue + 12 + $0 * 24 + 20) } == [100, 2400, 4799])
            #expect(Self.find("labl", in: bytes) != nil)
            if container == .wav {
                #expect(reader.cuePoints.map(\.frame) == [100, 2400, 4799])
                #expect(reader.cuePoints.map(\.id) == [1, 2, 3])
            }
        }
    }

    @Test("more cue points than libsndfile reads are cut to its limit")
    func cueLimit() {
        let points = (0 ..< 3000).map { CuePoint(id: UInt32($0 + 1), frame: UInt32($0)) }
        let bytes = CueChunks.bytes(points)
        #expect(Self.integer(bytes, at: 8) == CueChunks.pointLimit)
        #expect(CueChunks.bytes([]).isEmpty)
    }

    static func find(_ id: String, in bytes: Data) -> Int? {
        let pattern = Array(id.utf8)
        let array = [UInt8](bytes)
        guard array.count >= 4 else { return nil }
        return (0 ... array.count - 4).last { Array(array[$0 ..< $0 + 4]) == pattern }
    }

    static func integer(_ bytes: some Collection<UInt8>, at offset: Int) -> Int {
        let array = Array(bytes)
        return (0 ..< 4).reduce(0) { $0 | Int(array[offset + $1]) << (8 * $1) }
    }
}
