import Engine
import Foundation
import Jack
import SoundFile
import Testing

/// The default-port rule and the never-connected rule against jackd2 (the PipeWire side is in
/// PipeWireIntegrationTests): with no -p/-o and no port the rule accepts, micmon refuses to start
/// (exit 64, listing the ports) unless --allow-unconnected; an input whose chosen source was never
/// connected during the take ends it with exit 66.
extension JackIntegrationTests {
    @Suite("Port rules against jackd2")
    struct PortRuleIntegrationTests {
        /// A private jackd with no capture or playback ports at all.
        static func portlessServer() throws -> PrivateJackServer {
            try PrivateJackServer(
                name: "micmon-noports-\(getpid())-\(UUID().uuidString.prefix(4))", captureChannels: 0,
                playbackChannels: 0
            ).notingRestart()
        }

        @Test("no physical and no *:capture_* port: record, meter and monitor refuse (64) unless --allow-unconnected")
        func captureWithoutDefaultPorts() throws {
            let server = try Self.portlessServer()
            defer { server.stop() }
            let folder = TestEnvironment.scratchFolder("noports")
            let path = folder + "/take.wav"
            let refused = try MicmonProcess.run(["record", path, "-s", server.name, "--duration", "0.5"])
            #expect(refused.exitCode == 64, "stderr: \(refused.stderr)")
            #expect(refused.stderr.contains("no physical capture port"), "\(refused.stderr)")
            #expect(refused.stderr.contains("--allow-unconnected"), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: path), "a refused take left a file")
            let meter = try MicmonProcess.run(["meter", "-s", server.name, "--duration", "0.5"])
            #expect(meter.exitCode == 64, "stderr: \(meter.stderr)")
            let monitor = try MicmonProcess.run(["monitor", "-s", server.name, "--duration", "0.5"])
            #expect(monitor.exitCode == 64, "stderr: \(monitor.stderr)")

            let allowed = try MicmonProcess.run([
                "record", path, "-s", server.name, "--duration", "0.5", "--allow-unconnected", "--json",
            ])
            #expect(allowed.exitCode == 0, "stderr: \(allowed.stderr)")
            #expect(try TakeCheck.verify(path: path).frameCount == server.sampleRate / 2)
        }

        @Test("no playback port: play refuses (64) unless --allow-unconnected")
        func playWithoutDefaultPorts() throws {
            let server = try Self.portlessServer()
            defer { server.stop() }
            let folder = TestEnvironment.scratchFolder("noports-play")
            let file = folder + "/tone.wav"
            let writer = try SoundFileWriter(
                path: file, format: AudioFileFormat(container: .wav, encoding: .float), sampleRate: server.sampleRate,
                channelCount: 2)
            let silence = [Float](repeating: 0, count: server.sampleRate / 2)
            try silence.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
            try writer.close()
            let refused = try MicmonProcess.run(["play", file, "-s", server.name])
            #expect(refused.exitCode == 64, "stderr: \(refused.stderr)")
            #expect(refused.stderr.contains("no physical playback port"), "\(refused.stderr)")
            let allowed = try MicmonProcess.run(["play", file, "-s", server.name, "--allow-unconnected"])
            #expect(allowed.exitCode == 0, "stderr: \(allowed.stderr)")
        }

        @Test("capture ports but no playback port: monitor refuses (64), naming the outputs it lacks")
        func monitorWithoutPlaybackPorts() throws {
            let server = try PrivateJackServer(
                name: "micmon-noplay-\(getpid())-\(UUID().uuidString.prefix(4))", captureChannels: 2,
                playbackChannels: 0
            ).notingRestart()
            defer { server.stop() }
            let refused = try MicmonProcess.run(["monitor", "-s", server.name, "--duration", "0.5"])
            #expect(refused.exitCode == 64, "stderr: \(refused.stderr)")
            #expect(refused.stderr.contains("no physical playback port"), "\(refused.stderr)")
            #expect(refused.stderr.contains("--allow-unconnected"), "\(refused.stderr)")
            // Its inputs have their sources: allowed, it monitors to nowhere and says so.
            let allowed = try MicmonProcess.run([
                "monitor", "-s", server.name, "--duration", "0.5", "--allow-unconnected",
            ])
            #expect(allowed.exitCode == 0, "stderr: \(allowed.stderr)")
        }

        @Test("with no -p, record takes jackd2's physical system:capture_* ports")
        func physicalDefaults() throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("physical") + "/take.wav"
            let child = try MicmonProcess(["record", path, "-s", server.name, "-n", "rec-physical", "--json"])
            #expect(child.waitUntilRecorded(seconds: 0.2), "stderr: \(child.stderrSoFar)")
            let listingPath = TestEnvironment.scratchFolder("physical-lsp") + "/stdout"
            let lsp = try ChildProcess(["jack_lsp", "-s", server.name, "-c"], stdout: listingPath)
            _ = lsp.wait(timeout: 20)
            let listing = (try? String(contentsOfFile: listingPath, encoding: .utf8)) ?? ""
            child.signal(SIGINT)
            let result = child.wait(timeout: 20)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(!result.stderr.contains("warning"), "\(result.stderr)")
            #expect(listing.contains("rec-physical:in_1\n   system:capture_1\n"), "\(listing)")
            #expect(listing.contains("rec-physical:in_2\n   system:capture_2\n"), "\(listing)")
        }

        @Test("a chosen source that can never be connected: the take runs, says so and exits 66")
        func neverConnectedSource() throws {
            let server = try SharedTestServer.require()
            // jackd2 refuses to connect a port of a client that is not active.
            let idle = try JackClient(name: "micmon-idle-source", serverName: server.name)
            defer { idle.close() }
            let port = try idle.registerPort(name: "out", direction: .output)
            let path = TestEnvironment.scratchFolder("never") + "/take.wav"
            let result = try MicmonProcess.run([
                "record", path, "-s", server.name, "-n", "rec-never", "-p", port.fullName, "-p",
                server.source.outputPorts[1], "--duration", "1", "--json",
            ])
            #expect(result.exitCode == 66, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("in_1 was never connected"), "\(result.stderr)")
            #expect(!result.stderr.contains("in_2 was never connected"), "\(result.stderr)")
            #expect(try TakeCheck.verify(path: path).frameCount == server.sampleRate)
        }
    }
}
