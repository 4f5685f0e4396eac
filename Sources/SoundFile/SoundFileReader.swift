import CSndFile
import Glibc

/// Reads a sound file with libsndfile. One thread at a time.
public final class SoundFileReader {
    public let path: String
    public let frameCount: Int64
    public let sampleRate: Int
    public let channelCount: Int
    /// libsndfile's major format and subtype bits.
    public let formatCode: Int32
    /// The open file (nil once closed); for the chunk queries in this module's other files.
    private(set) var file: OpaquePointer?

    public init(path: String) throws(SoundFileError) {
        self.path = path
        var info = SF_INFO()
        guard let handle = sf_open(path, Int32(SFM_READ), &info) else {
            throw SoundFileError.fromLibrary(.open, path: path, file: nil)
        }
        file = handle
        frameCount = info.frames
        sampleRate = Int(info.samplerate)
        channelCount = Int(info.channels)
        formatCode = info.format
    }

    deinit {
        if let file { sf_close(file) }
    }

    /// The container, if it is one micmon writes.
    public var container: ContainerFormat? {
        let major = formatCode & Int32(SF_FORMAT_TYPEMASK)
        // A WAV written through RF64 auto-downgrade is WAVE_FORMAT_EXTENSIBLE.
        if major == Int32(SF_FORMAT_WAVEX) { return .wav }
        let subtype = formatCode & Int32(SF_FORMAT_SUBMASK)
        // Ogg holds Vorbis or Opus: the codec tells the two apart.
        return ContainerFormat.allCases.first {
            $0.majorFormat == major && ($0.codecSubtype == nil || $0.codecSubtype == subtype)
        }
    }

    /// The encoding, if it is one micmon writes.
    public var encoding: SampleEncoding? {
        let subtype = formatCode & Int32(SF_FORMAT_SUBMASK)
        return SampleEncoding.allCases.first { $0.subtype == subtype }
    }

    /// Reads up to `buffer.count / channelCount` interleaved frames as floats; returns frames read.
    public func read(into buffer: UnsafeMutableBufferPointer<Float>) -> Int {
        guard let file, let base = buffer.baseAddress else { return 0 }
        return Int(sf_readf_float(file, base, Int64(buffer.count / channelCount)))
    }

    /// Reads interleaved frames as 32-bit integers (PCM data left-aligned, as libsndfile gives it).
    public func read(into buffer: UnsafeMutableBufferPointer<Int32>) -> Int {
        guard let file, let base = buffer.baseAddress else { return 0 }
        return Int(sf_readf_int(file, base, Int64(buffer.count / channelCount)))
    }

    /// Reads the rest of the file as interleaved floats (for tests and offline tools). Reads
    /// until libsndfile stops, so it also works when the header does not know the length (a
    /// FLAC stream cut short reports `SF_COUNT_MAX` frames).
    public func readAllFloats() -> [Float] { readAll(Float.self) { self.read(into: $0) } }

    /// Reads the rest of the file as interleaved left-aligned integers.
    public func readAllInts() -> [Int32] { readAll(Int32.self) { self.read(into: $0) } }

    private func readAll<Sample: BitwiseCopyable>(
        _: Sample.Type, _ readChunk: (UnsafeMutableBufferPointer<Sample>) -> Int
    ) -> [Sample] {
        let chunkFrames = 65536
        var samples: [Sample] = []
        let chunk = UnsafeMutableBufferPointer<Sample>.allocate(capacity: chunkFrames * channelCount)
        defer { chunk.deallocate() }
        while true {
            let frames = readChunk(chunk)
            if frames <= 0 { break }
            samples.append(contentsOf: chunk[0 ..< frames * channelCount])
        }
        return samples
    }

    /// Seeks back to the first frame (for looping). Returns false if libsndfile cannot seek.
    public func rewind() -> Bool {
        guard let file else { return false }
        return sf_seek(file, 0, SEEK_SET) == 0
    }

    public func close() {
        if let file { sf_close(file) }
        file = nil
    }
}
