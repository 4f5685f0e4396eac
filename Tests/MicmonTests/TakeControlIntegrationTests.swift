import DSP
import Foundation
import Glibc
import Platform
import SoundFile
import Testing

/// A take with pauses, checked against the counter source: the file must hold exactly the take
/// frames outside the pauses micmon reported (stderr: "paused at ... (take frame N)").
enum PausedTake {
    /// The pauses and resumes a run reported, in order: (kind, take frame).
    static func events(_ stderr: String) -> [(kind: String, frame: UInt64)] {
        stderr.split(separator: "\n").compactMap { line in
            guard let match = line.firstMatch(of: /micmon: (paused|resumed|mark) at [0-9.]+ s \(take frame (\d+)\)/)
            else { return nil }
            return (String(match.output.1), UInt64(match.output.2)!)
        }
    }

    /// The take frames the file should hold: [0, end) less each paused stretch.
    static func keptFrames(events: [(kind: String, frame: UInt64)], takeFrames: UInt64) -> [Range<UInt64>] {
        var kept: [Range<UInt64>] = []
        var from: UInt64? = 0
        for event in events where event.kind != "mark" {
            if event.kind == "paused", let start = from {
                if event.frame > start { kept.append(start ..< event.frame) }
                from = nil
            } else if event.kind == "resumed", from == nil {
                from = event.frame
            }
        }
        if let start = from, takeFrames > start { kept.append(start ..< takeFrames) }
        return kept
    }

    /// Frames of `path` that differ from the source at the take frames `kept` (concatenated),
    /// the source's frame of take frame 0 found from the file's first frame; nil when the file
    /// does not start on the signal. `firstSourceFrame`: where take frame 0 is, if known.
    static func mismatches(path: String, kept: [Range<UInt64>]) throws -> (frames: Int, mismatched: Int) {
        let reader = try SoundFileReader(path: path)
        let samples = reader.readAllFloats()
        let frames = samples.count / 2
        guard frames > 0, let first = kept.first else { return (frames, frames) }
        let match = samples.withUnsafeBufferPointer {
            ReferenceSignal.match(interleaved: UnsafeBufferPointer(rebasing: $0[0 ..< min(16, frames) * 2]))
        }
        guard let start = match.startFrame, start >= first.lowerBound else { return (frames, frames) }
        let origin = start - first.lowerBound
        var mismatched = 0
        var index = 0
        for range in kept {
            for take in range where index < frames {
                let n = origin + take
                if samples[2 * index] != ReferenceSignal.value(channel: 0, frame: n)
                    || samples[2 * index + 1] != ReferenceSignal.value(channel: 1, frame: n)
                {
                    mismatched += 1
                }
                index += 1
            }
        }
        return (frames, mismatched)
    }

    /// `frames_taken` of the summary line (`--json`).
    static func summaryFrames(_ stdout: String) -> UInt64? {
        guard let line = stdout.split(separator: "\n").last(where: { $0.contains("\"type\":\"summary\"") }),
            let match = line.firstMatch(of: /"frames":(\d+)/)
        else { return nil }
        return UInt64(match.output.1)
    }
}

extension JackIntegrationTests {
    @Suite("Pause, resume, marks, the control socket, streaming and transport")
    struct TakeControlIntegrationTests {
        /// A scratch $XDG_RUNTIME_DIR (0700, as a login's is).
        static func runtimeFolder(_ name: String) -> String {
            let folder = TestEnvironment.scratchFolder(name)
            chmod(folder, 0o700)
            return folder
        }

        static func recordArguments(_ server: SharedTestServer, _ path: String, name: String) -> [String] {
            [
                "record", path, "-s", server.name, "-n", name, "-p", server.source.outputPorts[0], "-p",
                server.source.outputPorts[1], "--json",
            ]
        }

