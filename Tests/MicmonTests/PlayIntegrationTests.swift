import DSP
import Foundation
import Glibc
import SoundFile
import Testing

/// `micmon play` against a real JACK server, into a recording client in the test process.
extension JackIntegrationTests {
    @Suite("Playback against a real JACK server")
    struct PlayIntegrationTests {
        /// Writes `frames` of `channels` (interleaved) to a float WAV at `rate`.
        static func writeFile(_ path: String, rate: Int, channels: Int, samples: [Float]) throws {
            let writer = try SoundFileWriter(
                path: path, format: AudioFileFormat(container: .wav, encoding: .float),
                sampleRate: rate, channelCount: channels)
            try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
            try writer.close()
        }

        /// The reference signal, frames 0 ..< count, interleaved stereo.
        static func referenceStereo(_ count: Int) -> [Float] {
            (0 ..< count).flatMap {
                [
                    ReferenceSignal.value(channel: 0, frame: UInt64($0)),
                    ReferenceSignal.value(channel: 1, frame: UInt64($0)),
                ]
            }
        }

        /// Plays `file` into a fresh recorder and returns the recorder's channels, from the first
        /// non-silent frame on, and micmon's result.
        /// A run during which the server reported an xrun may have skipped a cycle for one of
        /// the clients, which says nothing about micmon: such a run is repeated (up to 3 times).
        static func playAndRecord(_ file: String, extra: [String] = [], recorderName: String) throws
            -> (left: [Float], right: [Float], result: MicmonProcess.Result)
        {
            var attempt = 0
            while true {
                attempt += 1
                let run = try playAndRecordOnce(file, extra: extra, recorderName: recorderName)
                if xruns(run.result) == 0 || attempt == 3 { return run }
            }
        }

        static func playAndRecordOnce(_ file: String, extra: [String], recorderName: String) throws
            -> (left: [Float], right: [Float], result: MicmonProcess.Result)
        {
            let server = try SharedTestServer.require()
            let recorder = try TestRecorder(
                serverName: server.name, clientName: recorderName, capacityFrames: server.sampleRate * 20)
            let result = try MicmonProcess.run(
                [
                    "play", file, "-s", server.name, "-n", recorderName + "-player",
                    "-o", recorder.inputPorts[0], "-o", recorder.inputPorts[1], "--json",
                ] + extra, timeout: 60)
            usleep(100_000)
            let (left, right) = recorder.finish()
            let first = left.indices.first { left[$0] != 0 || right[$0] != 0 } ?? left.count
            return (Array(left[first...]), Array(right[first...]), result)
        }

        /// Xruns the server reported during the run (from micmon's summary line).
        static func xruns(_ result: MicmonProcess.Result) -> Int {
            let summary = result.stdout.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") } ?? ""
            guard let range = summary.range(of: #""xruns":(\d+)"#, options: .regularExpression) else { return 0 }
            return Int(summary[range].split(separator: ":")[1].prefix { $0.isNumber }) ?? 0
        }

        static func framesPlayed(_ result: MicmonProcess.Result) -> Int? {
            guard let range = result.stdout.range(of: #""frames_played":(\d+)"#, options: .regularExpression) else {
                return nil
            }
            return Int(result.stdout[range].split(separator: ":")[1])
        }

        /// `framesPlayed`, or a failure when the summary does not say.
        static func requireFramesPlayed(_ result: MicmonProcess.Result) throws -> Int {
            try #require(
                framesPlayed(result),
                "no frames_played in the output: \(result.stdout.suffix(400)); stderr: \(result.stderr)")
        }

        /// The shared server's rate: the files the tests play are written at it, so playback needs
        /// no resampling and can be compared sample for sample.
        static func serverRate() throws -> Int { try SharedTestServer.require().sampleRate }

        @Test("volume 1, centre pan, rate 1: the recording is the file, sample for sample, and loops are exact")
        func sampleExactWithLoops() throws {
            let count = 24000
            let samples = Self.referenceStereo(count)
            let path = TestEnvironment.scratchFolder("play") + "/ref.wav"
            try Self.writeFile(path, rate: try Self.serverRate(), channels: 2, samples: samples)
            let (left, right, result) = try Self.playAndRecord(
                path, extra: ["--loops", "2"], recorderName: "precexact")
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(try Self.requireFramesPlayed(result) == 3 * count)
            try #require(left.count >= 3 * count)
            var mismatches = 0
            for pass in 0 ..< 3 {
                for frame in 0 ..< count
                where left[pass * count + frame] != samples[2 * frame]
                    || right[pass * count + frame] != samples[2 * frame + 1]
                {
                    mismatches += 1
                }
            }
            #expect(mismatches == 0)
            #expect(left[(3 * count)...].allSatisfy { $0 == 0 })  // nothing after the last loop
        }

