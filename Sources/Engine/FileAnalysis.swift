// `micmon report`'s reading of a file: the whole file through the take analysis, block by block.
// The calling thread (the main thread in `micmon report`).

import DSP
import Loudness
import SoundFile

/// Why a file could not be reported.
public enum FileAnalysisError: Error, CustomStringConvertible, Equatable {
    /// libsndfile could not open or read it (not an audio file, or unreadable); its message.
    case file(SoundFileError)
    /// It opened but holds no frames.
    case empty(path: String)
    /// It holds NaN or ±∞ samples (the first at `frame`, in `channel`, 0-based).
    case nonFinite(path: String, frame: UInt64, channel: Int)
    case loudness(LoudnessError)

    public var description: String {
        switch self {
        case .file(let error): return error.description
        case .empty(let path): return "\(path): the file holds no audio frames"
        case .nonFinite(let path, let frame, let channel):
            return "\(path): sample \(frame) of channel \(channel + 1) is not a number (NaN or ±∞)"
        case .loudness(let error): return error.description
        }
    }
}

public enum FileAnalysis {
    /// What counts as a clip for a take recorded in `encoding` (as `fullScale(of:)` reads its file).
    public static func fullScale(of encoding: SampleEncoding) -> Double {
        switch encoding {
        case .pcm16: return SignalStatistics.fullScale(integerBits: 16)
        case .pcm24: return SignalStatistics.fullScale(integerBits: 24)
        default: return 1
        }
    }

    /// Frames read at a time.
    static let blockFrames = 8192

    /// Reads `path` from start to end into a `TakeAnalyzer`. `channelNames` default to ch1, ch2, …
    public static func analyze(
        path: String, mode: LoudnessMode = .perChannel, keepsEnvelope: Bool = false
    ) throws(FileAnalysisError) -> TakeAnalysisResult {
        let reader: SoundFileReader
        do { reader = try SoundFileReader(path: path) } catch { throw .file(error) }
        defer { reader.close() }
        guard reader.frameCount > 0, reader.channelCount > 0 else { throw .empty(path: path) }
        let names = (1 ... reader.channelCount).map { "ch\($0)" }
        let analyzer: TakeAnalyzer
        do {
            analyzer = try TakeAnalyzer(
                channelNames: names, sampleRate: reader.sampleRate, mode: mode, keepsEnvelope: keepsEnvelope,
                fullScale: reader.encoding.map(fullScale(of:)) ?? 1, tracksCorrelationNow: false)
        } catch {
            throw .loudness(error)
        }
        let channels = reader.channelCount
        var buffer = [Float](repeating: 0, count: blockFrames * channels)
        var position: UInt64 = 0
        while true {
            let frames = buffer.withUnsafeMutableBufferPointer { reader.read(into: $0) }
            if frames <= 0 { break }
            try buffer.withUnsafeBufferPointer { (samples) throws(FileAnalysisError) in
                let base = samples.baseAddress!
                do throws(LoudnessError) { try analyzer.add(base, frameCount: frames) } catch {
                    throw .loudness(error)
                }
                // The analyzer counts non-finite samples as it reads them: a file holding one is
                // refused, at the first (the blocks before had none).
                guard analyzer.nonFiniteSamples > 0 else { return }
                var index = 0
                while index < frames * channels {
                    if !base[index].isFinite {
                        throw .nonFinite(
                            path: path, frame: position + UInt64(index / channels), channel: index % channels)
                    }
                    index += 1
                }
            }
            position += UInt64(frames)
        }
        guard position > 0 else { throw .empty(path: path) }
        return analyzer.result()
    }
}
