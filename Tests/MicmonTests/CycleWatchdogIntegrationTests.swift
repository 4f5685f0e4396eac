import DSP
import Foundation
import Glibc
import SoundFile
import Testing

extension JackIntegrationTests {
    /// The wall-clock watchdog on jackd2: a source client upstream of micmon is stopped
    /// (SIGSTOP) on a synchronous server, so the graph never calls micmon again while the server
    /// keeps answering. Each test has a private `jackd -S -d dummy` (started with jackd directly:
    /// the test process stays a client of the shared server only) and runs the source as a
    /// child (`micmon play` of the reference signal), so stopping it stops no thread of ours.
    @Suite("Wall-clock watchdog")
    struct CycleWatchdogIntegrationTests {
        /// A private synchronous server and a counter source on it.
        final class StalledGraph {
            let name: String
            let server: ChildProcess
            let source: MicmonProcess

            init(_ tag: String) throws {
                name = "micmon-stall-\(tag)-\(getpid())"
                // A server that does not answer within 20 s is stopped and started once more; one
                // that ends at once (jackd's 8-server registry in /dev/shm is full) fails the test.
                var started: ChildProcess?
                let log = TestEnvironment.scratchFolder("stall-jackd") + "/jackd.log"
                for _ in 1 ... 2 where started == nil {
                    let child = try ChildProcess(
                        ["jackd", "-n", name, "-S", "-d", "dummy", "-r", "48000", "-p", "256"], stdout: log, stderr: log
                    )
                    if NetJackPair.waitForServer(name, child) {
                        started = child
                    } else {
                        child.signal(SIGTERM)
                        child.wait(timeout: 5)
                    }
                }
                let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                server = try #require(started, "jackd -n \(name) did not start, twice: \(said.suffix(300))")
                source = try ReferencePlayer.start(server: name, name: "stall-src")
                try #require(source.waitUntilRunning(seconds: 0.3), "the source did not start: \(source.stderrSoFar)")
            }

            func record(_ path: String, _ extra: [String]) throws -> MicmonProcess {
                try MicmonProcess(
                    [
                        "record", path, "-s", name, "-n", "stall-rec", "-p", "stall-src:out_1", "-p", "stall-src:out_2",
                        "--json",
                    ]
                        + extra)
            }

            deinit {
                source.signal(SIGCONT)
                source.signal(SIGTERM)
                _ = source.wait(timeout: 10)
                server.signal(SIGTERM)
                server.wait(timeout: 10)
            }
        }

        static func summary(_ result: MicmonProcess.Result) throws -> Substring {
            try #require(
                result.stdout.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") }, "\(result.stderr)")
        }

        static func integer(_ key: String, in line: Substring) -> Int? {
            line.firstMatch(of: try! Regex("\"\(key)\":(\\d+)")).flatMap { Int($0.output[1].substring ?? "") }
        }

        @Test("a source stopped upstream: micmon says so at once, finalizes the take and exits 76")
        func stallEndsTake() throws {
            let graph = try StalledGraph("end")
            let path = TestEnvironment.scratchFolder("stall") + "/take.wav"
            let child = try graph.record(path, ["--duration", "60"])
            #expect(child.waitUntilRecorded(seconds: 1.5), "micmon did not record 1.5 s: \(child.stderrSoFar)")
            graph.source.signal(SIGSTOP)
            // Without the watchdog micmon waits forever (killed at 30 s).
            let result = child.wait(timeout: 30)
            #expect(!result.wasKilledBySignal, "micmon did not end by itself")
            #expect(result.exitCode == 76, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("no process cycle for"), "stderr: \(result.stderr)")
            #expect(result.stderr.contains("ending the take"))
            #expect(result.stdout.contains("\"event\":\"cycles_stopped\""))
            let summary = try Self.summary(result)
            #expect(summary.contains("\"reason\":\"the graph stopped calling micmon"), "\(summary)")
            // The take is finalized and exact: everything delivered before the stall.
            let frames = try #require(Self.integer("frames", in: summary))
            let outcome = try TakeCheck.verify(path: path)
            #expect(outcome.frameCount == frames && outcome.isExact, "\(outcome), summary \(summary)")
            #expect(Self.integer("frames_missing", in: summary) == 60 * 48000 - frames)
        }

