import DSP
import Engine
import Foundation
import Glibc
import Jack
import Platform
import Testing

/// `micmon latency` against a real server: the software loop measures one period exactly, the
/// result agrees with jack_iodelay on the same server, bad ports are refused, and a missing
/// return is reported as such.
extension JackIntegrationTests {
    @Suite("Latency against a real JACK server")
    struct LatencyIntegrationTests {
        static func lastObject(_ result: MicmonProcess.Result) throws -> [String: Any] {
            let line = try #require(result.stdout.split(separator: "\n").last, "no output; stderr: \(result.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }

        static func double(_ value: Any?) -> Double? {
            if let number = value as? NSNumber { return number.doubleValue }
            return value as? Double
        }

        static func object(_ value: Any?) -> [String: Any]? { value as? [String: Any] }

        /// The number at `key`; a missing key or a non-number fails the test (never read as 0).
        static func number(_ object: [String: Any], _ key: String) throws -> Double {
            try #require(double(object[key]), "no number at \"\(key)\" in \(object)")
        }

        /// The object at `key`; a missing key or another type fails the test.
        static func object(_ object: [String: Any], _ key: String) throws -> [String: Any] {
            try #require(Self.object(object[key]), "no object at \"\(key)\" in \(object)")
        }

        /// Whether `key` is present and JSON null (a missing key is not null).
        static func isNull(_ object: [String: Any], _ key: String) -> Bool {
            object.keys.contains(key) && object[key] is NSNull
        }

        /// The period the shared server runs at, in frames.
        static func period(_ server: SharedTestServer) -> Double { Double(server.source.client.bufferSize) }

        @Test("a software loop measures exactly one period, stable to 0.01 frame, locked within 0.25 s")
        func softwareLoop() throws {
            let server = try SharedTestServer.require()
            let result = try MicmonProcess.run(
                ["latency", "-s", server.name, "-n", "lat-loop", "--software-loop", "--duration", "2", "--json"],
                timeout: 30)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let summary = try Self.lastObject(result)
            let frames = try #require(Self.object(summary["round_trip_frames"]), "\(result.stdout)")
            let low = try #require(Self.double(frames["min"]))
            let mean = try #require(Self.double(frames["mean"]))
            let high = try #require(Self.double(frames["max"]))
            let period = Self.period(server)
            #expect(Self.double(summary["period_frames"]) == period)
            #expect(abs(mean - period) <= 0.01, "round trip \(mean) frames on a \(period)-frame period")
            #expect(abs(low - period) <= 0.01 && abs(high - period) <= 0.01)
            #expect(high - low <= 0.01)
            let lock = try #require(Self.double(summary["lock_ms"]))
            #expect(lock > 0 && lock <= 250, "lock \(lock) ms")
            let milliseconds = try Self.object(summary, "round_trip_ms")
            #expect(abs(try Self.number(milliseconds, "mean") - period / Double(server.sampleRate) * 1000) < 1e-3)
            let trip = try Self.object(summary, "round_trip")
            #expect(trip["status"] as? String == "measured")
            #expect(trip["polarity"] as? String == "normal")
            #expect(try Self.number(trip, "estimates") >= 15)
            // JACK accounts for none of the loop's period.
            #expect(try Self.number(trip, "jack_reported_frames") == 0)
            #expect(abs(try Self.number(trip, "unaccounted_frames") - period) <= 0.01)
            // The callback statistics are there too.
            #expect(try Self.number(summary, "cycles") >= 2 * Double(server.sampleRate) / period * 0.9)
            let execution = try Self.object(summary, "execution_us")
            for key in ["p50", "p90", "p99", "p999", "max", "mean"] { _ = try Self.number(execution, key) }
            print("micmon latency --software-loop: \(mean) frames (min \(low), max \(high)), lock \(lock) ms")
        }

        /// jack_iodelay's readings, each with the time it was printed (seconds after the loop was
        /// connected), from its line-buffered output.
        static func iodelayReadings(in text: String) -> [Double] {
            text.split(separator: "\n").compactMap { line in
                guard line.contains("total roundtrip latency") else { return nil }
                return line.split(separator: " ").first.flatMap { Double($0) }
            }
        }

        @Test(
            "agrees with jack_iodelay on the same software loop of the same server (within 0.05 frame)",
            .enabled(
                if: TestEnvironment.runs(needing: Child.findExecutable("jack_iodelay") != nil),
                "jack_iodelay is not installed (Debian: jackd2)"))
        func anchor() throws {
            let server = try SharedTestServer.require()
            let iodelay = try TestEnvironment.executable("jack_iodelay", hint: "Debian: jackd2")
            let folder = TestEnvironment.scratchFolder("iodelay")
            let logPath = folder + "/stdout"
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            // Line-buffered, so every reading reaches the file when it is printed.
            let command = Child.findExecutable("stdbuf").map { [$0, "-oL", iodelay] } ?? [iodelay]
            let anchor = try ChildProcess(command, environment: ["JACK_DEFAULT_SERVER": server.name], stdout: logPath)
            defer {
                // jack_iodelay never exits by itself.
                anchor.signal(SIGTERM)
                anchor.wait(timeout: 3)
            }

            // Its ports need connecting by hand: from this process's client on the same server.
            let client = server.source.client
            var ports: (out: String, in: String)?
            let waitUntil = Date().addingTimeInterval(10)
            while ports == nil && Date() < waitUntil {
                if let out = client.portNames(namePattern: "^jack_delay[^:]*:out$").first,
                    let input = client.portNames(namePattern: "^jack_delay[^:]*:in$").first
                {
                    ports = (out, input)
                } else {
                    usleep(20_000)
                }
            }
            let loop = try #require(ports, "jack_iodelay's ports did not appear")
            // Its ports exist before its client is active, and jackd2 refuses to connect the
            // ports of an inactive client: try again for a while.
            let connectUntil = Date().addingTimeInterval(10)
            while true {
                do {
                    try client.connect(source: loop.out, destination: loop.in)
                    break
                } catch {
                    if Date() >= connectUntil { throw error }
                    usleep(50_000)
                }
            }
            let connected = Date()

            let micmon = try MicmonProcess([
                "latency", "-s", server.name, "-n", "lat-anchor", "--software-loop", "--duration", "3", "--json",
            ])
            // Time-stamp jack_iodelay's readings as they appear (it prints one about every 250 ms).
            var stamped: [(seconds: Double, frames: Double)] = []
            var linesSeen = 0
            while Date().timeIntervalSince(connected) < 3.5 || micmon.process.isRunning {
                if Date().timeIntervalSince(connected) > 40 { break }
                let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                // The last line may be partial.
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                for line in lines.dropFirst(linesSeen) {
                    if let value = Self.iodelayReadings(in: String(line)).first {
                        stamped.append((Date().timeIntervalSince(connected), value))
                    }
                }
                linesSeen = lines.count
                usleep(10_000)
            }
            client.disconnect(source: loop.out, destination: loop.in)
            let result = micmon.wait(timeout: 30)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")

            try #require(stamped.count >= 4, "jack_iodelay printed \(stamped.count) readings")
            let sorted = stamped.map(\.frames).sorted()
            let median = sorted[sorted.count / 2]
            let spread = sorted.last! - sorted.first!
            let iodelayLock = stamped.first { abs($0.frames - median) <= 0.05 }.map { $0.seconds * 1000 }

            let summary = try Self.lastObject(result)
            let frames = try #require(Self.object(summary["round_trip_frames"]))
            let mean = try #require(Self.double(frames["mean"]))
            let low = try #require(Self.double(frames["min"]))
            let high = try #require(Self.double(frames["max"]))
            let lock = try #require(Self.double(summary["lock_ms"]))
            print(
                """
                anchor on server '\(server.name)', period \(Int(Self.period(server))) frames:
                  micmon latency  \(mean) frames (min \(low), max \(high)), locked \(lock) ms after its first emitted sample
                  jack_iodelay    median \(median) frames over \(stamped.count) readings (spread \(spread)), \
                first reading at the median \(iodelayLock.map { String(Int($0)) } ?? "-") ms after the loop was connected
                """)
            #expect(abs(mean - median) <= 0.05, "micmon \(mean) vs jack_iodelay median \(median)")
            #expect(high - low <= 0.01)
            #expect(lock <= 250)
        }

        @Test("bad --send/--return ports exit 64 with a one-line reason")
        func badPorts() throws {
            let server = try SharedTestServer.require()
            let anInput = try #require(
                server.source.client.portNames(direction: .input).first, "the server has no input port")
            let cases: [([String], String)] = [
                (["--send", "nosuch:port"], "--send: no JACK port named 'nosuch:port'"),
                (["--return", "nosuch:port", "--send", anInput], "--return: no JACK port named 'nosuch:port'"),
                (["--send", server.source.outputPorts[0]], "--send needs an input port"),
                (["--return", anInput], "--return needs an output port"),
            ]
            for (options, message) in cases {
                let result = try MicmonProcess.run(
                    ["latency", "-s", server.name, "-n", "lat-bad", "--duration", "1"] + options, timeout: 30)
                #expect(result.exitCode == 64, "\(options): stderr \(result.stderr)")
                #expect(result.stderr.hasPrefix("micmon: " + message), "\(options): \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
                #expect(result.stdout.isEmpty)
            }
        }

