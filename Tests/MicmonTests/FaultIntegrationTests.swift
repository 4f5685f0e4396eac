import DSP
import Foundation
import Glibc
import Platform
import SoundFile
import Testing

extension JackIntegrationTests {
    /// Things going wrong mid-take: a stalled writer, a full disk, a period change; and the paths
    /// users give.
    @Suite("Faults")
    struct FaultIntegrationTests {
        func recordArguments(_ path: String, _ server: SharedTestServer, name: String) -> [String] {
            [
                "record", path, "-s", server.name, "-n", name, "-p", server.source.outputPorts[0], "-p",
                server.source.outputPorts[1],
            ]
        }

        /// The take matches the reference signal except inside `drops` (start, length), which must
        /// be silence; the source keeps counting through a drop.
        static func verifyWithDrops(_ path: String, drops: [(Int, Int)]) throws -> (frames: Int, mismatches: Int) {
            let samples = try SoundFileReader(path: path).readAllFloats()
            let frames = samples.count / 2
            let match = samples.withUnsafeBufferPointer {
                ReferenceSignal.match(interleaved: UnsafeBufferPointer(rebasing: $0[0 ..< 2 * min(frames, 1000)]))
            }
            guard let start = match.startFrame else { return (frames, frames) }
            var mismatches = 0
            for i in 0 ..< frames {
                let inDrop = drops.contains { i >= $0.0 && i < $0.0 + $0.1 }
                let expected: (Float, Float) =
                    inDrop
                    ? (0, 0)
                    : (
                        ReferenceSignal.value(channel: 0, frame: start + UInt64(i)),
                        ReferenceSignal.value(channel: 1, frame: start + UInt64(i))
                    )
                if samples[2 * i] != expected.0 || samples[2 * i + 1] != expected.1 { mismatches += 1 }
            }
            return (frames, mismatches)
        }

        @Test("a stalled writer: drops are counted, listed, silent in place; the file keeps the take's length; exit 75")
        func writerStall() throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("stall") + "/take.wav"
            let result = try MicmonProcess.run(
                recordArguments(path, server, name: "stall") + ["--duration", "8", "--json"],
                environment: ["MICMON_TEST_WRITER_STALL_SECONDS": "6"], timeout: 40)
            #expect(result.exitCode == 75, "stderr: \(result.stderr)")
            let summary = try #require(
                result.stdout.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") })
            // "drops":[{"start_frame":N,"length":M,...}]
            let drops = summary.matches(of: /"start_frame":(\d+),"length":(\d+)/).map {
                (Int($0.output.1)!, Int($0.output.2)!)
            }
            #expect(!drops.isEmpty, "summary: \(summary)")
            let dropped = drops.map(\.1).reduce(0, +)
            #expect(summary.contains("\"frames_dropped\":\(dropped)"))
            #expect(dropped >= server.sampleRate, "only \(dropped) frames dropped in a 6 s stall with a 4 s ring")
            let (frames, mismatches) = try Self.verifyWithDrops(path, drops: drops)
            #expect(frames == 8 * server.sampleRate)
            #expect(mismatches == 0)
            #expect(result.stderr.contains("frames were dropped"))
        }

        @Test(
            "a full disk: the error is reported once, the file holds everything up to it, exit 74",
            .enabled(if: TestEnvironment.runs(needing: TestEnvironment.isRoot), "needs root to mount a small tmpfs"))
        func fullDisk() throws {
            try TestEnvironment.require(TestEnvironment.isRoot, "needs root to mount a small tmpfs (CI runs as root)")
            let server = try SharedTestServer.require()
            let mountPoint = TestEnvironment.scratchFolder("fulldisk")
            try #require(Shell.run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint) == 0)
            defer { _ = Shell.run("umount", mountPoint) }
            let path = mountPoint + "/take.wav"
            let result = try MicmonProcess.run(
                recordArguments(path, server, name: "fulldisk") + ["--duration", "30", "--min-free", "0"], timeout: 40)
            #expect(result.exitCode == 74, "stderr: \(result.stderr)")
            let errors = result.stderr.split(separator: "\n").filter { $0.contains("cannot write") }
            #expect(errors.count == 1, "stderr: \(result.stderr)")
            #expect(result.stdout.contains("the file could not be written"))
            let (frames, mismatches) = try Self.verifyWithDrops(path, drops: [])
            #expect(frames > server.sampleRate, "only \(frames) frames kept")
            #expect(mismatches == 0)
        }

