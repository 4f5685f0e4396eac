import CSndFile

/// Reads a sound file with libsndfile. One thread at a time.
public final class SoundFileReader {
    public let path: String
    public let frameCount: Int64
    public let sampleRate: Int
    public let channelCount: Int
    /// libsndfile's major format and subtype bits.
    public let formatCode: Int32
    private var file: OpaquePointer?

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
        return ContainerFormat.allCases.first { $0.majorFormat == major }
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

    /// Reads the whole file as interleaved floats (for tests and offline tools).
    public func readAllFloats() -> [Float] {
        var samples = [Float](repeating: 0, count: Int(frameCount) * channelCount)
        let frames = samples.withUnsafeMutableBufferPointer { read(into: $0) }
        samples.removeLast(samples.count - frames * channelCount)
        return samples
    }

    /// Reads the whole file as interleaved left-aligned integers.
    public func readAllInts() -> [Int32] {
        var samples = [Int32](repeating: 0, count: Int(frameCount) * channelCount)
        let frames = samples.withUnsafeMutableBufferPointer { read(into: $0) }
        samples.removeLast(samples.count - frames * channelCount)
        return samples
    }

    public func close() {
        if let file { sf_close(file) }
        file = nil
    }
}