        /// Checks a finished paused take: the events as expected, the file exactly the frames
        /// outside the pauses, the summary's length the frames the file holds.
        static func checkPausedTake(
            _ result: MicmonProcess.Result, path: String, pauses: Int, marks: Int
        ) throws {
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let events = PausedTake.events(result.stderr)
            #expect(events.filter { $0.kind == "paused" }.count == pauses, "\(result.stderr)")
            #expect(events.filter { $0.kind == "resumed" }.count == pauses, "\(result.stderr)")
            #expect(events.filter { $0.kind == "mark" }.count == marks, "\(result.stderr)")
            let held = try #require(PausedTake.summaryFrames(result.stdout), "no summary: \(result.stdout.suffix(300))")
            let paused = zip(
                events.filter { $0.kind == "paused" }, events.filter { $0.kind == "resumed" }
            ).reduce(UInt64(0)) { $0 + ($1.1.frame - $1.0.frame) }
            let kept = PausedTake.keptFrames(events: events, takeFrames: held + paused)
            #expect(kept.count == pauses + 1)
            let check = try PausedTake.mismatches(path: path, kept: kept)
            #expect(UInt64(check.frames) == held, "the file holds \(check.frames) frames, the summary says \(held)")
            #expect(check.mismatched == 0, "\(check.mismatched) frames differ from the source outside the pauses")
        }

        @Test("SIGUSR2 pauses and resumes, SIGUSR1 marks: the file holds exactly the unpaused frames")
        func pauseBySignal() throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("pause-signal") + "/take.wav"
            let child = try MicmonProcess(
                Self.recordArguments(server, path, name: "rec-pause-signal"),
                environment: ["XDG_RUNTIME_DIR": Self.runtimeFolder("pause-signal-run")])
            #expect(child.waitUntilRecorded(seconds: 1), "\(child.stderrSoFar)")
            child.signal(SIGUSR2)
            #expect(child.waitUntilRecorded(seconds: 2.2), "\(child.stderrSoFar)")
            child.signal(SIGUSR2)
            #expect(child.waitUntilRecorded(seconds: 2.8), "\(child.stderrSoFar)")
            child.signal(SIGUSR1)
            #expect(child.waitUntilRecorded(seconds: 3.5), "\(child.stderrSoFar)")
            child.signal(SIGINT)
            let result = child.wait(timeout: 20)
            try Self.checkPausedTake(result, path: path, pauses: 1, marks: 1)
            // The pause is the length micmon waited between the two signals, about a second.
            let events = PausedTake.events(result.stderr)
            if events.count >= 2 {
                #expect(events[1].frame - events[0].frame > UInt64(server.sampleRate / 2))
            }
        }