        @Test("a return that is not the signal reads 'no signal', a silent one 'silence', an open loop 'not connected'")
        func noSignal() throws {
            let server = try SharedTestServer.require()
            let client = server.source.client
            let anInput = try #require(client.portNames(direction: .input).first, "the server has no input port")
            // The test source's PRBS comes back instead of the signal.
            let noise = try MicmonProcess.run(
                [
                    "latency", "-s", server.name, "-n", "lat-noise", "--send", anInput,
                    "--return", server.source.outputPorts[1], "--duration", "1", "--json",
                ], timeout: 30)
            #expect(noise.exitCode == 0, "stderr: \(noise.stderr)")
            let noiseSummary = try Self.lastObject(noise)
            #expect(try Self.object(noiseSummary, "round_trip")["status"] as? String == "no signal")
            #expect(Self.isNull(noiseSummary, "round_trip_frames"), "\(noiseSummary)")
            #expect(Self.isNull(noiseSummary, "lock_ms"), "\(noiseSummary)")
            #expect(try Self.number(noiseSummary, "cycles") > 0)

            // The dummy backend's capture ports carry silence.
            let silentSource = try #require(
                client.portNames(direction: .output, physicalOnly: true).first, "no physical capture port")
            let silent = try MicmonProcess.run(
                [
                    "latency", "-s", server.name, "-n", "lat-silent", "--send", anInput,
                    "--return", silentSource, "--duration", "1",
                ], timeout: 30)
            #expect(silent.exitCode == 0, "stderr: \(silent.stderr)")
            #expect(silent.stdout.contains("no signal: nothing comes back"), "\(silent.stdout)")
            #expect(silent.stdout.contains("Callback timing over"))