        @Test(
            "a read-only folder is refused before anything starts",
            .enabled(if: TestEnvironment.runs(needing: TestEnvironment.isRoot), "needs root to mount a read-only tmpfs")
        )
        func readOnlyFolder() throws {
            try TestEnvironment.require(
                TestEnvironment.isRoot, "needs root to mount a read-only tmpfs (CI runs as root)")
            let mountPoint = TestEnvironment.scratchFolder("readonly")
            try #require(Shell.run("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", mountPoint) == 0)
            defer { _ = Shell.run("umount", mountPoint) }
            let result = try MicmonProcess.run(
                ["record", mountPoint + "/take.wav", "-s", "micmon-no-such-server"], timeout: 20)
            #expect(result.exitCode == 64)
            #expect(result.stderr.contains("Read-only file system"), "stderr: \(result.stderr)")
        }

        @Test("file names with spaces and unicode work")
        func spacesAndUnicode() throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("names") + "/take with spaces – Grüße 🎙.wav"
            let result = try MicmonProcess.run(
                recordArguments(path, server, name: "names") + ["--duration", "1"], timeout: 20)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let outcome = try TakeCheck.verify(path: path)
            #expect(outcome.frameCount == server.sampleRate && outcome.isExact)
            #expect(result.stdout.contains("Grüße 🎙.wav"))
        }

        @Test("another client disconnects an input: micmon reconnects it at once and says so")
        func disconnectedByAnotherClient() throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("disconnect") + "/take.wav"
            let source = server.source.outputPorts[0]
            let child = try MicmonProcess([
                "record", path, "-s", server.name, "-n", "disc-rec", "-p", source, "-p",
                server.source.outputPorts[1], "--duration", "3", "--json",
            ])
            #expect(child.waitUntilRecorded(seconds: 1), "micmon did not record 1 s: \(child.stderrSoFar)")
            let cut = try Tool.run(["jack_disconnect", "-s", server.name, source, "disc-rec:in_1"])
            #expect(cut.status == 0, "\(cut.output)")
            #expect(
                child.waitUntilStderr(contains: "in_1: source \(source) is back; reconnected", timeout: 10),
                "stderr: \(child.stderrSoFar)")
            let result = child.wait(timeout: 20)
            #expect(
                result.stdout.contains("\"event\":\"source_back\",\"input\":\"in_1\""), "\(result.stdout.suffix(800))")
            #expect(!result.stderr.contains("in_2:"), "stderr: \(result.stderr)")
            // Exit 0: the input was connected before and after the cut (never "never connected").
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
        }

        @Test("a source that quits mid-take reads as silence, is reported, and is reconnected when it returns")
        func sourceGoneAndBack() throws {
            let server = try SharedTestServer.require()
            var source: TestSignalSource? = try TestSignalSource.reference(
                serverName: server.name, clientName: "route-src")
            let path = TestEnvironment.scratchFolder("route") + "/take.wav"
            let seconds = 8
            let child = try MicmonProcess([
                "record", path, "-s", server.name, "-n", "route-rec", "-p", "route-src:out_*",
                "--duration", String(seconds), "--json",
            ])
            // The source quits after 1.5 s of take and comes back once micmon has seen both ports go
            // and 1 s more is taken (silence); each wait has its own generous timeout.
            #expect(child.waitUntilRecorded(seconds: 1.5), "micmon did not report 1.5 s recorded: \(child.stderrSoFar)")
            source?.stop()
            source = nil
            #expect(
                child.waitUntilStderr(contains: "in_2: source route-src:out_2 went away"),
                "stderr: \(child.stderrSoFar)")
            #expect(child.waitUntilRecorded(seconds: 3.5))
            source = try TestSignalSource.reference(serverName: server.name, clientName: "route-src")
            let result = child.wait(timeout: 30)
            source?.stop()
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("in_1: source route-src:out_1 went away"), "stderr: \(result.stderr)")
            #expect(result.stderr.contains("in_1: source route-src:out_1 is back; reconnected"))
            #expect(result.stdout.contains("\"event\":\"source_gone\",\"input\":\"in_2\""))
            #expect(result.stdout.contains("\"event\":\"source_back\",\"input\":\"in_2\""))
            #expect(result.stdout.contains("\"connected\":false"))
            // The take: the first source, then silence, then the second source, each exact.
            let samples = try SoundFileReader(path: path).readAllFloats()
            #expect(samples.count == seconds * server.sampleRate * 2)
            var segments: [Range<Int>] = []
            var start: Int?
            for frame in 0 ..< samples.count / 2 {
                let silent = samples[2 * frame] == 0 && samples[2 * frame + 1] == 0
                if !silent && start == nil { start = frame }
                if silent, let begun = start {
                    segments.append(begun ..< frame)
                    start = nil
                }
            }
            if let begun = start { segments.append(begun ..< samples.count / 2) }
            let long = segments.filter { $0.count > server.sampleRate / 10 }
            #expect(long.count == 2, "segments: \(segments.prefix(10))")
            for (index, segment) in long.enumerated() {
                // The source's two ports go one at a time and the inputs reconnect with two
                // jack_connect calls, so the first segment may end, and the second begin, with a
                // period or two where only one input has its source: check up to 2048 frames before
                // the first's end and from 2048 frames into the second.
                let from = segment.lowerBound + (index == 0 ? 0 : 2048)
                let to = segment.upperBound - (index == 0 ? 2048 : 0)
                let match = samples.withUnsafeBufferPointer {
                    ReferenceSignal.match(interleaved: UnsafeBufferPointer(rebasing: $0[2 * from ..< 2 * to]))
                }
                #expect(match.startFrame != nil && match.mismatchedFrames == 0, "segment \(segment): \(match)")
            }
        }

        /// The server here is started with jackd directly and probed with jack_wait: the test
        /// process itself must stay a client of the shared server only.
        @Test("--wait-server: the take is finalized, micmon waits, then goes on into take-2.wav")
        func waitForServer() throws {
            let name = "micmon-wait-\(getpid())"
            var server = try TestJackServer.start(name)
            let folder = TestEnvironment.scratchFolder("wait")
            let child = try MicmonProcess([
                "record", folder + "/take.wav", "-s", name, "-p", "system:capture_*", "--wait-server", "--json",
            ])
            #expect(child.waitUntilRecorded(seconds: 1.5), "micmon did not report 1.5 s recorded: \(child.stderrSoFar)")
            server.signal(SIGTERM)
            server.wait(timeout: 10)
            #expect(child.waitUntilStderr(contains: "waiting for server '\(name)'"), "stderr: \(child.stderrSoFar)")
            #expect(child.process.isRunning, "micmon should be waiting for the server")
            server = try TestJackServer.start(name)
            #expect(child.waitUntilStderr(contains: "continuing into"), "stderr: \(child.stderrSoFar)")
            // The second take's meter lines count from its own start.
            let secondTake = TestEnvironment.waitUntil(timeout: 30) {
                child.stdoutSoFar.contains("take-2.wav")
                    && (child.recorded.map { $0.frames >= 3 * $0.sampleRate / 2 } ?? false)
            }
            #expect(secondTake, "the second take did not reach 1.5 s: \(child.stdoutSoFar.suffix(400))")
            child.signal(SIGINT)
            let result = child.wait(timeout: 20)
            server.signal(SIGTERM)
            server.wait(timeout: 10)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("waiting for server '\(name)'"))
            #expect(result.stderr.contains("continuing into \(folder)/take-2.wav"))
            for file in ["take.wav", "take-2.wav"] {
                let reader = try SoundFileReader(path: folder + "/" + file)
                #expect(reader.frameCount >= Int64(reader.sampleRate), "\(file): \(reader.frameCount) frames")
            }
        }

        @Test("--wait-server with --split: the files are finalized when the server goes, and the pattern goes on")
        func waitForServerWhileRotating() throws {
            let name = "micmon-waitrot-\(getpid())"
            var server = try TestJackServer.start(name)
            let folder = TestEnvironment.scratchFolder("waitrot")
            let child = try MicmonProcess([
                "record", folder + "/take-%H%M%S.wav", "-s", name, "-p", "system:capture_*", "--split", "1s",
                "--wait-server", "--json",
            ])
            #expect(child.waitUntilRecorded(seconds: 2.5), "micmon did not report 2.5 s recorded: \(child.stderrSoFar)")
            server.signal(SIGTERM)
            server.wait(timeout: 10)
            #expect(child.waitUntilStderr(contains: "waiting for server '\(name)'"), "stderr: \(child.stderrSoFar)")
            let before = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
            server = try TestJackServer.start(name)
            let goesOn = TestEnvironment.waitUntil(timeout: 30) {
                let now = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
                return now.filter { !before.contains($0) && $0.hasSuffix(".wav") }.count >= 2
            }
            #expect(goesOn, "no new files after the server came back: \(child.stderrSoFar.suffix(400))")
            child.signal(SIGINT)
            let result = child.wait(timeout: 20)
            server.signal(SIGTERM)
            server.wait(timeout: 10)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let all = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
            let files = all.filter { $0.hasSuffix(".wav") }
            // Every file is whole and at most a split long, with its sidecar; none is left empty
            // (the file made ahead of a boundary the first take never reached is removed).
            #expect(all.count == 2 * files.count, "\(all)")
            #expect(files.allSatisfy { $0.hasPrefix("take-") && all.contains($0 + ".json") }, "\(all)")
            #expect(files.count >= 4, "\(files)")
            for file in files {
                let reader = try SoundFileReader(path: folder + "/" + file)
                #expect(
                    reader.frameCount > 0 && reader.frameCount <= Int64(reader.sampleRate),
                    "\(file): \(reader.frameCount)")
            }
            #expect(before.filter { $0.hasSuffix(".wav") }.count >= 2, "\(before)")
        }

        /// The counter source's in_1 ramp passes -0.5 dBFS once every 65536 frames and falls below
        /// -1 dBFS between, so with `--hang 2` a triggered take never ends by itself: the server
        /// goes while one records, and the burst after the restart starts the next.
        @Test(
            "--wait-server with --trigger: the take cut by the server's loss is finalized exact; micmon waits, re-arms on the new server, and its burst is a new file, exact"
        )
        func waitForServerWhileTriggered() throws {
            let name = "micmon-waittrig-\(getpid())"
            var server = try TestJackServer.start(name)
            var source = try ReferencePlayer.start(server: name, name: "trig-src")
            defer {
                source.signal(SIGTERM)
                _ = source.wait(timeout: 10)
                server.signal(SIGTERM)
                server.wait(timeout: 10)
            }
            #expect(source.waitUntilRunning(seconds: 0.3), "the source did not start: \(source.stderrSoFar)")
            let folder = TestEnvironment.scratchFolder("waittrig")
            let rate = 48000
            let preRoll = rate / 4
            // --force: the run's own files are never replaced, by a later take of the run either.
            let child = try MicmonProcess([
                "record", folder + "/burst.wav", "-s", name, "-n", "trig-rec", "-p", "trig-src:out_1", "-p",
                "trig-src:out_2", "--trigger", "-0.5", "--trigger-off", "-1", "--hang", "2", "--trigger-channel", "1",
                "--pre-roll", "0.25", "--wait-server", "--force", "--json", "--on-event", "echo $MICMON_EVENT",
            ])
            func triggerStarts() -> Int { child.stdoutSoFar.components(separatedBy: "\"trigger_start\"").count - 1 }
            #expect(
                TestEnvironment.waitUntil(timeout: 30) { triggerStarts() >= 1 }, "no trigger: \(child.stderrSoFar)")
            let triggeredAt = child.recorded?.frames ?? 0
            #expect(child.waitUntilRecorded(seconds: Double(triggeredAt) / Double(rate) + 0.5), "\(child.stderrSoFar)")
            server.signal(SIGTERM)
            server.wait(timeout: 10)
            _ = source.wait(timeout: 10)
            #expect(child.waitUntilStderr(contains: "waiting for server '\(name)'"), "stderr: \(child.stderrSoFar)")
            #expect(child.process.isRunning, "micmon should be waiting for the server")
            server = try TestJackServer.start(name)
            source = try ReferencePlayer.start(server: name, name: "trig-src")
            #expect(child.waitUntilStderr(contains: "continuing into"), "stderr: \(child.stderrSoFar)")
            #expect(
                TestEnvironment.waitUntil(timeout: 30) { triggerStarts() >= 2 },
                "no trigger on the new server: \(child.stderrSoFar)")
            let secondAt = child.recorded?.frames ?? 0
            #expect(child.waitUntilRecorded(seconds: Double(secondAt) / Double(rate) + 0.5), "\(child.stderrSoFar)")
            child.signal(SIGINT)
            let result = child.wait(timeout: 20)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            // One summary a server: the first ended by its loss, the second by SIGINT.
            let lines = result.stdout.split(separator: "\n")
            let summaries = lines.indices.filter { lines[$0].contains("\"type\":\"summary\"") }
            try #require(summaries.count == 2, "\(result.stdout.suffix(2000))")
            #expect(lines[summaries[0]].contains("\"reason\":\"the JACK server went away\""))
            #expect(lines[summaries[1]].contains("\"reason\":\"interrupted (SIGINT)\""))
            let takes = [lines[..<summaries[0]], lines[summaries[0] + 1 ..< summaries[1]]]
            var paths: [String] = []
            for (index, take) in takes.enumerated() {
                let text = take.filter { $0.contains("\"type\":\"event\"") }.joined(separator: "\n")
                let files = try JackIntegrationTests.RotationIntegrationTests.files(
                    String(lines[summaries[index]]) + "\n")
                let starts = JackIntegrationTests.RotationIntegrationTests.eventFrames(text, "trigger_start")
                try #require(files.count == 1 && starts.count == 1, "take \(index + 1): \(text.suffix(1500))")
                let file = files[0]
                paths.append(file.path)
                // Whole and exact up to its end; it begins with the pre-roll before the crossing.
                let outcome = try TakeCheck.verify(path: file.path)
                #expect(outcome.isExact, "\(file.path): first mismatch at \(outcome.firstMismatch ?? -1)")
                #expect(outcome.frameCount == file.frames && file.frames == file.takeEnd - file.takeStart)
                #expect(file.takeStart == max(0, starts[0] - preRoll), "\(file.path): \(file)")
                #expect(file.frames >= rate / 2, "\(file.path): \(file.frames) frames")
                let summary = lines[summaries[index]]
                let frames = try #require(summary.firstMatch(of: /"frames":(\d+)/).flatMap { Int($0.output.1) })
                let armed = try #require(summary.firstMatch(of: /"frames_armed":(\d+)/).flatMap { Int($0.output.1) })
                // The take ran in it to the end (the server's loss, then SIGINT): the summary counts
                // its frames, and the time armed before it apart.
                #expect(
                    frames == file.frames && file.takeEnd == frames + armed, "take \(index + 1): \(file), \(summary)")
            }
            #expect(paths == [folder + "/burst.wav", folder + "/burst-2.wav"], "\(paths)")
            let wavs = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".wav") }
            #expect(wavs.sorted() == ["burst-2.wav", "burst.wav"], "\(wavs)")
            // Each take's log is followed from its start: both trigger starts ran the hook.
            let hooks = lines.filter { $0.contains("\"type\":\"hook\"") && $0.contains("\"event\":\"trigger_start\"") }
            #expect(hooks.count == 2 && hooks.allSatisfy { $0.contains("\"status\":\"ok\"") }, "\(hooks)")
        }

        /// jack_metro is the source: an outside client of the private server, which goes away
        /// with it and is started again only after the server is back.
        @Test(
            "--wait-server: sources that return after the server are waited for; a taken continuation name is skipped")
        func waitForSources() throws {
            let name = "micmon-waitsrc-\(getpid())"
            // Ready once its port is listed: a micmon started before it would refuse the pattern.
            func startSource() throws -> ChildProcess {
                let metro = try ChildProcess(
                    ["jack_metro", "-b", "120", "-n", "metro"], environment: ["JACK_DEFAULT_SERVER": name])
                let listed = TestEnvironment.waitUntil(timeout: 20) {
                    (try? Tool.run(["jack_lsp", "-s", name]))?.output.contains("metro:120_bpm") ?? false
                }
                #expect(listed, "jack_metro's port did not appear on \(name)")
                return metro
            }
            var server = try TestJackServer.start(name)
            var source = try startSource()
            let folder = TestEnvironment.scratchFolder("waitsrc")
            // An earlier run's continuation: never overwritten without --force.
            let taken = folder + "/take-2.wav"
            #expect(Shell.run("sh", "-c", "printf keep > '\(taken)'") == 0)
            let child = try MicmonProcess([
                "record", folder + "/take.wav", "-s", name, "-p", "metro:120_bpm", "--wait-server", "--json",
            ])
            #expect(child.waitUntilRecorded(seconds: 1), "micmon did not report 1 s recorded: \(child.stderrSoFar)")
            source.signal(SIGTERM)
            server.signal(SIGTERM)
            server.wait(timeout: 10)
            source.wait(timeout: 10)
            #expect(child.waitUntilStderr(contains: "waiting for server '\(name)'"), "stderr: \(child.stderrSoFar)")
            server = try TestJackServer.start(name)
            #expect(
                child.waitUntilStderr(contains: "waiting for source port(s) 'metro:120_bpm'"),
                "stderr: \(child.stderrSoFar)")
            #expect(child.process.isRunning, "micmon should wait for its source, not give up")
            source = try startSource()
            #expect(child.waitUntilStderr(contains: "continuing into"), "stderr: \(child.stderrSoFar)")
            let secondTake = TestEnvironment.waitUntil(timeout: 30) {
                child.stdoutSoFar.contains("take-3.wav") && (child.recorded.map { $0.frames >= $0.sampleRate } ?? false)
            }
            #expect(secondTake, "the second take did not reach 1 s: \(child.stdoutSoFar.suffix(400))")
            child.signal(SIGINT)
            let result = child.wait(timeout: 20)
            source.signal(SIGTERM)
            server.signal(SIGTERM)
            source.wait(timeout: 10)
            server.wait(timeout: 10)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("\(taken) exists; continuing into \(folder)/take-3.wav instead"))
            #expect(readText(taken) == "keep", "the taken continuation name was overwritten")
            let reader = try SoundFileReader(path: folder + "/take-3.wav")
            #expect(reader.frameCount >= Int64(reader.sampleRate), "take-3.wav: \(reader.frameCount) frames")
        }

        @Test("a period change mid-take (jack_bufsize) loses and repeats nothing")
        func periodChange() throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("bufsize") + "/take.wav"
            let child = try MicmonProcess(
                recordArguments(path, server, name: "bufsize") + ["--duration", "6", "--json"])
            #expect(child.waitUntilRecorded(seconds: 1.5), "micmon did not report 1.5 s recorded: \(child.stderrSoFar)")
            let original = server.source.client.bufferSize
            #expect(
                Shell.run("jack_bufsize", String(original / 2), environment: ["JACK_DEFAULT_SERVER": server.name]) == 0)
            #expect(child.waitUntilRecorded(seconds: 3.5), "micmon did not report 3.5 s recorded: \(child.stderrSoFar)")
            #expect(Shell.run("jack_bufsize", String(original), environment: ["JACK_DEFAULT_SERVER": server.name]) == 0)
            let result = child.wait(timeout: 30)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let outcome = try TakeCheck.verify(path: path)
            #expect(outcome.frameCount == 6 * server.sampleRate)
            #expect(outcome.isExact, "first mismatch at \(outcome.firstMismatch ?? -1)")
        }
    }
}

/// Runs a command and returns its exit status (output discarded).
enum Shell {
    @discardableResult
    static func run(_ arguments: String..., environment: [String: String] = [:]) -> Int32 {
        guard let child = try? ChildProcess(arguments, environment: environment.mapValues { $0 }) else { return -1 }
        let ending = child.wait(timeout: 60)
        return ending.wasKilledBySignal ? -ending.code : ending.code
    }
}
