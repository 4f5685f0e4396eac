import Foundation
import SoundFile
import Testing

/// Ogg Vorbis, Ogg Opus and MP3 through libsndfile: what comes back has the rate, channels and
/// length written (libsndfile trims each codec's padding: the length is exact here) and is close
/// to the source; the codecs' limits are refused as format errors.
@Suite("Lossy formats: ogg, opus, mp3")
struct LossyFormatTests {
    /// Each codec's floor for a 440 Hz + 1 kHz stereo tone at its default quality, in dB of SNR
    /// after the best alignment (measured with libsndfile 1.2.0: Vorbis ≈ 40, Opus ≈ 30, MP3 ≈ 35;
    /// the floors leave 10 dB).
    static let cases: [(ContainerFormat, Double)] = [(.ogg, 30), (.opus, 20), (.mp3, 25)]

    static func tone(frames: Int) -> [Float] {
        var samples = [Float](repeating: 0, count: frames * 2)
        for i in 0 ..< frames {
            let t = Double(i) / 48_000
            samples[2 * i] = Float(0.3 * sin(2 * .pi * 440 * t))
            samples[2 * i + 1] = Float(0.2 * sin(2 * .pi * 1000 * t))
        }
        return samples
    }

    func path(_ container: ContainerFormat) -> String {
        NSTemporaryDirectory() + "micmon-lossy-\(UUID().uuidString).\(container.fileExtension)"
    }

    func write(_ format: AudioFileFormat, _ samples: [Float], to path: String, rate: Int = 48_000) throws {
        let writer = try SoundFileWriter(path: path, format: format, sampleRate: rate, channelCount: 2)
        try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
        try writer.close()
    }

    /// SNR of `decoded` against `source` at the lag (0 … 2048 frames) that fits best, over the
    /// middle of the signal.
    static func bestSNR(_ source: [Float], _ decoded: [Float]) -> Double {
        let frames = min(source.count, decoded.count) / 2
        var best = -Double.infinity
        for lag in stride(from: 0, through: 2048, by: 1) where lag + frames / 2 < frames {
            var signal = 0.0
            var noise = 0.0
            for i in stride(from: frames / 4, to: frames / 2, by: 1) {
                for channel in 0 ..< 2 {
                    let s = Double(source[2 * i + channel])
                    let d = Double(decoded[2 * (i + lag) + channel])
                    signal += s * s
                    noise += (s - d) * (s - d)
                }
            }
            best = max(best, 10 * log10(signal / max(noise, 1e-30)))
        }
        return best
    }

    @Test("round trip: rate, channels, length and SNR above the codec's floor", arguments: cases)
    func roundTrip(_ container: ContainerFormat, _ floor: Double) throws {
        let path = path(container)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let source = Self.tone(frames: 48_000)
        try write(AudioFileFormat(container: container, encoding: .float), source, to: path)
        let reader = try SoundFileReader(path: path)
        #expect(reader.container == container)
        #expect(reader.sampleRate == 48_000)
        #expect(reader.channelCount == 2)
        #expect(reader.frameCount == 48_000)
        let decoded = reader.readAllFloats()
        let snr = Self.bestSNR(source, decoded)
        #expect(snr > floor, "\(container): SNR \(snr) dB")
    }

    @Test("--quality reaches the codec: quality 0 makes a smaller file than quality 1", arguments: cases)
    func qualityChangesTheFile(_ container: ContainerFormat, _ floor: Double) throws {
        let source = Self.tone(frames: 96_000)
        var sizes: [Double: Int] = [:]
        for quality in [0.0, 1.0] {
            let path = path(container)
            defer { try? FileManager.default.removeItem(atPath: path) }
            try write(AudioFileFormat(container: container, encoding: .float, quality: quality), source, to: path)
            sizes[quality] = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        }
        let low = try #require(sizes[0.0])
        let high = try #require(sizes[1.0])
        #expect(low < high, "\(container): quality 0 → \(low) bytes, 1 → \(high) bytes")
    }

    @Test("mp3's bitrate mode reaches the encoder: cbr and vbr files differ")
    func bitrateMode() throws {
        let source = Self.tone(frames: 96_000)
        var bytes: [BitrateMode: Data] = [:]
        for mode in BitrateMode.allCases {
            let path = path(.mp3)
            defer { try? FileManager.default.removeItem(atPath: path) }
            try write(AudioFileFormat(container: .mp3, encoding: .float, bitrateMode: mode), source, to: path)
            bytes[mode] = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(try SoundFileReader(path: path).frameCount == 96_000)
        }
        #expect(bytes[.cbr] != bytes[.vbr])
    }

    @Test("the codecs' limits are format refusals, and nothing is left at the path")
    func limitsAreRefused() throws {
        let refused: [(AudioFileFormat, Int, Int)] = [
            (AudioFileFormat(container: .opus, encoding: .float), 44_100, 2),
            (AudioFileFormat(container: .mp3, encoding: .float), 96_000, 2),
            (AudioFileFormat(container: .mp3, encoding: .float), 48_000, 3),
        ]
        for (format, rate, channels) in refused {
            let path = path(format.container)
            var error: SoundFileError?
            do {
                _ = try SoundFileWriter(path: path, format: format, sampleRate: rate, channelCount: channels)
            } catch let caught { error = caught }
            #expect(error?.isFormatRefusal == true, "\(format) \(rate) Hz × \(channels): \(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }
}
