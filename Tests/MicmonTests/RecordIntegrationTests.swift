import Engine
import Foundation
import Glibc
import Jack
import SoundFile
import Testing

/// `micmon record` against a real JACK server, fed by `TestSignalSource`; every take is checked
/// sample for sample.
extension JackIntegrationTests {
    @Suite("Recording against a real JACK server")
    struct RecordIntegrationTests {
        static let takeSeconds = 20.0

        /// Every lossless container × encoding libsndfile accepts (flac has no float or 32-bit; the
        /// lossy containers are checked in LossyRecordIntegrationTests).
        static let formats: [(ContainerFormat, SampleEncoding)] = ContainerFormat.allCases.filter { !$0.isLossy }
            .flatMap {
                container in
                [SampleEncoding.float, .pcm24, .pcm16, .pcm32].compactMap { encoding in
                    AudioFileFormat(container: container, encoding: encoding).isWritable() ? (container, encoding) : nil
                }
            }

        /// All formats record the same source at once (one 20 s window for the whole matrix), then
        /// each take is checked on its own.
        @Test("a 20 s take is sample-exact in every format and encoding")
        func sampleExactTakes() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("exact")
            let takes = try Self.formats.map { container, encoding in
                let path = folder + "/take-\(encoding.rawValue).\(container.fileExtension)"
                let child = try MicmonProcess(
                    [
                        "record", path, "-s", server.name, "-n", "rec-\(container.rawValue)-\(encoding.rawValue)",
                        "-p", server.source.outputPorts[0], "-p", server.source.outputPorts[1],
                        "--format", container.rawValue, "--bits", encoding.rawValue, "--duration",
                        String(Self.takeSeconds), "--json",
                    ])
                return (container, encoding, path, child)
            }
            for (container, encoding, path, child) in takes {
                let label = "\(container.rawValue)/\(encoding.rawValue)"
                let result = child.wait(timeout: Self.takeSeconds + 60)
                #expect(result.exitCode == 0, "\(label): stderr: \(result.stderr)")
                let reader = try SoundFileReader(path: path)
                #expect(reader.container == container, "\(label)")
                #expect(reader.encoding == encoding, "\(label)")
                #expect(reader.sampleRate == server.sampleRate, "\(label)")
                let outcome = try TakeCheck.verify(path: path)
                #expect(outcome.frameCount == Int(Self.takeSeconds * Double(server.sampleRate)), "\(label)")
                #expect(outcome.firstSourceFrame != nil, "\(label): the take does not start on the test signal")
                #expect(outcome.isExact, "\(label): first mismatch at frame \(outcome.firstMismatch ?? -1)")
                // A take recorded through a crash-safe intermediate (FLAC) leaves none behind.
                #expect(
                    !FileManager.default.fileExists(atPath: path + ".partial.w64"), "\(label): the intermediate is left"
                )
                // micmon's own counters: every frame taken was written, none dropped.
                let summary = try #require(
                    result.stdout.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") },
                    "\(label): no summary line: \(result.stdout.suffix(400))")
                #expect(summary.contains("\"frames_dropped\":0"), "\(label): \(summary)")
                #expect(
                    summary.contains("\"frames\":\(Int(Self.takeSeconds) * server.sampleRate)"), "\(label): \(summary)")
            }
        }

        @Test(
            "SIGINT, SIGTERM and SIGHUP (a closed terminal) each finalize a valid take and say why it ended",
            arguments: [
                (SIGINT, "interrupted (SIGINT)"), (SIGTERM, "terminated (SIGTERM)"), (SIGHUP, "hung up (SIGHUP)"),
            ])
        func stopSignalFinalizes(signal: Int32, reason: String) throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("signal-\(signal)") + "/take.wav"
            let child = try MicmonProcess([
                "record", path, "-s", server.name, "-n", "rec-signal-\(signal)",
                "-p", server.source.outputPorts[0], "-p", server.source.outputPorts[1], "--json",
            ])
            let recorded = 2 * server.sampleRate
            #expect(child.waitUntilRecorded(seconds: 2), "micmon did not report 2 s recorded: \(child.stderrSoFar)")
            child.signal(signal)
            let result = child.wait(timeout: 20)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let outcome = try TakeCheck.verify(path: path)
            // The signal finalizes everything taken: at least what micmon had reported before it.
            #expect(outcome.frameCount >= recorded, "only \(outcome.frameCount) frames")
            #expect(outcome.isExact, "first mismatch at frame \(outcome.firstMismatch ?? -1)")
            #expect(
                result.stdout.contains("\"type\":\"summary\"") && result.stdout.contains("\"reason\":\"\(reason)\""),
                "\(result.stdout.suffix(400))")
        }

        @Test(
            "kill -9 leaves a file that opens, holding all but the last half second (FLAC: its intermediate)",
            arguments: [ContainerFormat.wav, .w64, .rf64, .caf, .flac])
        func killLeavesReadableFile(container: ContainerFormat) throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("kill") + "/take.\(container.fileExtension)"
            let child = try MicmonProcess([
                "record", path, "-s", server.name, "-n", "rec-kill-\(container.rawValue)",
                "-p", server.source.outputPorts[0], "-p", server.source.outputPorts[1], "--json",
            ])
            // Kill it once it has reported 3 s taken.
            #expect(child.waitUntilRecorded(seconds: 3), "micmon did not report 3 s recorded: \(child.stderrSoFar)")
            child.signal(SIGKILL)
            let result = child.wait(timeout: 10)
            #expect(result.wasKilledBySignal)
            // FLAC cannot survive a kill (libsndfile writes its STREAMINFO only at close: the
            // length is unknown): it is recorded through FILE.partial.w64, which must survive.
            let survivor = container == .flac ? path + ".partial.w64" : path
            let reader = try SoundFileReader(path: survivor)
            if container == .flac {
                #expect(reader.container == .w64)
                #expect(reader.encoding == .float)  // the samples as JACK delivered them
            }
            let outcome = try TakeCheck.verify(path: survivor)
            // The header knows the length: it counts exactly the frames that read back.
            #expect(reader.frameCount == Int64(outcome.frameCount), "the header says \(reader.frameCount) frames")
            // 3 s, less the writer's last 0.5 s (it wakes twice a second) and its last write's size.
            #expect(
                outcome.frameCount >= Int(2.3 * Double(server.sampleRate)), "only \(outcome.frameCount) frames survived"
            )
            #expect(outcome.isExact, "first mismatch at frame \(outcome.firstMismatch ?? -1)")
        }

        /// libjack talks to one server per process, so this test's server is not started here:
        /// `micmon demo --record` runs its own private server, which the test then kills.
        @Test("--loudness-mode off records exactly and measures no loudness")
        func loudnessOff() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("loudness-off")
            let path = folder + "/take.wav"
            let result = try MicmonProcess.run(
                [
                    "record", path, "-s", server.name, "-n", "rec-loudness-off", "-p", server.source.outputPorts[0],
                    "-p", server.source.outputPorts[1], "--duration", "3", "--json", "--loudness-mode", "off",
                ], timeout: 60)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let outcome = try TakeCheck.verify(path: path)
            #expect(outcome.isExact, "first mismatch at frame \(outcome.firstMismatch ?? -1)")
            #expect(outcome.frameCount == 3 * server.sampleRate)
            // No analysis thread: no loudness or true peak anywhere in the output.
            #expect(!result.stdout.contains("integrated_lufs"), "\(result.stdout.suffix(400))")
            #expect(!result.stdout.contains("true_peak_dbtp"))
            #expect(result.stdout.contains("\"type\":\"summary\""))
        }

        @Test("the server stopping mid-take finalizes the file and exits 69")
        func serverLossFinalizes() throws {
            let path = TestEnvironment.scratchFolder("loss") + "/take.wav"
            let child = try MicmonProcess(["demo", "--record", path, "--json"])
            let reported = child.waitUntilRecorded(seconds: 3, timeout: 60)
            try #require(child.process.isRunning, "micmon demo ended early: \(child.wait().stderr)")
            try #require(reported, "micmon demo did not report 3 s recorded: \(child.stderrSoFar)")
            let serverName = "micmon-demo-\(child.process.processIdentifier)"
            let jackd = try #require(ProcessTable.jackdPids(serverName: serverName).first, "no jackd for \(serverName)")
            // SIGTERM: the server shuts down the way an interface removal or `jack_control stop`
            // does. (A SIGKILLed jackd also keeps its slot in JACK's 8-server shm registry.)
            kill(jackd, SIGTERM)
            let result = child.wait(timeout: 20)
            #expect(result.exitCode == 69, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("shut down"))
            #expect(result.stdout.contains("the JACK server went away"), "\(result.stdout.suffix(400))")
            let reader = try SoundFileReader(path: path)
            #expect(reader.channelCount == 2)
            #expect(reader.frameCount >= Int64(2.5 * Double(reader.sampleRate)), "only \(reader.frameCount) frames")
            // The demo voice is in the file: it is not silence.
            let samples = reader.readAllFloats()
            #expect(samples.count == Int(reader.frameCount) * 2)
            #expect(samples.contains { $0.magnitude > 0.01 })
        }
    }
}

/// Finds jackd processes by server name (/proc), for tests that must stop a child's child.
enum ProcessTable {
    static func jackdPids(serverName text: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry),
                let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
            else { return nil }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.first.map { $0.hasSuffix("jackd") } == true && arguments.contains(text) ? pid : nil
        }
    }
}
