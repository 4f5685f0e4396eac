import Engine
import Foundation
import SoundFile
import Testing

/// Configurations micmon cannot hold are refused before anything is created: one line on
/// stderr, exit 64, no file. A channel count the format cannot hold (FLAC above 8 channels, MP3
/// above 2), buffers over `CaptureConfiguration.bufferMemoryCap`, more inputs than the server's
/// port table has room for.
extension JackIntegrationTests {
    @Suite("Refusals of configurations too large")
    struct ScaleRefusalTests {
        /// `record PATH` of `count` inputs, from system:capture_1 … system:capture_count.
        static func arguments(_ path: String, server: String, count: Int) -> [String] {
            ["record", path, "-s", server, "--duration", "1"]
                + (1 ... count).flatMap { ["-p", "system:capture_\($0)"] }
        }

        /// A private jackd with `captureChannels` capture ports.
        static func server(
            _ name: String, captureChannels: Int, sampleRate: Int = 48000, periodFrames: Int = 256,
            portMaximum: Int? = nil
        ) throws -> PrivateJackServer {
            try PrivateJackServer(
                name: "micmon-\(name)-\(getpid())-\(UUID().uuidString.prefix(4))", sampleRate: sampleRate,
                periodFrames: periodFrames, captureChannels: captureChannels, playbackChannels: 2,
                portMaximum: portMaximum
            ).notingRestart()
        }

        /// The lines micmon wrote to stderr.
        static func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }

        @Test(
            "a channel count the format cannot hold: FLAC with 9, MP3 with 3",
            arguments: [("take.flac", 9), ("take.mp3", 3)])
        func formatChannelLimit(file: String, count: Int) throws {
            let server = try Self.server("channels", captureChannels: count)
            defer { server.stop() }
            let folder = TestEnvironment.scratchFolder("format-channels")
            let path = folder + "/" + file
            let result = try MicmonProcess.run(Self.arguments(path, server: server.name, count: count), timeout: 30)
            #expect(result.exitCode == 64, "stderr: \(result.stderr)")
            #expect(Self.lines(result.stderr).count == 1, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("\(count) channels"), "stderr: \(result.stderr)")
            let left = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(left.isEmpty, "a refused take left \(left)")
        }

        @Test("buffers over the memory cap: refused before a port is registered or a file made")
        func memoryCap() throws {
            // At 192 kHz: the smallest channel count whose buffers (capture and analysis ring)
            // exceed the cap.
            let rate = 192_000
            var count = 1
            while CaptureConfiguration.bufferBytes(
                channels: count, sampleRate: rate, ringSeconds: CaptureConfiguration().ringSeconds,
                records: true, analyses: true) <= CaptureConfiguration.bufferMemoryCap
            {
                count += 1
            }
            // 1024-frame periods (5.3 ms): the take below is about fitting, not about keeping up
            // with 1.3 ms periods on a loaded machine.
            let server = try Self.server("cap", captureChannels: count, sampleRate: rate, periodFrames: 1024)
            defer { server.stop() }
            let folder = TestEnvironment.scratchFolder("memory-cap")
            let path = folder + "/take.wav"
            let result = try MicmonProcess.run(Self.arguments(path, server: server.name, count: count), timeout: 30)
            #expect(result.exitCode == 64, "stderr: \(result.stderr)")
            #expect(Self.lines(result.stderr).count == 1, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("cap of"), "stderr: \(result.stderr)")
            let left = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(left.isEmpty, "a refused take left \(left)")

            // One channel fewer fits: the same server records it. A host stall may still cost it a
            // period; that is exit 75 with the loss reported and silence in its place, never 64.
            let fits = try MicmonProcess.run(Self.arguments(path, server: server.name, count: count - 1), timeout: 30)
            #expect(fits.exitCode == 0 || fits.exitCode == 75, "stderr: \(fits.stderr)")
            if fits.exitCode == 75 { #expect(fits.stderr.contains("dropped"), "stderr: \(fits.stderr)") }
            let reader = try SoundFileReader(path: path)
            #expect(reader.frameCount == Int64(rate) && reader.channelCount == count - 1)
        }

        @Test("64 channels at 48 kHz and 16 at 192 kHz fit the cap; 64 at 192 kHz does not")
        func capHoldsTheSupportedSizes() {
            func bytes(_ channels: Int, _ rate: Int) -> Int {
                CaptureConfiguration.bufferBytes(
                    channels: channels, sampleRate: rate, ringSeconds: 4, records: true, analyses: true)
            }
            #expect(bytes(64, 48000) <= CaptureConfiguration.bufferMemoryCap)
            #expect(bytes(64, 96000) <= CaptureConfiguration.bufferMemoryCap)
            #expect(bytes(16, 192_000) <= CaptureConfiguration.bufferMemoryCap)
            #expect(bytes(64, 192_000) > CaptureConfiguration.bufferMemoryCap)
        }

        @Test("more inputs than the server's port table holds (jackd --port-max)")
        func moreInputsThanTheServerHolds() throws {
            // 12 capture and 2 playback ports in a table of 16: no room for 12 inputs.
            let server = try Self.server("portmax", captureChannels: 12, portMaximum: 16)
            defer { server.stop() }
            let folder = TestEnvironment.scratchFolder("port-max")
            let path = folder + "/take.wav"
            let result = try MicmonProcess.run(Self.arguments(path, server: server.name, count: 12), timeout: 30)
            #expect(result.exitCode == 64, "stderr: \(result.stderr)")
            #expect(Self.lines(result.stderr).count == 1, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("--port-max"), "stderr: \(result.stderr)")
            let left = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(left.isEmpty, "a refused take left \(left)")
        }
    }
}
