import DSP
import Foundation
import Glibc
import SoundFile
import Testing

@testable import micmon

extension JackIntegrationTests {
    /// A recorder left running: retention of its files, the disk guard on a small tmpfs, hooks;
    /// each take checked sample for sample against the counter source.
    @Suite("Operations")
    struct OperationsIntegrationTests {
        func recordArguments(_ path: String, _ server: SharedTestServer, name: String) -> [String] {
            [
                "record", path, "-s", server.name, "-n", name, "-p", server.source.outputPorts[0], "-p",
                server.source.outputPorts[1],
            ]
        }

        func lines(_ stdout: String, type: String) -> [Substring] {
            stdout.split(separator: "\n").filter { $0.contains("\"type\":\"\(type)\"") }
        }

        /// Mounts a tmpfs of `size` under /tmp/ops-*, for `body`; unmounted after.
        func withSmallDisk(_ size: String, _ body: (String) throws -> Void) throws {
            try TestEnvironment.require(TestEnvironment.isRoot, "needs root to mount a small tmpfs (CI runs as root)")
            let mountPoint = "/tmp/ops-\(getpid())-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: mountPoint) }
            try #require(Shell.run("mount", "-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mountPoint) == 0)
            defer { _ = Shell.run("umount", mountPoint) }
            try body(mountPoint)
        }

        @Test("--on-file-closed gets the finalized file's path, frames, drops and server gaps; the take is exact")
        func fileClosedHookEnvironment() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("hook-env")
            let path = folder + "/take one.wav"
            let result = try MicmonProcess.run(
                recordArguments(path, server, name: "ops-hook-env") + [
                    "--duration", "1", "--json",
                    "--on-file-closed", "env | grep ^MICMON_ | sort > '\(folder)/env.txt'",
                ], timeout: 30)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let variables = try Self.hookEnvironment(folder + "/env.txt")
            #expect(variables["MICMON_FILE"] == path)
            #expect(variables["MICMON_FRAMES"] == String(server.sampleRate))
            #expect(variables["MICMON_DROPS"] == "0")
            #expect(variables["MICMON_SERVER_GAPS"] == "0")
            #expect(variables["MICMON_EVENT"] == "file_closed")
            #expect(variables["MICMON_TAKE_END_FRAME"] == String(server.sampleRate))
            let hook = try #require(lines(result.stdout, type: "hook").first)
            #expect(hook.contains("\"status\":\"ok\"") && hook.contains("\"frame\":\(server.sampleRate)"), "\(hook)")
            // The summary comes last, after the hook's result.
            #expect(result.stdout.split(separator: "\n").last?.contains("\"type\":\"summary\"") == true)
            let outcome = try TakeCheck.verify(path: path)
            #expect(outcome.isExact && outcome.frameCount == server.sampleRate)
        }

        /// The `MICMON_*` variables a hook wrote with `env | grep ^MICMON_ > FILE`, by name.
        static func hookEnvironment(_ path: String) throws -> [String: String] {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            return Dictionary(
                text.split(separator: "\n").map {
                    let parts = $0.split(separator: "=", maxSplits: 1)
                    return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
                }, uniquingKeysWith: { $1 })
        }

