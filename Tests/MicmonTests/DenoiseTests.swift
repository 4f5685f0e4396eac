import DSP
import Foundation
import SoundFile
import Testing

/// Writes a float file of `channels` channels at `rate`: a tone on channel 1 and a quieter,
/// noisier copy on channel 2.
private func writeTestFile(_ path: String, frames: Int, rate: Int = 48_000, channels: Int = 2) throws {
    let writer = try SoundFileWriter(
        path: path, format: AudioFileFormat(container: .wav, encoding: .float),
        sampleRate: rate, channelCount: channels)
    var samples = [Float](repeating: 0, count: frames * channels)
    var state: UInt32 = 1
    for i in 0 ..< frames {
        state = state &* 1_664_525 &+ 1_013_904_223
        let noise = (Float(state >> 8) / Float(1 << 24) - 0.5) * 0.05
        let tone = 0.3 * Float(sin(2 * Double.pi * 440 * Double(i) / Double(rate))) * (i / 12_000 % 2 == 0 ? 1 : 0)
        samples[i * channels] = tone + noise
        if channels > 1 { samples[i * channels + 1] = 0.4 * tone - noise }
    }
    try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
    try writer.close()
}

@Suite("micmon denoise")
struct DenoiseCommandTests {
    typealias BadInput = CommandLineTests.BadInput

    static let badInputs: [BadInput] = [
        BadInput(name: "no OUT", arguments: ["denoise", "SCRATCH/stereo.wav"], message: "needs IN and OUT"),
        BadInput(
            name: "missing IN", arguments: ["denoise", "SCRATCH/none.wav", "SCRATCH/out.wav"],
            message: "cannot read SCRATCH/none.wav"),
        BadInput(
            name: "corrupt IN", arguments: ["denoise", "SCRATCH/garbage.wav", "SCRATCH/out.wav"],
            message: "cannot read SCRATCH/garbage.wav"),
        BadInput(
            name: "mono IN", arguments: ["denoise", "SCRATCH/mono.wav", "SCRATCH/out.wav"],
            message: "has 1 channel; denoise needs 2"),
        BadInput(
            name: "unsupported rate", arguments: ["denoise", "SCRATCH/96k.wav", "SCRATCH/out.wav"],
            message: "44100 or 48000 Hz, not 96000 Hz"),
        BadInput(
            name: "bad block", arguments: ["denoise", "SCRATCH/stereo.wav", "SCRATCH/out.wav", "--block", "0"],
            message: "--block needs a whole number"),
        BadInput(
            name: "existing OUT", arguments: ["denoise", "SCRATCH/stereo.wav", "SCRATCH/garbage.wav"],
            message: "exists; use --force"),
        BadInput(
            name: "unknown option", arguments: ["denoise", "SCRATCH/stereo.wav", "SCRATCH/out.wav", "--fast"],
            message: "unknown option '--fast'"),
    ]

    @Test("bad input exits 64 with a one-line reason and creates nothing", arguments: badInputs)
    func badInputIsRefused(_ input: BadInput) throws {
        let scratch = TestEnvironment.scratchFolder("denoise-bad")
        try Data("not audio".utf8).write(to: URL(fileURLWithPath: scratch + "/garbage.wav"))
        try writeTestFile(scratch + "/stereo.wav", frames: 4800)
        try writeTestFile(scratch + "/mono.wav", frames: 4800, channels: 1)
        try writeTestFile(scratch + "/96k.wav", frames: 4800, rate: 96_000)
        let before = try FileManager.default.contentsOfDirectory(atPath: scratch).sorted()
        let result = try MicmonProcess.run(
            input.arguments.map { $0.replacingOccurrences(of: "SCRATCH", with: scratch) }, timeout: 20)
        #expect(result.exitCode == 64)
        #expect(result.stderr.split(separator: "\n").count == 1, "stderr: \(result.stderr)")
        #expect(
            result.stderr.contains(input.message.replacingOccurrences(of: "SCRATCH", with: scratch)),
            "stderr: \(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).sorted() == before)
        #expect(try String(contentsOfFile: scratch + "/garbage.wav", encoding: .utf8) == "not audio")
    }

