import DSP
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

        @Test("--allow-unconnected: a -p that matches nothing yet waits; its source, started later, is connected")
        func sourceStartedLater() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("later")
            let path = folder + "/take.wav"
            let arguments = [
                "record", path, "-s", server.name, "-n", "rec-later", "-p", "late-src:out_1", "-p", "late-src:out_*",
                "--duration", "4", "--json",
            ]
            // Without the option: refused, nothing created.
            let refused = try MicmonProcess.run(arguments)
            #expect(refused.exitCode == 64, "stderr: \(refused.stderr)")
            #expect(refused.stderr.contains("no JACK output port matches 'late-src:out_1'"), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: path), "a refused take left a file")

            let child = try MicmonProcess(arguments + ["--allow-unconnected"])
            #expect(child.waitUntilRecorded(seconds: 1), "micmon did not record 1 s: \(child.stderrSoFar)")
            var source: DemoSource? = try TestSignalSource.reference(serverName: server.name, clientName: "late-src")
            let result = child.wait(timeout: 30)
            source?.stop()
            source = nil
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(
                result.stderr.contains("no JACK output port matches 'late-src:out_1' yet; in_1 reads silence"),
                "\(result.stderr)")
            #expect(result.stderr.contains("no JACK output port matches 'late-src:out_*' yet; in_2"))
            #expect(result.stderr.contains("in_1: its source late-src:out_1 appeared; connected"), "\(result.stderr)")
            #expect(result.stderr.contains("in_2: its source late-src:out_2 appeared; connected"), "\(result.stderr)")
            #expect(!result.stderr.contains("never connected"), "\(result.stderr)")
            #expect(
                result.stdout.contains("\"event\":\"source_found\",\"input\":\"in_1\",\"ports\":[\"late-src:out_1\"]"),
                "\(result.stdout.suffix(800))")
            #expect(
                result.stdout.contains("\"event\":\"source_found\",\"input\":\"in_2\",\"ports\":[\"late-src:out_2\"]"))
            // The take: silence, then the source on both inputs, exact (the two inputs connect
            // with two jack_connect calls: checked from 2048 frames into the signal).
            let samples = try SoundFileReader(path: path).readAllFloats()
            #expect(samples.count == 4 * server.sampleRate * 2)
            let first = stride(from: 0, to: samples.count, by: 2).first { samples[$0] != 0 || samples[$0 + 1] != 0 }
            let firstFrame = try #require(first, "the take holds only silence") / 2
            #expect(firstFrame >= server.sampleRate, "the source sounded \(firstFrame) frames in, before it started")
            let from = firstFrame + 2048
            #expect(from < samples.count / 2 - server.sampleRate / 2, "less than 0.5 s of source: \(firstFrame)")
            let match = samples.withUnsafeBufferPointer {
                ReferenceSignal.match(interleaved: UnsafeBufferPointer(rebasing: $0[2 * from ..< samples.count]))
            }
            #expect(match.startFrame != nil && match.mismatchedFrames == 0, "\(match)")
        }

        @Test("--allow-unconnected: a -p whose port never appears: the take runs, names it and exits 66")
        func waitingSourceNeverAppears() throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("never-appears") + "/take.wav"
            let result = try MicmonProcess.run([
                "record", path, "-s", server.name, "-n", "rec-nobody", "-p", server.source.outputPorts[0], "-p",
                "nobody:out_*", "--duration", "1", "--allow-unconnected", "--json",
            ])
            #expect(result.exitCode == 66, "stderr: \(result.stderr)")
            #expect(
                result.stderr.contains("in_2 was never connected to its source 'nobody:out_*'"), "\(result.stderr)")
            #expect(!result.stderr.contains("in_1 was never connected"), "\(result.stderr)")
            #expect(try TakeCheck.verify(path: path).frameCount == server.sampleRate)
        }
    }
}
