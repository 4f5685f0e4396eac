// Issue 23, defects 4, 9 and 11 as a user meets them: a stdout that fails or is closed, numbers
// out of range, names with control characters, exact port names with pattern characters,
// repeated ports, client names JACK cannot take, and the help's continuation-file names.
import Engine
import Foundation
import Glibc
import Jack
import Testing

@testable import micmon

/// micmon run through a shell, so a test can give it a stdout a `MicmonProcess` cannot (a pipe
/// whose reader goes away, a closed descriptor). stderr goes to a file, as for `MicmonProcess`.
private struct ShellRun {
    let child: ChildProcess
    let stderrPath: String

    /// `script` runs with `$0` = micmon and `"$@"` = `arguments`.
    init(_ script: String, _ arguments: [String], folder: String) throws {
        stderrPath = folder + "/stderr"
        child = try ChildProcess(
            ["/bin/bash", "-c", script, TestEnvironment.micmonPath] + arguments, environment: ["NO_COLOR": nil],
            stdout: folder + "/stdout", stderr: stderrPath)
    }

    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
}

/// The stderr lines that say stdout failed.
private func outputFailureLines(_ stderr: String) -> [Substring] {
    stderr.split(separator: "\n").filter { $0.contains("stdout cannot be written") }
}

extension JackIntegrationTests {
    @Suite("A failing or closed stdout never ends or shortens a take")
    struct StreamFaultTests {
        /// `micmon record x.wav --duration 2 --json | head -1`: the take is 2 s, exact, exit 0;
        /// one line on stderr says stdout broke. (It was 0.1 s, exit 0.)
        @Test("a pipe whose reader went away (EPIPE): the take runs to its duration, exit 0")
        func brokenPipe() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("epipe")
            let path = folder + "/take.wav"
            let run = try ShellRun(
                #""$0" "$@" | head -1 > /dev/null; exit ${PIPESTATUS[0]}"#,
                [
                    "record", path, "-s", server.name, "-n", "rec-epipe", "-p", server.source.outputPorts[0],
                    "-p", server.source.outputPorts[1], "--duration", "2", "--json",
                ], folder: folder)
            let ending = run.child.wait(timeout: 30)
            #expect(ending == .init(code: 0, wasKilledBySignal: false), "stderr: \(run.stderr)")
            let outcome = try TakeCheck.verify(path: path)
            #expect(outcome.frameCount == 2 * server.sampleRate)
            #expect(outcome.isExact)
            let lines = outputFailureLines(run.stderr)
            #expect(lines.count == 1 && lines[0].contains("Broken pipe"), "stderr: \(run.stderr)")
        }