        /// On a private asynchronous jackd2, micmon is stopped (SIGSTOP) and, while it is, the
        /// server too: the driver reports an xrun of a few µs, but the server and the source ran
        /// on for the 0.6 s micmon was stopped alone, so that is micmon's own loss, silence in
        /// place (docs/timeline.md). Before, any change of the driver's stamp made it a graph-wide
        /// gap with nothing inserted: the take 0.6 s short of the server's clock, exit 0. With
        /// `--split 3s` the loss falls in the first file; each file's hook counts what lies within
        /// its take frames. (Per-file server gaps: `TakeSegmenterTests.serverGapsPerFile`.)
        @Test("--on-file-closed: micmon stopped around a server stall lost its own frames, counted in that file only")
        func lossAroundAServerStallPerFile() throws {
            let name = "micmon-hook-gap-\(getpid())"
            let server = try TestJackServer.start(name, synchronous: false)
            defer {
                server.signal(SIGCONT)
                server.signal(SIGTERM)
                server.wait(timeout: 10)
            }
            let source = try ReferencePlayer.start(server: name, name: "gap-src")
            defer {
                source.signal(SIGTERM)
                _ = source.wait(timeout: 10)
            }
            #expect(source.waitUntilRunning(seconds: 0.3), "the source did not start: \(source.stderrSoFar)")
            let folder = TestEnvironment.scratchFolder("hook-gap")
            let child = try MicmonProcess([
                "record", folder + "/take-%H%M%S.wav", "-s", name, "-n", "gap-rec", "-p", "gap-src:out_1", "-p",
                "gap-src:out_2", "--split", "3s", "--duration", "6", "--json", "--on-file-closed",
                "env | grep ^MICMON_ > '\(folder)'/env-$MICMON_TAKE_START_FRAME.txt",
            ])
            #expect(child.waitUntilRecorded(seconds: 1), "micmon did not record 1 s: \(child.stderrSoFar)")
            child.signal(SIGSTOP)
            usleep(300_000)
            server.signal(SIGSTOP)
            usleep(1_000_000)
            server.signal(SIGCONT)
            usleep(300_000)
            child.signal(SIGCONT)
            let result = child.wait(timeout: 60)
            // The source's own account of its outputs, for the judgement of the take below.
            source.signal(SIGINT)
            let sourceSummary =
                source.wait(timeout: 10).stdout.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") }
                ?? ""
            print("stall per file: source \(sourceSummary.suffix(400))")
            #expect(!result.wasKilledBySignal, "stderr: \(result.stderr)")
            #expect(result.exitCode == 75, "stderr: \(result.stderr)")
            let summary = try #require(
                result.stdout.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") }, "\(result.stderr)")
            print("stall per file: micmon \(summary.suffix(700))")
            let rate = 48000
            let timeline = JackIntegrationTests.TimelineIntegrationTests.self
            // (A loaded host may make the driver itself late by a period now and then: a short
            // graph-wide gap elsewhere is no defect; the stop is never one.)
            let serverGaps = timeline.gaps("server_gaps", in: summary)
            #expect(!serverGaps.contains { $0.1 >= rate / 10 }, "\(summary)")
            let drops = timeline.gaps("drops", in: summary)
            let long = try #require(timeline.gaps("missed_gaps", in: summary).max { $0.1 < $1.1 }, "\(summary)")
            #expect(long.1 >= rate / 10 && long.0 < 3 * rate, "the loss: \(long)")
            for start in [0, 3 * rate] {
                let variables = try Self.hookEnvironment(folder + "/env-\(start).txt")
                let end = try #require(variables["MICMON_TAKE_END_FRAME"].flatMap { Int($0) })
                let within = drops.filter { $0.0 >= start && $0.0 < end }
                #expect(
                    variables["MICMON_DROPS"] == String(within.map(\.1).reduce(0, +)), "file at \(start): \(variables)")
                let gapsWithin = serverGaps.filter { $0.0 >= start && $0.0 < end }.count
                #expect(variables["MICMON_SERVER_GAPS"] == String(gapsWithin), "file at \(start): \(variables)")
                #expect((start == 0) == (within.map(\.1).reduce(0, +) >= long.1), "file at \(start), loss \(long)")
            }
            // The loss is silence in place: the source before it, the source one loss further on
            // after it, the take on the server's clock.
            let first = try #require(
                try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".wav") }.sorted()
                    .first)
            let samples = try SoundFileReader(path: folder + "/" + first).readAllFloats()
            #expect(samples.count == 2 * 3 * rate, "\(first): \(samples.count / 2) frames")
            func match(_ range: Range<Int>) -> ReferenceSignal.Match {
                samples.withUnsafeBufferPointer {
                    ReferenceSignal.match(
                        interleaved: UnsafeBufferPointer(rebasing: $0[2 * range.lowerBound ..< 2 * range.upperBound]))
                }
            }
            #expect(samples[2 * long.0 ..< 2 * (long.0 + long.1)].allSatisfy { $0 == 0 }, "the loss is not silence")
            // Each side from or to the nearest other loss the take reports, if any (a period both
            // programs lost, on a loaded host).
            let beforeStart = drops.map { $0.0 + $0.1 }.filter { $0 <= long.0 }.max() ?? 0
            let before = match(beforeStart ..< long.0)
            // (The drops are the take's; this is its first file.)
            let fileEnd = samples.count / 2
            let nextLoss = min(drops.map(\.0).filter { $0 >= long.0 + long.1 }.min() ?? fileEnd, fileEnd)
            let after = match((long.0 + long.1) ..< max(nextLoss, min(long.0 + long.1 + 1, fileEnd)))
            // The source, `micmon play`, counts its own cycles: at an asynchronous jackd2's resume
            // the graph now and then skips it for a period or two, which it reports as its own
            // loss (`missed_gaps`, at its playback position). Its frames then run that much
            // behind the server's clock, which the take keeps: the source frame after the silence
            // is the one before it plus the silence, less what the source itself lost between.
            let sourceLosses = timeline.gaps("missed_gaps", in: sourceSummary)
            // Sample for sample on either side, and the source frames on either side of the
            // silence as far apart as the silence plus what the source lost between (what a late
            // cycle copied, and where each excess goes: docs/timeline.md, "Held after the copy").
            #expect(before.mismatchedFrames == 0 && after.mismatchedFrames == 0, "\(before), \(after)")
            let a = try #require(before.startFrame, "\(before)")
            let b = try #require(after.startFrame, "\(after)")
            let lostBySource = sourceLosses.filter { UInt64($0.0) > a && UInt64($0.0) <= b }.map(\.1).reduce(0, +)
            #expect(
                b + UInt64(lostBySource) == a + UInt64(long.0 - beforeStart + long.1),
                "source frame \(a) at the start, \(b) after the loss \(long); source: \(sourceSummary)")
        }

        @Test("a hanging hook is killed after --hook-timeout, a failing one is logged; neither touches the take")
        func hangingAndFailingHooks() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("hook-hang")
            let path = folder + "/take.wav"
            // start: hangs (its pid noted), stop: fails with a message.
            let command =
                "if [ \"$MICMON_EVENT\" = start ]; then echo $$ > '\(folder)/pid'; exec sleep 600; fi; "
                + "echo \"no luck at $MICMON_TAKE_FRAME\" >&2; exit 9"
            let result = try MicmonProcess.run(
                recordArguments(path, server, name: "ops-hook-hang") + [
                    "--duration", "2", "--json", "--on-event", command, "--hook-timeout", "1s",
                ], timeout: 60)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let hooks = lines(result.stdout, type: "hook")
            let start = try #require(hooks.first { $0.contains("\"event\":\"start\"") })
            #expect(start.contains("\"status\":\"timed_out\""), "\(start)")
            #expect(start.contains("\"time\":0.000"), "\(start)")
            let stop = try #require(hooks.first { $0.contains("\"event\":\"stop\"") })
            let frames = 2 * server.sampleRate
            #expect(stop.contains("\"status\":\"failed\",\"exit_code\":9"), "\(stop)")
            #expect(stop.contains("\"frame\":\(frames)") && stop.contains("\"output\":\"no luck at \(frames)\""))
            #expect(
                result.stderr.contains("hook --on-event (start) still running after 1.0 s (--hook-timeout): killed"))
            #expect(result.stderr.contains("hook --on-event (stop) failed: exit 9: no luck at \(frames)"))
            let pid = try #require(
                Int32(
                    try String(contentsOfFile: folder + "/pid", encoding: .utf8).trimmingCharacters(
                        in: .whitespacesAndNewlines)))
            #expect(kill(pid, 0) != 0, "the hanging hook \(pid) is still running")
            let outcome = try TakeCheck.verify(path: path)
            #expect(outcome.isExact && outcome.frameCount == frames)
        }

        @Test("drops reach --on-event as drop events with the frames dropped so far, on the take's timeline")
        func dropEvents() throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("hook-drop") + "/take.wav"
            let result = try MicmonProcess.run(
                recordArguments(path, server, name: "ops-hook-drop") + [
                    "--duration", "8", "--json", "--on-event", "echo \"$MICMON_EVENT $MICMON_DROPS\"",
                ], environment: ["MICMON_TEST_WRITER_STALL_SECONDS": "6"], timeout: 60)
            #expect(result.exitCode == 75, "stderr: \(result.stderr)")
            let drops = lines(result.stdout, type: "hook").filter { $0.contains("\"event\":\"drop\"") }
            let first = try #require(drops.first, "no drop event: \(result.stdout.suffix(2000))")
            let dropped = try #require(first.firstMatch(of: /"output":"drop (\d+)"/).flatMap { Int($0.output.1) })
            let frame = try #require(first.firstMatch(of: /"frame":(\d+)/).flatMap { Int($0.output.1) })
            #expect(dropped > 0 && frame > 0 && frame <= 8 * server.sampleRate, "\(first)")
            #expect(drops.allSatisfy { $0.contains("\"status\":\"ok\"") })
        }

        @Test("--split with --keep 2: the run's oldest files go with their sidecars, the newest two stay exact")
        func retentionWhileRotating() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("retention-rotating")
            // Named as the pattern would name a file, but not micmon's: never touched.
            let foreign = [folder + "/log-000000.wav", folder + "/log-000000.wav.json"]
            for path in foreign { _ = FileManager.default.createFile(atPath: path, contents: Data("mine".utf8)) }
            let result = try MicmonProcess.run(
                recordArguments(folder + "/log-%H%M%S.wav", server, name: "ops-keep-rot") + [
                    "--split", "1s", "--duration", "4.5", "--keep", "2",
                ], timeout: 60)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let all = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
            let ours = all.filter { $0.hasPrefix("log-") && $0.hasSuffix(".wav") && $0 != "log-000000.wav" }
            #expect(ours.count == 2, "\(all)")
            #expect(result.stderr.components(separatedBy: "(--keep 2)").count - 1 == 3, "\(result.stderr)")
            for file in ours {
                #expect(all.contains(file + ".json"), "\(file)'s sidecar is gone")
                #expect(try TakeCheck.verify(path: folder + "/" + file).isExact, "\(file)")
            }
            // No sidecar outlives its file.
            let sidecars = all.filter { $0.hasSuffix(".wav.json") }
            #expect(Set(sidecars) == Set((ours + ["log-000000.wav"]).map { $0 + ".json" }), "\(all)")
            for path in foreign { #expect(try String(contentsOfFile: path, encoding: .utf8) == "mine") }
        }

        @Test("retention never touches files micmon did not write for the pattern")
        func retentionSparesOtherFiles() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("retention")
            let foreign = ["old-take.wav", "take-2.wav", "notes.txt", ".micmon-files-other.wav"].map {
                folder + "/" + $0
            }
            for path in foreign { _ = FileManager.default.createFile(atPath: path, contents: Data("mine".utf8)) }
            let first = folder + "/take.wav"
            let run1 = try MicmonProcess.run(
                recordArguments(first, server, name: "ops-keep") + ["--duration", "0.5", "--keep", "1"], timeout: 30)
            #expect(run1.exitCode == 0, "stderr: \(run1.stderr)")
            // Another pattern in the same folder, keeping one file: the first pattern's file stays.
            let second = folder + "/other.wav"
            let run2 = try MicmonProcess.run(
                recordArguments(second, server, name: "ops-keep") + [
                    "--duration", "0.5", "--keep", "1", "--keep-for", "1ms",
                ], timeout: 30)
            #expect(run2.exitCode == 0, "stderr: \(run2.stderr)")
            for path in foreign + [first, second] {
                #expect(FileManager.default.fileExists(atPath: path), "\(path) is gone")
            }
            for path in foreign {
                #expect(try String(contentsOfFile: path, encoding: .utf8) == "mine", "\(path) was changed")
            }
            let manifest = try String(contentsOfFile: folder + "/.micmon-files-take.wav", encoding: .utf8)
            #expect(manifest.hasPrefix("micmon-files 1\ttake.wav\n") && manifest.hasSuffix("\ttake.wav\n"))
            #expect(try TakeCheck.verify(path: first).isExact)
        }

        @Test(
            "the disk guard ends the take before a small tmpfs fills: warnings on the timeline, every frame in the file, exit 74",
            .enabled(if: TestEnvironment.runs(needing: TestEnvironment.isRoot), "needs root to mount a small tmpfs"))
        func diskGuardStopsBeforeFull() throws {
            let server = try SharedTestServer.require()
            try withSmallDisk("3m") { mountPoint in
                let path = mountPoint + "/take.wav"
                let result = try MicmonProcess.run(
                    recordArguments(path, server, name: "ops-guard") + [
                        "--duration", "60", "--json", "--bits", "16", "--min-free", "512K",
                        "--on-event", "echo $MICMON_EVENT $MICMON_FREE_BYTES",
                    ], timeout: 90)
                #expect(result.exitCode == 74, "stderr: \(result.stderr)")
                let summary = try #require(lines(result.stdout, type: "summary").last)
                #expect(summary.contains("\"reason\":\"free disk space reached --min-free\""), "\(summary)")
                #expect(summary.contains("\"frames_dropped\":0"))
                let warnings = lines(result.stdout, type: "warning")
                #expect(warnings.filter { $0.contains("\"warning\":\"disk_low\"") }.count == 1, "\(warnings)")
                let stop = try #require(warnings.first { $0.contains("\"warning\":\"disk_stop\"") })
                #expect(stop.contains("\"free_bytes\":") && stop.contains("\"frame\":"), "\(stop)")
                #expect(lines(result.stdout, type: "hook").contains { $0.contains("\"event\":\"disk_stop\"") })
                let meter = try #require(lines(result.stdout, type: "meter").last)
                #expect(meter.contains("\"disk_free_bytes\":") && meter.contains("\"disk_seconds_left\":"))
                #expect(result.stderr.contains("free space on \(mountPoint) reached --min-free"), "\(result.stderr)")
                let claimed = try #require(summary.firstMatch(of: /"frames":(\d+)/).flatMap { Int($0.output.1) })
                let outcome = try TakeCheck.verify(path: path)
                #expect(outcome.isExact, "first mismatch at \(outcome.firstMismatch ?? -1)")
                #expect(outcome.frameCount == claimed && claimed > server.sampleRate)
                var info = statvfs()
                #expect(statvfs(mountPoint, &info) == 0 && UInt64(info.f_bavail) * UInt64(info.f_frsize) >= 512 << 10)
            }
        }

        @Test(
            "another writer fills the disk anyway: the file holds everything up to the fault, exit 74",
            .enabled(if: TestEnvironment.runs(needing: TestEnvironment.isRoot), "needs root to mount a small tmpfs"))
        func diskFilledByAnotherWriter() throws {
            let server = try SharedTestServer.require()
            try withSmallDisk("4m") { mountPoint in
                let path = mountPoint + "/take.wav"
                let child = try MicmonProcess(
                    recordArguments(path, server, name: "ops-filled") + [
                        "--duration", "60", "--json", "--bits", "16", "--min-free", "64K",
                    ])
                #expect(child.waitUntilRecorded(seconds: 1), "stderr: \(child.stderrSoFar)")
                Shell.run("dd", "if=/dev/zero", "of=\(mountPoint)/filler", "bs=64k")
                let result = child.wait(timeout: 30)
                #expect(result.exitCode == 74, "stderr: \(result.stderr)")
                let summary = try #require(lines(result.stdout, type: "summary").last)
                let claimed = try #require(summary.firstMatch(of: /"frames":(\d+)/).flatMap { Int($0.output.1) })
                let outcome = try TakeCheck.verify(path: path)
                #expect(outcome.isExact, "first mismatch at \(outcome.firstMismatch ?? -1)")
                #expect(outcome.frameCount == claimed && claimed > 0)
            }
        }

        @Test(
            "a file system already at --min-free refuses the take before anything is created",
            .enabled(if: TestEnvironment.runs(needing: TestEnvironment.isRoot), "needs root to mount a small tmpfs"))
        func belowMinimumAtStart() throws {
            let server = try SharedTestServer.require()
            try withSmallDisk("1m") { mountPoint in
                let path = mountPoint + "/take.wav"
                let result = try MicmonProcess.run(
                    recordArguments(path, server, name: "ops-nofree") + ["--duration", "5"], timeout: 30)
                #expect(result.exitCode == 74, "stderr: \(result.stderr)")
                #expect(result.stderr.contains("not above --min-free 256.0 MiB; nothing was recorded"))
                #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint).isEmpty)
            }
        }

        @Test(
            "bad sizes, durations and hook commands exit 64 with one line and create nothing",
            arguments: [
                ["--keep", "0"], ["--keep", "two"], ["--keep", "1.5"], ["--keep-for", "0"], ["--keep-for", "5x"],
                ["--keep-for", "-1h"], ["--keep-for", "h"], ["--keep-for", "1e3s"], ["--min-free", "12Q"],
                ["--min-free", "-1"], ["--min-free", "2P"], ["--min-free", "M"], ["--min-free", ""],
                ["--hook-timeout", "0"], ["--hook-timeout", "2d"], ["--hook-timeout", "nan"], ["--on-event", " "],
                ["--on-file-closed", ""],
            ])
        func badInputs(_ extra: [String]) throws {
            let folder = TestEnvironment.scratchFolder("ops-bad")
            let path = folder + "/take.wav"
            let result = try MicmonProcess.run(["record", path, "-s", "micmon-no-such-server"] + extra, timeout: 20)
            #expect(result.exitCode == 64, "\(extra): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(extra): \(result.stderr)")
            #expect(result.stderr.contains(extra[0]), "\(extra): \(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        }
    }
}