            // Only one end given and the other never connected by hand: nothing is sent.
            let open = try MicmonProcess.run(
                ["latency", "-s", server.name, "-n", "lat-open", "--send", anInput, "--duration", "1", "--json"],
                timeout: 30)
            #expect(open.exitCode == 0, "stderr: \(open.stderr)")
            #expect(open.stderr.contains("no --return: connect the loop to"))
            #expect(try Self.object(try Self.lastObject(open), "round_trip")["status"] as? String == "not connected")
        }

        @Test("a loop closed by hand a second after the start: the signal waits for it, the delay is still one period")
        func loopClosedByHand() throws {
            let server = try SharedTestServer.require()
            let client = server.source.client
            let anInput = try #require(client.portNames(direction: .input).first, "the server has no input port")
            let child = try MicmonProcess([
                "latency", "-s", server.name, "-n", "lat-hand", "--send", anInput, "--duration", "4", "--json",
            ])
            let registered = TestEnvironment.waitUntil(timeout: 30) {
                client.portExists("lat-hand:out_1") && client.portExists("lat-hand:in_1")
            }
            try #require(registered, "micmon latency's ports did not appear: \(child.stderrSoFar)")
            // The loop is closed late on purpose: the one fixed pause here is the thing tested.
            Thread.sleep(forTimeInterval: 1)
            try client.connect(source: "lat-hand:out_1", destination: "lat-hand:in_1")
            let result = child.wait(timeout: 30)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let summary = try Self.lastObject(result)
            let frames = try #require(Self.object(summary["round_trip_frames"]), "\(result.stdout)")
            #expect(abs(try Self.number(frames, "mean") - Self.period(server)) <= 0.01)
            #expect(try Self.number(frames, "max") - Self.number(frames, "min") <= 0.01)
            #expect(try Self.number(summary, "lock_ms") <= 250)
        }

