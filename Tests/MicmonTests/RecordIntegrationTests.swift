import Engine
import Foundation
import Glibc
import Jack
import SoundFile
import Testing

/// `micmon record` against a real JACK server, fed by `TestSignalSource`; every take is checked
/// sample for sample.
@Suite("Recording against a real JACK server")
struct RecordIntegrationTests {
    static let takeSeconds = 20.0

    /// Every container × encoding libsndfile accepts (flac has no float or 32-bit).
    static let formats: [(ContainerFormat, SampleEncoding)] = ContainerFormat.allCases.flatMap { container in
        [SampleEncoding.float, .pcm24, .pcm16, .pcm32].compactMap { encoding in
            AudioFileFormat(container: container, encoding: encoding).isWritable() ? (container, encoding) : nil
        }
    }

    @Test("a 20 s take is sample-exact", arguments: formats)
    func sampleExactTake(container: ContainerFormat, encoding: SampleEncoding) throws {
        let server = try SharedTestServer.require()
        let path = TestEnvironment.scratchFolder("exact") + "/take.\(container.fileExtension)"
        let client = "rec-\(container.rawValue)-\(encoding.rawValue)"
        let result = try MicmonProcess.run(
            ["record", path, "-s", server.name, "-n", client, "-p", server.source.outputPorts[0], "-p", server.source.outputPorts[1],
             "--format", container.rawValue, "--bits", encoding.rawValue, "--duration", String(Self.takeSeconds), "--json"],
            timeout: Self.takeSeconds + 40)
        #expect(result.exitCode == 0, "stderr: \(result.stderr)")
        let reader = try SoundFileReader(path: path)
        #expect(reader.container == container)
        #expect(reader.encoding == encoding)
        #expect(reader.sampleRate == server.sampleRate)
        let outcome = try TakeCheck.verify(path: path)
        #expect(outcome.frameCount == Int(Self.takeSeconds * Double(server.sampleRate)))
        #expect(outcome.firstSourceFrame != nil, "the take does not start on the test signal")
        #expect(outcome.mismatchedFrames == 0, "first mismatch at frame \(outcome.firstMismatch ?? -1)")
        // micmon's own counters: every frame taken was written, none dropped.
        let summary = try #require(result.stdout.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") })
        #expect(summary.contains("\"frames_dropped\":0"))
    }

    @Test("SIGINT finalizes a valid take")
    func interruptFinalizes() throws {
        let server = try SharedTestServer.require()
        let path = TestEnvironment.scratchFolder("sigint") + "/take.wav"
        let child = try MicmonProcess(["record", path, "-s", server.name, "-n", "rec-sigint",
                                       "-p", server.source.outputPorts[0], "-p", server.source.outputPorts[1]])
        Thread.sleep(forTimeInterval: 3)
        child.signal(SIGINT)
        let result = child.wait(timeout: 20)
        #expect(result.exitCode == 0, "stderr: \(result.stderr)")
        let outcome = try TakeCheck.verify(path: path)
        #expect(outcome.frameCount >= Int(2.0 * Double(server.sampleRate)))
        #expect(outcome.mismatchedFrames == 0)
        #expect(result.stdout.contains("interrupted"))
    }

    @Test("kill -9 leaves a file that opens, holding all but the last 0.5 s", arguments: [ContainerFormat.wav, .w64, .rf64, .caf, .flac])
    func killLeavesReadableFile(container: ContainerFormat) throws {
        let server = try SharedTestServer.require()
        let path = TestEnvironment.scratchFolder("kill") + "/take.\(container.fileExtension)"
        let child = try MicmonProcess(["record", path, "-s", server.name, "-n", "rec-kill-\(container.rawValue)",
                                       "-p", server.source.outputPorts[0], "-p", server.source.outputPorts[1]])
        // Wait until the take is under way (the file exists), then let it run 3 s.
        let begun = Date()
        while !FileManager.default.fileExists(atPath: path) && Date().timeIntervalSince(begun) < 10 { usleep(10_000) }
        Thread.sleep(forTimeInterval: 3)
        child.signal(SIGKILL)
        let result = child.wait(timeout: 10)
        #expect(result.wasKilledBySignal)
        let outcome = try TakeCheck.verify(path: path)
        #expect(outcome.frameCount >= Int(2.5 * Double(server.sampleRate)), "only \(outcome.frameCount) frames survived")
        #expect(outcome.mismatchedFrames == 0)
    }

    @Test("the server stopping mid-take finalizes the file and exits 69")
    func serverLossFinalizes() throws {
        let server = try PrivateJackServer(name: "micmon-test-loss-\(getpid())", periodFrames: 128)
        defer { server.stop() }
        let source = try TestSignalSource(serverName: server.name)
        let path = TestEnvironment.scratchFolder("loss") + "/take.wav"
        let child = try MicmonProcess(["record", path, "-s", server.name, "-p", source.outputPorts[0], "-p", source.outputPorts[1]])
        Thread.sleep(forTimeInterval: 3)
        server.stop()
        let result = child.wait(timeout: 20)
        source.stop()
        #expect(result.exitCode == 69, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("shut down"))
        let outcome = try TakeCheck.verify(path: path)
        #expect(outcome.frameCount >= Int(2.0 * Double(server.sampleRate)))
        #expect(outcome.mismatchedFrames == 0)
    }
}