        @Test(
            "--wait-server --duration: micmon waits for cycles, and the take ends on the wall clock, missing frames said"
        )
        func durationOnWallClock() throws {
            let graph = try StalledGraph("wall")
            let path = TestEnvironment.scratchFolder("stall-wall") + "/take.wav"
            let child = try graph.record(path, ["--duration", "6", "--wait-server"])
            #expect(child.waitUntilRecorded(seconds: 1.5), "micmon did not record 1.5 s: \(child.stderrSoFar)")
            graph.source.signal(SIGSTOP)
            #expect(
                child.waitUntilStderr(contains: "waiting for cycles to resume", timeout: 10),
                "stderr: \(child.stderrSoFar)")
            let result = child.wait(timeout: 30)
            #expect(!result.wasKilledBySignal, "micmon did not end by itself")
            #expect(result.exitCode == 76, "stderr: \(result.stderr)")
            let summary = try Self.summary(result)
            #expect(summary.contains("\"reason\":\"duration reached\""), "\(summary)")
            let frames = try #require(Self.integer("frames", in: summary))
            let missing = try #require(Self.integer("frames_missing", in: summary), "\(summary)")
            #expect(frames + missing == 6 * 48000)
            #expect(frames < 6 * 48000 - 48000, "the stall lost less than a second: \(summary)")
            let outcome = try TakeCheck.verify(path: path)
            #expect(outcome.frameCount == frames && outcome.isExact, "\(outcome)")
        }

        @Test("play: a server that stops running cycles ends playback at once with exit 76")
        func stallEndsPlayback() throws {
            let graph = try StalledGraph("play")
            // The source is `micmon play` itself; with the whole server stopped no client is
            // called. (Stopped, jackd does not answer either: micmon is let go once it has said so,
            // since deactivating needs the server.)
            graph.server.signal(SIGSTOP)
            let said = graph.source.waitUntilStderr(contains: "no process cycle for", timeout: 15)
            graph.server.signal(SIGCONT)
            #expect(said, "play never noticed: \(graph.source.stderrSoFar)")
            let result = graph.source.wait(timeout: 20)
            #expect(!result.wasKilledBySignal, "play did not end by itself")
            #expect(result.exitCode == 76, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("ending playback"), "stderr: \(result.stderr)")
            #expect(result.stderr.contains("stopped calling micmon while it still answered; playback was stopped"))
            #expect(result.stdout.contains("\"event\":\"cycles_stopped\""))
            #expect(result.stdout.contains("\"reason\":\"the graph stopped calling micmon"), "\(result.stdout)")
        }

        @Test("latency: a return port whose client stopped ends the measurement at once with exit 76")
        func stallEndsLatency() throws {
            let graph = try StalledGraph("latency")
            let child = try MicmonProcess([
                "latency", "-s", graph.name, "-n", "stall-lat", "--send", "system:playback_1", "--return",
                "stall-src:out_1", "--duration", "30", "--json",
            ])
            // Let it run a while, then stop the client upstream of its return port: the graph
            // never calls micmon again. Before the watchdog it ran on to its duration and 10 s
            // more, and exited 0.
            Thread.sleep(forTimeInterval: 1.5)
            graph.source.signal(SIGSTOP)
            let result = child.wait(timeout: 20)
            #expect(!result.wasKilledBySignal, "latency did not end by itself: \(result.stderr)")
            #expect(result.exitCode == 76, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("ending the measurement"), "stderr: \(result.stderr)")
            #expect(result.stdout.contains("\"event\":\"cycles_stopped\""), "\(result.stdout)")
        }