@Suite("Operations: values")
struct OperationsValueTests {
    @Test func durations() throws {
        #expect(try OptionValue.timeSpan("90", option: "--x", upTo: 1e9) == 90)
        #expect(try OptionValue.timeSpan("250ms", option: "--x", upTo: 1e9) == 0.25)
        #expect(try OptionValue.timeSpan("30s", option: "--x", upTo: 1e9) == 30)
        #expect(try OptionValue.timeSpan("15m", option: "--x", upTo: 1e9) == 900)
        #expect(try OptionValue.timeSpan("1.5h", option: "--x", upTo: 1e9) == 5400)
        #expect(try OptionValue.timeSpan("7d", option: "--x", upTo: 1e9) == 604_800)
    }

    @Test func sizes() throws {
        #expect(try OptionValue.byteSize("0", option: "--x") == 0)
        #expect(try OptionValue.byteSize("1048576", option: "--x") == 1 << 20)
        #expect(try OptionValue.byteSize("256M", option: "--x") == 256 << 20)
        #expect(try OptionValue.byteSize("256MiB", option: "--x") == 256 << 20)
        #expect(try OptionValue.byteSize("1.5G", option: "--x") == 3 << 29)
        #expect(try OptionValue.byteSize("100KB", option: "--x") == 102_400)
        #expect(try OptionValue.byteSize("2k", option: "--x") == 2048)
    }

    @Test func recordTakesTheOptionsAndDefaults() throws {
        guard case .record(let options) = try Command.parse(["record", "t.wav"]) else {
            Issue.record("not a record command")
            return
        }
        #expect(options.operations == OperationsOptions())
        #expect(options.operations.minimumFreeBytes == 256 << 20 && options.operations.hookTimeoutSeconds == 30)
        guard
            case .record(let set) = try Command.parse([
                "record", "t.wav", "--keep", "3", "--keep-for=2h", "--min-free", "1G", "--on-file-closed", "a",
                "--on-event", "b", "--hook-timeout", "5s",
            ])
        else {
            Issue.record("not a record command")
            return
        }
        #expect(set.operations.keepCount == 3 && set.operations.keepForSeconds == 7200)
        #expect(set.operations.minimumFreeBytes == 1 << 30)
        #expect(set.operations.onFileClosed == "a" && set.operations.onEvent == "b")
        #expect(set.operations.hookTimeoutSeconds == 5)
    }
}