        @Test("volume and pan known answers: stereo balance and mono constant power")
        func volumeAndPan() throws {
            let count = 9600
            let folder = TestEnvironment.scratchFolder("pan")
            let stereo = Self.referenceStereo(count)
            try Self.writeFile(folder + "/stereo.wav", rate: try Self.serverRate(), channels: 2, samples: stereo)
            let balanced = try Self.playAndRecord(
                folder + "/stereo.wav", extra: ["--volume", "0.5", "--pan", "-1"], recorderName: "precpan1")
            #expect(balanced.result.exitCode == 0, "stderr: \(balanced.result.stderr)")
            try #require(balanced.left.count >= count, "only \(balanced.left.count) frames recorded")
            #expect((0 ..< count).allSatisfy { balanced.left[$0] == 0.5 * stereo[2 * $0] })  // exact: × 0.5
            #expect(balanced.right.allSatisfy { $0 == 0 })  // pan −1 silences the right

            let mono = (0 ..< count).map { ReferenceSignal.value(channel: 0, frame: UInt64($0)) }
            try Self.writeFile(folder + "/mono.wav", rate: try Self.serverRate(), channels: 1, samples: mono)
            let centred = try Self.playAndRecord(folder + "/mono.wav", recorderName: "precpan2")
            #expect(centred.result.exitCode == 0, "stderr: \(centred.result.stderr)")
            try #require(centred.left.count >= count, "only \(centred.left.count) frames recorded")
            let gain = Float(0.5.squareRoot())  // cos(π/4): −3.01 dB
            #expect(
                (0 ..< count).allSatisfy {
                    abs(centred.left[$0] - gain * mono[$0]) <= 1e-6 && abs(centred.right[$0] - gain * mono[$0]) <= 1e-6
                })
            let right = try Self.playAndRecord(folder + "/mono.wav", extra: ["--pan", "1"], recorderName: "precpan3")
            #expect(right.result.exitCode == 0, "stderr: \(right.result.stderr)")
            try #require(right.right.count >= count, "only \(right.right.count) frames recorded")
            let rightMismatch = (0 ..< count).first { abs(right.right[$0] - mono[$0]) > 1e-6 }
            #expect(
                rightMismatch == nil,
                "pan 1: first mismatch at \(rightMismatch ?? -1): \(rightMismatch.map { (right.right[$0], mono[$0]) } ?? (0, 0)); left starts \(right.left.prefix(3)), xruns \(Self.xruns(right.result))"
            )
            #expect(right.left.allSatisfy { abs($0) <= 1e-6 })
        }

        @Test("rate 2 halves the duration; rate 0.5 doubles it (within one period)")
        func rateChangesDuration() throws {
            let server = try SharedTestServer.require()
            let count = server.sampleRate
            let period = server.source.client.bufferSize
            let path = TestEnvironment.scratchFolder("rate") + "/one-second.wav"
            try Self.writeFile(path, rate: server.sampleRate, channels: 2, samples: Self.referenceStereo(count))
            let fast = try MicmonProcess.run([
                "play", path, "-s", server.name, "-n", "prate2", "-o", "system:playback_*", "--rate", "2", "--json",
            ])
            #expect(fast.exitCode == 0, "stderr: \(fast.stderr)")
            let fastFrames = try Self.requireFramesPlayed(fast)
            #expect(abs(fastFrames - count / 2) <= period, "played \(fastFrames)")
            let slow = try MicmonProcess.run([
                "play", path, "-s", server.name, "-n", "prate05", "-o", "system:playback_*", "--rate", "0.5", "--json",
            ])
            #expect(slow.exitCode == 0, "stderr: \(slow.stderr)")
            let slowFrames = try Self.requireFramesPlayed(slow)
            #expect(abs(slowFrames - count * 2) <= period, "played \(slowFrames)")
        }

        @Test("a file at another rate than the server's plays with its sine's frequency and level kept")
        func resamplingKeepsFrequencyAndLevel() throws {
            let serverRate = try Self.serverRate()
            let rate = serverRate == 44100 ? 48000 : 44100
            let frequency = 1000.0
            let samples = (0 ..< rate).map { Float(0.5 * sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
            let path = TestEnvironment.scratchFolder("resample") + "/sine.wav"
            try Self.writeFile(path, rate: rate, channels: 1, samples: samples)
            let played = try Self.playAndRecord(path, extra: ["--pan", "-1"], recorderName: "precsrc")
            #expect(played.result.exitCode == 0, "stderr: \(played.result.stderr)")
            // The file is one second long: 0.8 s in the middle of what came back.
            try #require(played.left.count >= serverRate * 9 / 10, "only \(played.left.count) frames recorded")
            let steady = Array(played.left[serverRate / 10 ..< serverRate * 9 / 10])
            var crossings = 0
            for i in 1 ..< steady.count where steady[i - 1] < 0 && steady[i] >= 0 { crossings += 1 }
            let measured = Double(crossings) / (Double(steady.count) / Double(serverRate))
            #expect(abs(measured - frequency) <= 2, "measured \(measured) Hz")
            let rms = (steady.map { Double($0) * Double($0) }.reduce(0, +) / Double(steady.count)).squareRoot()
            let level = 20 * log10(rms)
            #expect(abs(level - 20 * log10(0.5 / 2.0.squareRoot())) <= 0.1, "level \(level) dBFS")
        }

        @Test(
            "bad input exits 64 and plays nothing",
            arguments: [
                (["/nonexistent/take.wav"], "No such file"),
                (["TRUNCATED"], "cannot play"),
                (["RANDOM"], "cannot play"),
                (["DIR"], "is a directory"),
                (["GOOD", "--volume", "1.5"], "--volume must be between 0 and 1"),
                (["GOOD", "--pan", "-2"], "--pan must be between -1 and 1"),
                (["GOOD", "--rate", "3"], "--rate must be between 0.5 and 2"),
                (["GOOD", "--loops", "-2"], "--loops needs a whole number"),
                (["GOOD", "-o", "nosuch:port"], "no JACK input port matches 'nosuch:port'"),
            ])
        func badInput(arguments: [String], message: String) throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("playbad")
            let good = folder + "/good.wav"
            try Self.writeFile(
                good, rate: server.sampleRate, channels: 2, samples: Self.referenceStereo(server.sampleRate / 10))
            let wav = try Data(contentsOf: URL(fileURLWithPath: good))
            try wav.prefix(30).write(to: URL(fileURLWithPath: folder + "/truncated.wav"))
            try Data((0 ..< 5000).map { _ in UInt8.random(in: 0 ... 255) }).write(
                to: URL(fileURLWithPath: folder + "/random.wav"))
            let resolved = arguments.map { argument -> String in
                switch argument {
                case "GOOD": return good
                case "TRUNCATED": return folder + "/truncated.wav"
                case "RANDOM": return folder + "/random.wav"
                case "DIR": return folder
                default: return argument
                }
            }
            let result = try MicmonProcess.run(["play"] + resolved + ["-s", server.name, "-n", "pbad"], timeout: 20)
            #expect(result.exitCode == 64, "stderr: \(result.stderr)")
            #expect(result.stderr.contains(message), "stderr: \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }

        @Test("--on-route-loss stop ends playback when the destination goes away; SIGINT stops with exit 0")
        func routeLossStopsAndInterruptIsClean() throws {
            let server = try SharedTestServer.require()
            let rate = server.sampleRate
            let path = TestEnvironment.scratchFolder("routestop") + "/twenty-seconds.wav"
            try Self.writeFile(path, rate: rate, channels: 2, samples: Self.referenceStereo(rate * 20))
            let recorder = try TestRecorder(serverName: server.name, clientName: "pstop", capacityFrames: rate * 30)
            let player = try MicmonProcess([
                "play", path, "-s", server.name, "-n", "pstop-player", "-o", "pstop:in_1", "-o", "pstop:in_2",
                "--on-route-loss", "stop", "--json",
            ])
            #expect(player.waitUntilRunning(seconds: 0.5), "the player did not start: \(player.stderrSoFar)")
            _ = recorder.finish()
            let stopped = player.wait(timeout: 30)
            #expect(stopped.exitCode == 0, "stderr: \(stopped.stderr)")
            #expect(stopped.stdout.contains("\"reason\":\"route lost\""), "\(stopped.stdout.suffix(400))")
            #expect(try Self.requireFramesPlayed(stopped) < rate * 19, "it played on after the route was lost")

            let interrupted = try MicmonProcess([
                "play", path, "-s", server.name, "-n", "pint-player", "-o", "system:playback_*", "--json",
            ])
            #expect(interrupted.waitUntilRunning(seconds: 0.5), "the player did not start: \(interrupted.stderrSoFar)")
            interrupted.signal(SIGINT)
            let result = interrupted.wait(timeout: 30)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(result.stdout.contains("interrupted (SIGINT)"))
        }

        @Test("the destination going away pauses playback; its return resumes it with nothing skipped")
        func routeLossPausesAndResumes() throws {
            let server = try SharedTestServer.require()
            let count = server.sampleRate * 2
            let path = TestEnvironment.scratchFolder("route") + "/two-seconds.wav"
            try Self.writeFile(path, rate: server.sampleRate, channels: 2, samples: Self.referenceStereo(count))
            var recorder: TestRecorder? = try TestRecorder(
                serverName: server.name, clientName: "proute", capacityFrames: server.sampleRate * 10)
            let player = try MicmonProcess([
                "play", path, "-s", server.name, "-n", "proute-player",
                "-o", "proute:in_1", "-o", "proute:in_2", "--json",
            ])
            #expect(player.waitUntilRunning(seconds: 0.3), "the player did not start: \(player.stderrSoFar)")
            _ = recorder?.finish()
            recorder = nil
            #expect(player.waitUntilStderr(contains: "route lost"), "stderr: \(player.stderrSoFar)")
            recorder = try TestRecorder(
                serverName: server.name, clientName: "proute", capacityFrames: server.sampleRate * 10)
            let result = player.wait(timeout: 30)
            _ = recorder?.finish()
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("route lost"))
            #expect(result.stderr.contains("resumed"))
            #expect(try Self.requireFramesPlayed(result) == count)
        }
    }
}