        @Test("--wait-server: cycles that resume are reported, and the take goes on")
        func stallResumes() throws {
            let graph = try StalledGraph("resume")
            let path = TestEnvironment.scratchFolder("stall-resume") + "/take.wav"
            let child = try graph.record(path, ["--wait-server"])
            #expect(child.waitUntilRecorded(seconds: 1.5), "micmon did not record 1.5 s: \(child.stderrSoFar)")
            graph.source.signal(SIGSTOP)
            #expect(
                child.waitUntilStderr(contains: "waiting for cycles to resume", timeout: 10),
                "stderr: \(child.stderrSoFar)")
            #expect(child.process.isRunning, "micmon should wait for the cycles")
            graph.source.signal(SIGCONT)
            #expect(
                child.waitUntilStderr(contains: "process cycles resumed after", timeout: 10), "\(child.stderrSoFar)")
            let before = child.recorded?.frames ?? 0
            #expect(child.waitUntilRecorded(seconds: Double(before) / 48000 + 1), "the take did not go on")
            child.signal(SIGINT)
            let result = child.wait(timeout: 20)
            #expect(result.exitCode != 76, "stderr: \(result.stderr)")
            #expect(result.stdout.contains("\"event\":\"cycles_stopped\""))
            #expect(result.stdout.contains("\"event\":\"cycles_resumed\""))
        }
    }

    /// A `-p` pattern is matched again when its source goes away: a client that comes back under
    /// another name is reconnected (netjack2 renames a rejoining slave the same way).
    @Suite("Patterns matched again")
    struct PatternRematchIntegrationTests {
        @Test("a source client that quits and returns under another name is reconnected by the pattern")
        func renamedSourceReconnected() throws {
            let server = try SharedTestServer.require()
            var source = try ReferencePlayer.start(server: server.name, name: "mics")
            defer { source.signal(SIGTERM) }
            #expect(source.waitUntilRunning(seconds: 0.3), "the source did not start: \(source.stderrSoFar)")
            let path = TestEnvironment.scratchFolder("rematch") + "/take.wav"
            let seconds = 8
            let child = try MicmonProcess([
                "record", path, "-s", server.name, "-n", "rematch-rec", "-p", "mics*:out_*", "--duration",
                String(seconds), "--json",
            ])
            #expect(child.waitUntilRecorded(seconds: 1.5), "micmon did not record 1.5 s: \(child.stderrSoFar)")
            source.signal(SIGTERM)
            _ = source.wait(timeout: 10)
            #expect(
                child.waitUntilStderr(contains: "in_2: source mics:out_2 went away"), "stderr: \(child.stderrSoFar)")
            source = try ReferencePlayer.start(server: server.name, name: "mics-01")
            let result = child.wait(timeout: 30)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(
                result.stderr.contains("in_1: its pattern now matches mics-01:out_1; connected"), "\(result.stderr)")
            #expect(
                result.stdout.contains("\"event\":\"source_matched\",\"input\":\"in_2\",\"ports\":[\"mics-01:out_2\"]"))
            let samples = try SoundFileReader(path: path).readAllFloats()
            #expect(samples.count == seconds * server.sampleRate * 2)
            let parts = JackIntegrationTests.NetJackIntegrationTests.segments(samples, rate: server.sampleRate)
            #expect(parts.count == 2, "segments: \(parts)")
            for (index, part) in parts.enumerated() {
                let from = part.lowerBound + (index == 0 ? 0 : 2048)
                let match = samples.withUnsafeBufferPointer {
                    ReferenceSignal.match(
                        interleaved: UnsafeBufferPointer(rebasing: $0[(2 * from) ..< (2 * part.upperBound)]))
                }
                #expect(match.startFrame != nil && match.mismatchedFrames == 0, "segment \(part): \(match)")
            }
        }
    }
}