        /// stdout on a full device (ENOSPC): the same. (It was 0.25 s, exit 0.)
        @Test("stdout on a full device (ENOSPC): the take runs to its duration, exit 0")
        func fullDevice() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("enospc")
            let path = folder + "/take.wav"
            let child = try ChildProcess(
                [
                    TestEnvironment.micmonPath, "record", path, "-s", server.name, "-n", "rec-enospc",
                    "-p", server.source.outputPorts[0], "-p", server.source.outputPorts[1], "--duration", "2",
                ], stdout: "/dev/full", stderr: folder + "/stderr")
            let ending = child.wait(timeout: 30)
            let stderr = (try? String(contentsOfFile: folder + "/stderr", encoding: .utf8)) ?? ""
            #expect(ending == .init(code: 0, wasKilledBySignal: false), "stderr: \(stderr)")
            let outcome = try TakeCheck.verify(path: path)
            #expect(outcome.frameCount == 2 * server.sampleRate)
            #expect(outcome.isExact)
            let lines = outputFailureLines(stderr)
            #expect(lines.count == 1 && lines[0].contains("No space left on device"), "stderr: \(stderr)")
        }

        /// `play` too: a 1 s file played with stdout on /dev/full plays for its whole second.
        @Test("play with stdout on a full device plays the file to its end, exit 0")
        func playFullDevice() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("play-enospc")
            let path = folder + "/one-second.wav"
            let made = try MicmonProcess.run(
                [
                    "record", path, "-s", server.name, "-n", "rec-play-src", "-p", server.source.outputPorts[0],
                    "-p", server.source.outputPorts[1], "--duration", "1",
                ], timeout: 30)
            try #require(made.exitCode == 0, "stderr: \(made.stderr)")
            let began = Date()
            let child = try ChildProcess(
                [TestEnvironment.micmonPath, "play", path, "-s", server.name, "-n", "play-enospc", "--json"],
                stdout: "/dev/full", stderr: folder + "/stderr")
            let ending = child.wait(timeout: 30)
            let seconds = Date().timeIntervalSince(began)
            let stderr = (try? String(contentsOfFile: folder + "/stderr", encoding: .utf8)) ?? ""
            #expect(ending == .init(code: 0, wasKilledBySignal: false), "stderr: \(stderr)")
            #expect(seconds >= 0.95, "play ended after \(seconds) s of a 1 s file")
            #expect(outputFailureLines(stderr).count == 1, "stderr: \(stderr)")
        }

        /// `>&-`: descriptor 1 is /dev/null before libjack opens anything, so libjack's
        /// metadata database never becomes stdout (the meter text was written into it).
        @Test("a closed stdout is /dev/null, never a file micmon or libjack opens; the take is exact")
        func closedStdout() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("closed-stdout")
            let path = folder + "/take.wav"
            let run = try ShellRun(
                #"exec "$0" "$@" >&-"#,
                [
                    "record", path, "-s", server.name, "-n", "rec-closed", "-p", server.source.outputPorts[0],
                    "-p", server.source.outputPorts[1], "--duration", "2",
                ], folder: folder)
            var descriptorOne: String?
            _ = TestEnvironment.waitUntil(timeout: 10) {
                // Once the take has begun (the file exists), libjack has opened what it opens.
                guard FileManager.default.fileExists(atPath: path) else { return false }
                usleep(300_000)
                descriptorOne = try? FileManager.default.destinationOfSymbolicLink(
                    atPath: "/proc/\(run.child.processIdentifier)/fd/1")
                return true
            }
            let ending = run.child.wait(timeout: 30)
            #expect(descriptorOne == "/dev/null")
            #expect(ending == .init(code: 0, wasKilledBySignal: false), "stderr: \(run.stderr)")
            let outcome = try TakeCheck.verify(path: path)
            #expect(outcome.frameCount == 2 * server.sampleRate)
            #expect(outcome.isExact)
        }
    }

    @Suite("Numbers and names against a real server")
    struct NumberAndNameIntegrationTests {
        /// `--duration 1e300` crashed with SIGILL after truncating FILE; with --force an
        /// existing take was wiped. Now: exit 64 before anything is touched.
        @Test("an absurd --duration is exit 64 and leaves an existing take untouched")
        func absurdDuration() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("absurd-duration")
            let path = folder + "/take.wav"
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: path))
            for value in ["1e300", "2678401", "1e19"] {
                let result = try MicmonProcess.run(
                    ["record", path, "--force", "-s", server.name, "-n", "rec-absurd", "--duration", value],
                    timeout: 30)
                #expect(result.exitCode == 64, "--duration \(value): stderr: \(result.stderr)")
                #expect(!result.wasKilledBySignal)
                #expect(result.stderr.contains("--duration must be between 0.001 and 2678400 s"))
                #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep me")
            }
        }

        /// A full disk mid-take: the summary's frame count was what micmon took (143360), more
        /// than the file holds (131058); now it is what the file holds.
        @Test(
            "after a write error the summary claims no more frames than the file holds",
            .enabled(if: TestEnvironment.runs(needing: TestEnvironment.isRoot), "needs root to mount a small tmpfs"))
        func summaryAfterWriteError() throws {
            try TestEnvironment.require(TestEnvironment.isRoot, "needs root to mount a small tmpfs (CI runs as root)")
            let server = try SharedTestServer.require()
            let mountPoint = TestEnvironment.scratchFolder("summary-fulldisk")
            try #require(Shell.run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint) == 0)
            defer { _ = Shell.run("umount", mountPoint) }
            let path = mountPoint + "/take.wav"
            let result = try MicmonProcess.run(
                [
                    "record", path, "-s", server.name, "-n", "rec-summary-full", "-p", server.source.outputPorts[0],
                    "-p", server.source.outputPorts[1], "--duration", "30", "--json", "--min-free", "0",
                ], timeout: 40)
            #expect(result.exitCode == 74, "stderr: \(result.stderr)")
            let summary = try #require(
                result.stdout.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") })
            let claimed = try #require(summary.firstMatch(of: /"frames":(\d+)/).flatMap { Int($0.output.1) })
            let outcome = try TakeCheck.verify(path: path)
            #expect(claimed == outcome.frameCount, "summary: \(claimed) frames, file: \(outcome.frameCount)")
            #expect(outcome.frameCount > 0 && outcome.mismatchedFrames == 0)
        }

        /// A port whose exact name has `[` in it can be chosen (it was read as a pattern and
        /// matched nothing, exit 64).
        @Test("an exact port name with [ in it is that port")
        func exactNameWithBracket() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("bracket")
            let file = folder + "/source.wav"
            let made = try MicmonProcess.run(
                [
                    "record", file, "-s", server.name, "-n", "rec-bracket-src", "-p", server.source.outputPorts[0],
                    "-p", server.source.outputPorts[1], "--duration", "0.5",
                ], timeout: 30)
            try #require(made.exitCode == 0, "stderr: \(made.stderr)")
            // A source client whose name has a bracket: its ports are "src[1]:out_1", "src[1]:out_2".
            let source = try MicmonProcess(["play", file, "-s", server.name, "-n", "src[1]", "--loops", "-1", "--json"])
            defer {
                source.signal(SIGTERM)
                _ = source.wait(timeout: 10)
            }
            #expect(TestEnvironment.waitUntil(timeout: 10) { source.stdoutSoFar.contains("out_1") })
            let result = try MicmonProcess.run(
                [
                    "meter", "-s", server.name, "-n", "meter-bracket", "-p", "src[1]:out_1", "--duration", "0.3",
                    "--json",
                ],
                timeout: 30)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(result.stdout.contains("\"reason\":\"duration reached\""))
        }

        /// `-p a -p a` was one input and exit 0; now exit 64 naming the port.
        @Test("a repeated -p is exit 64 naming the port")
        func repeatedPort() throws {
            let server = try SharedTestServer.require()
            let source = server.source.outputPorts[0]
            let result = try MicmonProcess.run(
                ["meter", "-s", server.name, "-n", "meter-repeat", "-p", source, "-p", source, "--duration", "0.3"],
                timeout: 30)
            #expect(result.exitCode == 64, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("'\(source)' is asked for twice"), "stderr: \(result.stderr)")
        }

        /// A name over JACK's limit read as "server not running" (exit 69) with the server up.
        @Test("a client name JACK cannot take is exit 64 with JACK's reason, not 69")
        func clientNameTooLong() throws {
            let server = try SharedTestServer.require()
            let name = String(repeating: "n", count: JackClient.maximumNameLength + 1)
            for command in [["meter"], ["latency"], ["record", TestEnvironment.scratchFolder("long-name") + "/t.wav"]] {
                let result = try MicmonProcess.run(
                    command + ["-s", server.name, "-n", name, "--duration", "0.3"], timeout: 30)
                #expect(result.exitCode == 64, "\(command[0]): stderr: \(result.stderr)")
                #expect(result.stderr.contains("jack_client_name_size"), "stderr: \(result.stderr)")
                #expect(!result.stderr.contains("is it running"))
            }
        }

        /// Control characters in a file or port name reach stderr as "?" and never split a line.
        @Test("file and port names with ESC and newlines never reach stderr raw")
        func controlCharactersEscaped() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("control-names")
            let hostile = folder + "/take\u{1B}]0;pwned\u{07}\n\u{1B}[2Jfake.wav"
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: hostile))
            let runs = [
                ["record", hostile, "-s", server.name, "--duration", "0.3"],
                ["meter", "-s", server.name, "-p", "no\u{1B}[31msuch\nport", "--duration", "0.3"],
                ["latency", "-s", server.name, "--send", "bad\u{9B}2Jport", "--duration", "0.3"],
            ]
            for arguments in runs {
                let result = try MicmonProcess.run(arguments, timeout: 30)
                #expect(result.exitCode == 64, "\(arguments[0]): stderr: \(result.stderr)")
                let raw = result.stderr.unicodeScalars.filter {
                    $0 != "\n" && ($0.value < 0x20 || (0x7F ... 0x9F).contains($0.value))
                }
                #expect(
                    raw.isEmpty, "\(arguments[0]): raw control characters on stderr: \(result.stderr.debugDescription)")
                #expect(result.stderr.split(separator: "\n").count == 1, "stderr: \(result.stderr.debugDescription)")
            }
        }
    }
}