        @Test(
            "micmon pause, resume, mark and status reach the recorder through its socket; malformed lines and other users are refused and the take goes on exact"
        )
        func controlSocket() throws {
            let server = try SharedTestServer.require()
            let runtime = Self.runtimeFolder("socket-run")
            let environment = ["XDG_RUNTIME_DIR": runtime]
            let path = TestEnvironment.scratchFolder("socket") + "/take.wav"
            // A stale socket of the same name (a killed recorder's): bound, then its process gone.
            mkdir(runtime + "/micmon", 0o700)
            let stalePath = runtime + "/micmon/rec-socket.sock"
            let stale = try MicmonProcess.runPython(
                "import socket; s = socket.socket(socket.AF_UNIX); s.bind('\(stalePath)')")
            #expect(stale == 0 && FileManager.default.fileExists(atPath: stalePath))
            let child = try MicmonProcess(
                Self.recordArguments(server, path, name: "rec-socket"), environment: environment)
            #expect(child.waitUntilRecorded(seconds: 1), "\(child.stderrSoFar)")
            #expect(ControlSocketPath.isLive(stalePath), "the stale socket was not replaced: \(child.stderrSoFar)")

            // A second recorder of the same name never takes the live socket: it gets NAME-2.
            let second = try MicmonProcess(
                [
                    "record", TestEnvironment.scratchFolder("socket-2") + "/take.wav", "-s", server.name, "-n",
                    "rec-socket", "-p", server.source.outputPorts[0], "--json",
                ], environment: environment)
            #expect(second.waitUntilRecorded(seconds: 0.5), "\(second.stderrSoFar)")
            let ambiguous = try MicmonProcess.run(["status"], environment: environment)
            #expect(ambiguous.exitCode == 64, "\(ambiguous.stderr)")
            #expect(ambiguous.stderr.contains("rec-socket") && ambiguous.stderr.contains("-n NAME"))
            // Two sockets: JACK gives the second client a name of its own, and the socket follows it.
            let names = ControlSocketPath.names(in: runtime + "/micmon")
            #expect(names.count == 2 && names.contains("rec-socket"), "\(names)")
            let secondName = names.first { $0 != "rec-socket" } ?? ""
            let secondStatus = try MicmonProcess.run(["status", "-n", secondName], environment: environment)
            #expect(secondStatus.exitCode == 0 && secondStatus.stdout.contains("\"state\":\"recording\""))
            second.signal(SIGINT)
            #expect(second.wait(timeout: 20).exitCode == 0)
            #expect(ControlSocketPath.names(in: runtime + "/micmon") == ["rec-socket"])

            let pause = try MicmonProcess.run(["pause"], environment: environment)
            #expect(pause.exitCode == 0 && pause.stdout.hasPrefix("paused at"), "\(pause.stdout) \(pause.stderr)")
            let again = try MicmonProcess.run(["pause", "-n", "rec-socket"], environment: environment)
            #expect(again.exitCode == 0 && again.stdout.hasPrefix("already paused"), "\(again.stdout)")
            let status = try MicmonProcess.run(["status"], environment: environment)
            #expect(status.stdout.contains("\"state\":\"paused\""), "\(status.stdout) \(status.stderr)")

            // Malformed lines: refused with a reason, nothing else happens.
            let socket = runtime + "/micmon/rec-socket.sock"
            #expect(try ControlSocketClient.send("bogus", to: socket).hasPrefix("error: malformed"))
            #expect(try ControlSocketClient.send("", to: socket).hasPrefix("error: malformed"))
            #expect(try ControlSocketClient.send("pause now", to: socket).hasPrefix("error: malformed"))
            #expect(
                try ControlSocketClient.send(String(repeating: "x", count: 5000), to: socket).hasPrefix(
                    "error: malformed"))
            // Another user, even with the permissions opened up: SO_PEERCRED refuses it.
            if TestEnvironment.isRoot {
                // The scratch root may have been made under another test's umask: nobody must
                // reach the socket through it (only the peer check is left to refuse).
                chmod((runtime as NSString).deletingLastPathComponent, 0o755)
                chmod(runtime, 0o755)
                chmod(runtime + "/micmon", 0o755)
                chmod(socket, 0o666)
                let runuser = try TestEnvironment.executable("runuser", hint: "Debian: util-linux")
                let reply = TestEnvironment.scratchFolder("socket-nobody") + "/reply"
                let other = try ChildProcess(
                    [
                        runuser, "-u", "nobody", "--", "python3", "-c",
                        "import socket; s = socket.socket(socket.AF_UNIX); s.connect('\(socket)'); "
                            + "s.sendall(b'resume\\n'); print(s.recv(500).decode())",
                    ], stdout: reply, stderr: reply + ".stderr")
                #expect(other.wait(timeout: 30) == .init(code: 0, wasKilledBySignal: false))
                let answer = (try? String(contentsOfFile: reply, encoding: .utf8)) ?? ""
                let said = (try? String(contentsOfFile: reply + ".stderr", encoding: .utf8)) ?? ""
                #expect(answer.hasPrefix("error: refused"), "nobody got: \(answer) \(said)")
                chmod(socket, 0o600)
                chmod(runtime + "/micmon", 0o700)
                chmod(runtime, 0o700)
            }
            let stillPaused = try MicmonProcess.run(["status"], environment: environment)
            #expect(stillPaused.stdout.contains("\"state\":\"paused\""), "\(stillPaused.stdout)")
            Glibc.sleep(1)
            let resume = try MicmonProcess.run(["resume"], environment: environment)
            #expect(resume.exitCode == 0 && resume.stdout.hasPrefix("resumed at"), "\(resume.stdout)")
            let mark = try MicmonProcess.run(["mark", "take", "two"], environment: environment)
            #expect(mark.exitCode == 0, "\(mark.stderr)")
            #expect(child.waitUntilRecorded(seconds: 3.5), "\(child.stderrSoFar)")
            let stop = try MicmonProcess.run(["stop"], environment: environment)
            #expect(stop.exitCode == 0, "\(stop.stderr)")
            let result = child.wait(timeout: 20)
            #expect(result.stdout.contains("stopped as asked"), "\(result.stdout.suffix(300))")
            try Self.checkPausedTake(result, path: path, pauses: 1, marks: 1)
            #expect(result.stderr.contains(": take two"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: socket), "the socket is left behind")
            let none = try MicmonProcess.run(["status"], environment: environment)
            #expect(none.exitCode == 69, "\(none.stderr)")
        }

        @Test("keys on a terminal (tmux): space pauses and resumes, m marks, q stops; the terminal is given back")
        func keysOnTerminal() throws {
            let server = try SharedTestServer.require()
            let tmux = try TestEnvironment.executable("tmux", hint: "Debian: tmux")
            let folder = TestEnvironment.scratchFolder("keys")
            let path = folder + "/take.wav"
            let socket = folder + "/tmux.socket"
            func runTmux(_ arguments: [String]) throws {
                let child = try ChildProcess([tmux, "-S", socket] + arguments)
                #expect(child.wait(timeout: 20) == .init(code: 0, wasKilledBySignal: false), "tmux \(arguments)")
            }
            let micmon =
                "'\(TestEnvironment.micmonPath)' record '\(path)' -s \(server.name) -n rec-keys "
                + "-p \(server.source.outputPorts[0]) -p \(server.source.outputPorts[1]) --json "
                + ">'\(folder)/stdout' 2>'\(folder)/stderr'"
            let script =
                "XDG_RUNTIME_DIR='\(Self.runtimeFolder("keys-run"))' \(micmon); echo $? >'\(folder)/code'; "
                + "stty -a >'\(folder)/stty'; sleep 60"
            try runTmux(["new-session", "-d", "-s", "keys", "-x", "100", "-y", "30", "/bin/sh -c \"\(script)\""])
            defer { _ = try? ChildProcess([tmux, "-S", socket, "kill-server"]).wait(timeout: 20) }
            func recorded() -> Double {
                let text = (try? String(contentsOfFile: folder + "/stdout", encoding: .utf8)) ?? ""
                guard let line = text.split(separator: "\n").last(where: { $0.contains("\"frames_recorded\":") }),
                    let frames = line.firstMatch(of: /"frames_recorded":(\d+)/).flatMap({ Double($0.output.1) })
                else { return 0 }
                return frames / Double(server.sampleRate)
            }
            func waitFor(_ seconds: Double) {
                #expect(TestEnvironment.waitUntil(timeout: 30) { recorded() >= seconds }, "not \(seconds) s recorded")
            }
            waitFor(1)
            try runTmux(["send-keys", "-t", "keys", "Space"])
            waitFor(2)
            try runTmux(["send-keys", "-t", "keys", "m"])
            try runTmux(["send-keys", "-t", "keys", "Space"])
            waitFor(3)
            try runTmux(["send-keys", "-t", "keys", "r"])
            try runTmux(["send-keys", "-t", "keys", "q"])
            let ended = TestEnvironment.waitUntil(timeout: 30) {
                ((try? String(contentsOfFile: folder + "/stty", encoding: .utf8)) ?? "").contains("extproc")
            }
            try #require(ended, "micmon did not stop on q")
            let code = (try? String(contentsOfFile: folder + "/code", encoding: .utf8)) ?? ""
            let stdout = (try? String(contentsOfFile: folder + "/stdout", encoding: .utf8)) ?? ""
            let stderr = (try? String(contentsOfFile: folder + "/stderr", encoding: .utf8)) ?? ""
            let stty = (try? String(contentsOfFile: folder + "/stty", encoding: .utf8)) ?? ""
            // Line editing and echo are back after micmon's key mode.
            #expect(stty.contains(" icanon") && stty.contains(" echo "), "\(stty)")
            let result = MicmonProcess.Result(
                exitCode: Int32(code.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1, stdout: stdout,
                stderr: stderr, wasKilledBySignal: false)
            #expect(stdout.contains("stopped as asked"))
            try Self.checkPausedTake(result, path: path, pauses: 1, marks: 1)
        }

        @Test("micmon with stdin not a terminal never reads it: EOF on stdin ends nothing")
        func stdinNotRead() throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("stdin") + "/take.wav"
            // stdin is /dev/null (EOF at once) and "q" from a pipe would be a stop if it were read.
            let shell = try ChildProcess([
                "/bin/sh", "-c",
                "printf 'q q q' | '\(TestEnvironment.micmonPath)' record '\(path)' -s \(server.name) -n rec-stdin "
                    + "-p \(server.source.outputPorts[0]) -p \(server.source.outputPorts[1]) --duration 2 >/dev/null 2>&1",
            ])
            #expect(shell.wait(timeout: 60) == .init(code: 0, wasKilledBySignal: false))
            let outcome = try TakeCheck.verify(path: path)
            #expect(outcome.frameCount == 2 * server.sampleRate && outcome.isExact)
        }

        @Test("record - streams AU and FLAC through a pipe, sample-exact; a closed pipe ends the take with 141")
        func streamToPipe() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("stream")
            for format in ["au", "flac"] {
                let path = folder + "/piped.\(format)"
                let errors = folder + "/stderr-\(format)"
                let shell = try ChildProcess([
                    "/bin/sh", "-c",
                    "'\(TestEnvironment.micmonPath)' record - --format \(format) -s \(server.name) -n rec-stream-\(format) "
                        + "-p \(server.source.outputPorts[0]) -p \(server.source.outputPorts[1]) --duration 3 "
                        + "2>'\(errors)' | cat > '\(path)'",
                ])
                #expect(shell.wait(timeout: 60) == .init(code: 0, wasKilledBySignal: false))
                let outcome = try TakeCheck.verify(path: path)
                #expect(outcome.frameCount == 3 * server.sampleRate, "\(format)")
                #expect(outcome.isExact, "\(format): first mismatch at \(outcome.firstMismatch ?? -1)")
            }
            // The reader goes away after 100 kB: the take ends on its own, exit 141, and stdout
            // carried nothing but the take (it starts with AU's magic).
            let head = folder + "/head.bin"
            let codes = folder + "/codes"
            let shell = try ChildProcess([
                "/bin/bash", "-c",
                "'\(TestEnvironment.micmonPath)' record - -s \(server.name) -n rec-stream-closed "
                    + "-p \(server.source.outputPorts[0]) --duration 60 2>/dev/null | head -c 100000 > '\(head)'; "
                    + "echo ${PIPESTATUS[0]} > '\(codes)'",
            ])
            #expect(shell.wait(timeout: 60) == .init(code: 0, wasKilledBySignal: false))
            let code = (try? String(contentsOfFile: codes, encoding: .utf8))?.trimmingCharacters(
                in: .whitespacesAndNewlines)
            #expect(code == "141")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: head))
            #expect(bytes.count == 100000 && bytes.prefix(4) == Data(".snd".utf8))
        }

        @Test("--transport records while the JACK transport rolls, from its start to its stop within a period")
        func followsTransport() throws {
            let server = try SharedTestServer.require()
            func send(_ command: String) throws { try JackTransport.send(command, server: server.name) }
            try send("stop")
            try send("locate 0")
            let path = TestEnvironment.scratchFolder("transport") + "/take.wav"
            let child = try MicmonProcess(
                Self.recordArguments(server, path, name: "rec-transport") + ["--transport"],
                environment: ["XDG_RUNTIME_DIR": Self.runtimeFolder("transport-run")])
            #expect(child.waitUntilRecorded(seconds: 1), "\(child.stderrSoFar)")
            try send("play")
            #expect(child.waitUntilRecorded(seconds: 2.5), "\(child.stderrSoFar)")
            try send("stop")
            Glibc.usleep(300_000)
            let rolled = server.source.client.transport().frame
            #expect(child.waitUntilRecorded(seconds: 3.5), "\(child.stderrSoFar)")
            child.signal(SIGINT)
            let result = child.wait(timeout: 20)
            #expect(result.exitCode == 0, "\(result.stderr)")
            let events = PausedTake.events(result.stderr)
            // Paused from the start (the transport stood), resumed when it rolled, paused at its stop.
            #expect(events.map(\.kind) == ["paused", "resumed", "paused"], "\(result.stderr)")
            let held = try #require(PausedTake.summaryFrames(result.stdout))
            let period = UInt64(server.source.client.bufferSize)
            #expect(held + period >= rolled && held <= rolled + period, "held \(held), the transport rolled \(rolled)")
            if events.count == 3 {
                let kept = [events[1].frame ..< events[2].frame]
                let check = try PausedTake.mismatches(path: path, kept: kept)
                #expect(UInt64(check.frames) == held)
                #expect(check.mismatched == 0)
            }
            try send("locate 0")
        }

        @Test("--transport-split: each roll of the transport after the first goes to a file of its own, exact")
        func transportSplitsFiles() throws {
            let server = try SharedTestServer.require()
            func send(_ command: String) throws { try JackTransport.send(command, server: server.name) }
            try send("stop")
            try send("locate 0")
            let folder = TestEnvironment.scratchFolder("transport-split")
            let path = folder + "/take.wav"
            let child = try MicmonProcess(
                Self.recordArguments(server, path, name: "rec-transport-split") + ["--transport-split"],
                environment: ["XDG_RUNTIME_DIR": Self.runtimeFolder("transport-split-run")])
            #expect(child.waitUntilRecorded(seconds: 1), "\(child.stderrSoFar)")
            for roll in 1 ... 2 {
                try send("play")
                #expect(child.waitUntilRecorded(seconds: 1.5 * Double(roll) + 1), "\(child.stderrSoFar)")
                try send("stop")
                Glibc.usleep(500_000)
            }
            child.signal(SIGINT)
            let result = child.wait(timeout: 20)
            try send("locate 0")
            #expect(result.exitCode == 0, "\(result.stderr)")
            let events = PausedTake.events(result.stderr)
            #expect(events.map(\.kind) == ["paused", "resumed", "paused", "resumed", "paused"], "\(result.stderr)")
            let files = try FileManager.default.contentsOfDirectory(atPath: folder)
                .filter { $0.hasSuffix(".wav") }.sorted { $0.count < $1.count || ($0.count == $1.count && $0 < $1) }
            #expect(files == ["take.wav", "take-2.wav"], "\(files)")
            guard events.count == 5, files.count == 2 else { return }
            // The first roll in take.wav, the second in take-2.wav, each exact to the source.
            for (index, file) in files.enumerated() {
                let kept = [events[1 + 2 * index].frame ..< events[2 + 2 * index].frame]
                let check = try PausedTake.mismatches(path: folder + "/" + file, kept: kept)
                #expect(UInt64(check.frames) == kept[0].count, "\(file): \(check.frames) frames for \(kept[0])")
                #expect(check.mismatched == 0, "\(file)")
            }
        }
    }
}

extension MicmonProcess {
    /// Runs `python3 -c code`; its exit code.
    static func runPython(_ code: String) throws -> Int32 {
        let python = try TestEnvironment.executable("python3", hint: "Debian: python3")
        let child = try ChildProcess([python, "-c", code])
        return child.wait(timeout: 30).code
    }
}