        @Test("without a loop only callback timing is reported")
        func timingOnly() throws {
            let server = try SharedTestServer.require()
            let result = try MicmonProcess.run(
                ["latency", "-s", server.name, "-n", "lat-timing", "--duration", "1", "--json"], timeout: 30)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let summary = try Self.lastObject(result)
            #expect(Self.isNull(summary, "round_trip"), "\(summary)")
            #expect(Self.isNull(summary, "round_trip_frames"), "\(summary)")
            #expect(try Self.number(summary, "duration_s") >= 1)
            let load = try Self.object(summary, "dsp_load_pct")
            #expect(try Self.number(load, "micmon") >= 0 && Self.number(load, "server_mean") >= 0)
            #expect(try Self.number(summary, "xruns") >= 0)
            #expect(summary["xrun_times_s"] is [Any], "\(summary)")
        }

        @Test("SIGINT ends the run with a summary")
        func interrupt() throws {
            let server = try SharedTestServer.require()
            let child = try MicmonProcess([
                "latency", "-s", server.name, "-n", "lat-int", "--software-loop", "--duration", "60",
            ])
            // Interrupt once the loop is measuring: its ports are up, and its first estimate is in.
            let client = server.source.client
            let registered = TestEnvironment.waitUntil(timeout: 30) { client.portExists("lat-int:in_1") }
            try #require(registered, "micmon latency's ports did not appear: \(child.stderrSoFar)")
            Thread.sleep(forTimeInterval: 1)
            child.signal(SIGINT)
            let result = child.wait(timeout: 20)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(result.stdout.contains("ended: interrupted (SIGINT)"))
            #expect(result.stdout.contains("Round trip (software loop"))
        }

        @Test("the session emits the measurement signal sample for sample and disconnects what it connected")
        func emitsAndDisconnects() throws {
            let server = try SharedTestServer.require()
            let recorder = try TestRecorder(
                serverName: server.name, clientName: "lat-rec", capacityFrames: server.sampleRate * 10)
            var configuration = LatencyConfiguration()
            configuration.clientName = "lat-inproc"
            configuration.serverName = server.name
            configuration.softwareLoop = true
            configuration.sendPort = recorder.inputPorts[0]
            configuration.durationSeconds = 1
            let session = try LatencySession(configuration)
            try session.start()
            #expect(
                Set(session.client.connections(of: session.outputPort)) == [
                    session.inputPort.fullName, recorder.inputPorts[0],
                ])
            let deadline = Date().addingTimeInterval(20)
            while !session.isComplete && Date() < deadline {
                usleep(10_000)
                session.poll()
            }
            let summary = session.stop()
            #expect(session.client.connections(of: session.outputPort).isEmpty)
            #expect(session.client.connections(of: session.inputPort).isEmpty)
            session.close()
            let trip = try #require(summary.roundTrip)
            let meanFrames = try #require(trip.meanFrames, "no round trip measured: \(trip)")
            #expect(abs(meanFrames - Self.period(server)) <= 0.01)

            let (received, _) = recorder.finish()
            let signal = session.signal
            #expect(signal.samples[0] != 0)
            let first = try #require(received.firstIndex { $0 != 0 })
            let last = try #require(received.lastIndex { $0 != 0 })
            let emitted = last - first + 1
            #expect(emitted >= server.sampleRate * 9 / 10, "only \(emitted) frames of signal")
            let mismatches = (0 ..< emitted).filter { received[first + $0] != signal.value(at: $0) }.count
            #expect(mismatches == 0)
        }
    }
}