@Suite("Numbers, names and help: parse")
struct NumberAndNameParseTests {
    @Test("an exact name wins over the pattern it also is; a repeated request is an error naming the port")
    func exactNamesAndRepeats() throws {
        let ports = ["src:cap[1]", "src:cap1", "src:cap2"]
        #expect(try PortSelection.resolve(["src:cap[1]"], outputPorts: ports) == ["src:cap[1]"])
        #expect(try PortSelection.resolve(["src:cap[12]"], outputPorts: ports) == ["src:cap1", "src:cap2"])
        #expect(
            try PortSelection.first("src:cap[1]", wanted: .output, in: .init(inputs: [], outputs: ports))
                == "src:cap[1]")
        do {
            _ = try PortSelection.resolve(["src:cap1", "src:cap1"], outputPorts: ports)
            Issue.record("a repeated port was accepted")
        } catch {
            #expect(error.repeatedPort == "src:cap1")
            #expect(error.description.contains("'src:cap1' is asked for twice"))
        }
        do {
            _ = try PortSelection.resolve(["src:cap2", "src:cap?"], outputPorts: ports)  // adds cap1: fine
            _ = try PortSelection.resolve(["src:cap*", "src:cap2"], outputPorts: ports)
            Issue.record("a request that adds nothing was accepted")
        } catch {
            #expect(error.repeatedPort == "src:cap2")
        }
    }

    @Test("waiting for missing requests: each holds one input, in order; repeats stay errors")
    func resolutionWaitingForMissingRequests() throws {
        let ports = ["src:out_1", "src:out_2"]
        let waiting = try PortSelection.resolveWaiting(
            ["late:out_1", "src:out_*", "late:*"], among: ports, kind: "output", waitsForMissing: true)
        #expect(waiting.ports == ["", "src:out_1", "src:out_2", ""])
        #expect(waiting.requestOfInput == [0, 1, 1, 2])
        #expect(waiting.waitingInputs == [0, 3])
        // Without waiting, the first request that matches nothing is the error.
        do {
            _ = try PortSelection.resolveWaiting(
                ["src:out_1", "late:*"], among: ports, kind: "output", waitsForMissing: false)
            Issue.record("a request that matches nothing was accepted")
        } catch {
            #expect(error.request == "late:*" && error.repeatedPort == nil)
        }
        do {
            _ = try PortSelection.resolveWaiting(
                ["late:*", "src:out_2", "src:out_2"], among: ports, kind: "output", waitsForMissing: true)
            Issue.record("a repeated port was accepted while waiting")
        } catch {
            #expect(error.repeatedPort == "src:out_2")
        }
    }

    @Test("a client name over JACK's limit is a usage error giving the limit")
    func longClientName() {
        let limit = JackClient.maximumNameLength
        #expect(limit > 0)
        #expect(throws: Never.self) { try Command.parse(["meter", "-n", String(repeating: "a", count: limit)]) }
        #expect(throws: UsageError.self) {
            try Command.parse(["meter", "-n", String(repeating: "a", count: limit + 1)])
        }
    }

    @Test("--wait-server's help names the continuation files as micmon names them")
    func continuationNames() {
        #expect(CaptureCommand.continuationPath("rec.wav", take: 2) == "rec-2.wav")
        let page = HelpText.page(CommandName.record.spec).replacingOccurrences(of: "\n", with: " ")
        let flat = page.split(separator: " ").joined(separator: " ")
        #expect(flat.contains("rec.wav, then rec-2.wav, rec-3.wav"))
        #expect(!flat.contains("take-2.wav"))
        #expect(CommandTable.visibleCommands.contains { $0.name == .denoise })
    }
}