    @Test(
        "OUT is mono, as long as IN, the suppressor's exact output, and the same for any --block",
        arguments: NoiseSuppressorLatency.allCases)
    func offlineIsTheKernel(_ latency: NoiseSuppressorLatency) throws {
        let scratch = TestEnvironment.scratchFolder("denoise-ok-\(latency.rawValue)")
        let input = scratch + "/in.wav"
        let frames = 48_000 * 2 + 77
        try writeTestFile(input, frames: frames)
        var outputs: [[Float]] = []
        for block in [64, 1000, 4096] {
            let output = scratch + "/out-\(block).wav"
            let result = try MicmonProcess.run(
                ["denoise", input, output, "--block", String(block), "--denoise-latency", latency.rawValue], timeout: 30
            )
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let reader = try SoundFileReader(path: output)
            #expect(reader.channelCount == 1)
            #expect(reader.sampleRate == 48_000)
            #expect(reader.frameCount == Int64(frames))
            outputs.append(reader.readAllFloats())
        }
        #expect(outputs[0] == outputs[1])
        #expect(outputs[0] == outputs[2])

        // The same samples through the DSP module directly.
        let stereo = try SoundFileReader(path: input).readAllFloats()
        let primary = stride(from: 0, to: stereo.count, by: 2).map { stereo[$0] }
        let reference = stride(from: 1, to: stereo.count, by: 2).map { stereo[$0] }
        let suppressor = try NoiseSuppressor(sampleRate: 48_000, latency: latency)
        var clean = [Float](repeating: 0, count: frames)
        suppressor.process(primary: primary, reference: reference, clean: &clean, frameCount: frames)
        let mismatches = zip(clean, outputs[0]).filter { $0 != $1 }.count
        #expect(mismatches == 0)
        // And it did something: the noise between the tone bursts is lower.
        let lag = suppressor.latencyFrames
        let gap = (12_000 + 2_400 + lag) ..< (24_000 - 2_400 + lag)
        let before = gap.map { Double(primary[$0 - lag] * primary[$0 - lag]) }.reduce(0, +)
        let after = gap.map { Double(outputs[0][$0] * outputs[0][$0]) }.reduce(0, +)
        #expect(10 * log10(before / after) > 6)
    }
}

extension JackIntegrationTests {
    @Suite("Noise suppression against a real JACK server")
    struct DenoiseIntegrationTests {
        @Test(
            "record --denoise --channels all: the inputs sample-exact, the clean channel equal to micmon denoise of them",
            arguments: NoiseSuppressorLatency.allCases)
        func realtimeEqualsOffline(_ latency: NoiseSuppressorLatency) throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("denoise-live-\(latency.rawValue)")
            let take = folder + "/take.wav"
            let result = try MicmonProcess.run(
                [
                    "record", take, "-s", server.name, "-n", "rec-denoise-\(latency.rawValue)", "--denoise",
                    "--denoise-latency", latency.rawValue, "--channels", "all",
                    "-p", server.source.outputPorts[0], "-p", server.source.outputPorts[1], "--duration", "4", "--json",
                ],
                timeout: 60)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(result.stdout.contains("\"name\":\"clean\""))
            #expect(result.stdout.contains("\"noise_reduction_db\":"))
            let reader = try SoundFileReader(path: take)
            #expect(reader.channelCount == 3)
            let frames = Int(reader.frameCount)
            #expect(frames == 4 * server.sampleRate)
            let all = reader.readAllFloats()

            // The two inputs, as a 2-channel file, through the offline command with the server's period.
            let inputs = folder + "/inputs.wav"
            let writer = try SoundFileWriter(
                path: inputs, format: AudioFileFormat(container: .wav, encoding: .float),
                sampleRate: server.sampleRate, channelCount: 2)
            var stereo = [Float](repeating: 0, count: frames * 2)
            for i in 0 ..< frames {
                stereo[2 * i] = all[3 * i]
                stereo[2 * i + 1] = all[3 * i + 1]
            }
            try stereo.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
            try writer.close()
            let inputsCheck = try TakeCheck.verify(path: inputs)
            #expect(inputsCheck.firstSourceFrame != nil)
            #expect(
                inputsCheck.mismatchedFrames == 0, "inputs: first mismatch at frame \(inputsCheck.firstMismatch ?? -1)")
            let offline = folder + "/offline.wav"
            let denoise = try MicmonProcess.run(
                ["denoise", inputs, offline, "--block", "256", "--denoise-latency", latency.rawValue], timeout: 60)
            #expect(denoise.exitCode == 0, "stderr: \(denoise.stderr)")
            let expected = try SoundFileReader(path: offline).readAllFloats()
            #expect(expected.count == frames)
            var mismatches = 0
            var firstMismatch: Int?
            for i in 0 ..< min(frames, expected.count) where all[3 * i + 2] != expected[i] {
                mismatches += 1
                if firstMismatch == nil { firstMismatch = i }
            }
            #expect(mismatches == 0, "first mismatch at frame \(firstMismatch ?? -1)")
            // The clean channel is not a copy of silence.
            #expect(expected.contains { $0 != 0 })
        }
    }
}
