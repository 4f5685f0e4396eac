import Foundation
import Glibc
import SoundFile
import Testing

/// `record take.ogg`, `.opus`, `.mp3`: the container named, not WAV bytes under its name; the
/// take encoded at the end from the crash-safe intermediate, which a kill leaves holding the
/// take exactly.
extension JackIntegrationTests {
    @Suite("Lossy takes: ogg, opus, mp3")
    struct LossyRecordIntegrationTests {
        static let containers: [ContainerFormat] = [.ogg, .opus, .mp3]

        func recordArguments(_ path: String, _ server: SharedTestServer, name: String) -> [String] {
            [
                "record", path, "-s", server.name, "-n", name, "-p", server.source.outputPorts[0], "-p",
                server.source.outputPorts[1],
            ]
        }

        /// Before issue 19 `record take.mp3` wrote a WAV file named take.mp3.
        @Test(
            "record FILE.EXT writes that container, as long as the take, and leaves no intermediate",
            arguments: containers)
        func writesTheNamedContainer(_ container: ContainerFormat) throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("lossy-\(container)") + "/take." + container.fileExtension
            let result = try MicmonProcess.run(
                recordArguments(path, server, name: "lossy-\(container)") + ["--duration", "1", "--quality", "0.7"],
                timeout: 30)
            if container.sampleRates.map({ !$0.contains(server.sampleRate) }) ?? false {
                #expect(result.exitCode == 64, "stderr: \(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: path))
                return
            }
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let reader = try SoundFileReader(path: path)
            #expect(reader.container == container)
            #expect(reader.sampleRate == server.sampleRate)
            #expect(reader.channelCount == 2)
            #expect(reader.frameCount == Int64(server.sampleRate))
            #expect(!FileManager.default.fileExists(atPath: path + ".partial.w64"))
            let samples = reader.readAllFloats()
            #expect(samples.contains { $0 != 0 }, "the take is silent")
        }

        @Test("record FILE.EXT killed with SIGKILL: FILE.partial.w64 holds the take exactly", arguments: containers)
        func killLeavesTheIntermediate(_ container: ContainerFormat) throws {
            let server = try SharedTestServer.require()
            if container.sampleRates.map({ !$0.contains(server.sampleRate) }) ?? false { return }
            let path = TestEnvironment.scratchFolder("lossy-kill-\(container)") + "/take." + container.fileExtension
            let run = try MicmonProcess(
                recordArguments(path, server, name: "lossy-kill-\(container)") + ["--duration", "30", "--json"])
            #expect(run.waitUntilRecorded(seconds: 1.5), "stderr: \(run.stderrSoFar)")
            run.signal(SIGKILL)
            _ = run.wait(timeout: 10)
            let outcome = try TakeCheck.verify(path: path + ".partial.w64")
            #expect(outcome.isExact, "first mismatch at \(outcome.firstMismatch ?? -1)")
            #expect(outcome.frameCount >= server.sampleRate / 2, "only \(outcome.frameCount) frames")
        }
    }
}

@Suite("Lossy outputs of denoise")
struct LossyDenoiseTests {
    @Test("denoise to .opus at 44.1 kHz: exit 64 with the rates Opus holds, nothing created")
    func opusRateIsRefused() throws {
        let folder = TestEnvironment.scratchFolder("denoise-opus")
        let input = folder + "/in.wav"
        let writer = try SoundFileWriter(
            path: input, format: AudioFileFormat(container: .wav, encoding: .float), sampleRate: 44_100,
            channelCount: 2)
        let samples = [Float](repeating: 0.1, count: 8820)
        try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
        try writer.close()
        let result = try MicmonProcess.run(["denoise", input, folder + "/clean.opus"], timeout: 30)
        #expect(result.exitCode == 64, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("8000, 12000, 16000, 24000, 48000 Hz"), "stderr: \(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["in.wav"])
    }

    @Test("denoise to .ogg: an Ogg Vorbis file as long as IN")
    func oggOutput() throws {
        let folder = TestEnvironment.scratchFolder("denoise-ogg")
        let input = folder + "/in.wav"
        try FileSafety.writeStereo(input)
        let output = folder + "/clean.ogg"
        let result = try MicmonProcess.run(["denoise", input, output, "--quality", "0.3"], timeout: 30)
        #expect(result.exitCode == 0, "stderr: \(result.stderr)")
        let reader = try SoundFileReader(path: output)
        #expect(reader.container == .ogg && reader.channelCount == 1 && reader.frameCount == 9600)
    }
}
