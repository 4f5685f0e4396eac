// The analysis against a peer no one here wrote: Debian's ffmpeg, `-af ebur128=peak=true`, on
// the same programme material (the demo voice at changing levels), written to a file. They must
// agree on integrated loudness within 0.1 LU, LRA within 0.5 LU and true peak within 0.3 dB.

import DSP
import Engine
import Foundation
import SoundFile
import Testing

@Suite struct FFmpegAgreementTests {
    static let ffmpeg = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// 40 s of the two-mic demo voice, 10 s each at 0, −10, −3 and −18 dB, so LRA is several LU.
    static func programme(sampleRate: Int = 48000) -> [Float] {
        var source = DemoVoiceSource(sampleRate: Double(sampleRate), seed: 7)
        let gains: [Float] = [1, 0.316, 0.708, 0.126]
        let block = 1000
        var primary = [Float](repeating: 0, count: block)
        var reference = [Float](repeating: 0, count: block)
        var out: [Float] = []
        for gain in gains {
            for _ in 0 ..< (10 * sampleRate / block) {
                source.render(primary: &primary, reference: &reference, count: block)
                for i in 0 ..< block {
                    out.append(primary[i] * gain)
                    out.append(reference[i] * gain)
                }
            }
        }
        return out
    }

    struct FFmpegReading { var integrated, range, truePeak: Double }

    /// ffmpeg's summary (its last "I:", "LRA:" and "Peak:" lines).
    static func ffmpegReading(_ path: String) throws -> FFmpegReading {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(ffmpeg))
        process.arguments = ["-hide_banner", "-nostats", "-i", path, "-af", "ebur128=peak=true", "-f", "null", "-"]
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        func last(_ key: String) -> Double? {
            text.split(separator: "\n").reversed().lazy.compactMap { line -> Double? in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard trimmed.hasPrefix(key) else { return nil }
                return Double(trimmed.dropFirst(key.count).split(separator: " ").first ?? "")
            }.first
        }
        return FFmpegReading(
            integrated: try #require(last("I:")), range: try #require(last("LRA:")),
            truePeak: try #require(last("Peak:")))
    }

    static func write(_ samples: [Float], channels: Int, to path: String) throws {
        let writer = try SoundFileWriter(
            path: path, format: AudioFileFormat(container: .wav, encoding: .float), sampleRate: 48000,
            channelCount: channels)
        try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
        try writer.close()
    }

    @Test(.enabled(if: ffmpeg != nil || isCI, "needs ffmpeg (Debian: ffmpeg)"))
    func agreesWithFFmpeg() throws {
        let folder = NSTemporaryDirectory() + "micmon-loudness-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let stereo = Self.programme()
        let mono = stride(from: 0, to: stereo.count, by: 2).map { stereo[$0] }
        let stereoPath = folder + "/stereo.wav"
        let monoPath = folder + "/mono.wav"
        try Self.write(stereo, channels: 2, to: stereoPath)
        try Self.write(mono, channels: 1, to: monoPath)

        for (path, mode) in [(stereoPath, LoudnessMode.stereo), (monoPath, .perChannel)] {
            let peer = try Self.ffmpegReading(path)
            let ours = try FileAnalysis.analyze(path: path, mode: mode)
            let programme = ours.programmes[0]
            #expect(peer.range > 3, "the programme must have a loudness range to compare")
            #expect(
                abs(programme.integratedLUFS - peer.integrated) <= 0.1,
                "\(path): I \(programme.integratedLUFS) vs \(peer.integrated)")
            #expect(
                abs(programme.loudnessRangeLU - peer.range) <= 0.5,
                "\(path): LRA \(programme.loudnessRangeLU) vs \(peer.range)")
            #expect(
                abs(programme.truePeakDBTP - peer.truePeak) <= 0.3,
                "\(path): TP \(programme.truePeakDBTP) vs \(peer.truePeak)")
        }
    }
}
