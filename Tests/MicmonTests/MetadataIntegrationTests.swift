import DSP
import Engine
import Foundation
import Jack
import SoundFile
import Testing

/// `micmon record` writes a `bext` chunk whose TimeReference is the first sample's place since
/// local midnight, read back by libsndfile and by mediainfo (a peer), and lists a writer stall's
/// drop and the source's clips at their frames in the cue chunk and the sidecar.
extension JackIntegrationTests {
    @Suite("Broadcast WAV and markers against a real JACK server")
    struct MetadataIntegrationTests {
        /// The sidecar's markers as (kind, start_frame, length).
        static func sidecar(_ path: String) throws -> (object: [String: Any], markers: [(String, Int, Int)]) {
            let data = try #require(FileManager.default.contents(atPath: path + ".json"), "no sidecar")
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let markers = try #require(object["markers"] as? [[String: Any]])
            return (
                object,
                markers.map {
                    ($0["kind"] as? String ?? "", $0["start_frame"] as? Int ?? -1, $0["length"] as? Int ?? 0)
                }
            )
        }

        /// What a program prints on stdout.
        static func output(_ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: arguments[0])
            process.arguments = Array(arguments.dropFirst())
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }

        /// Frames since local midnight of a wall-clock time (seconds since the epoch), by
        /// Foundation's calendar.
        static func framesSinceMidnight(_ seconds: Double, rate: Int) -> Int {
            let date = Date(timeIntervalSince1970: seconds)
            let parts = Calendar(identifier: .gregorian).dateComponents(
                [.hour, .minute, .second, .nanosecond], from: date)
            let whole = (parts.hour ?? 0) * 3600 + (parts.minute ?? 0) * 60 + (parts.second ?? 0)
            return whole * rate + Int((Double(parts.nanosecond ?? 0) / 1e9 * Double(rate)).rounded())
        }

        @Test(
            "bext: TimeReference is the first sample's frames since midnight within a period (libsndfile, mediainfo); a stall's drop and every clip run are cues and sidecar markers at their frames"
        )
        func broadcastTake() throws {
            let server = try SharedTestServer.require()
            let mediainfo = try TestEnvironment.executable("mediainfo", hint: "Debian: apt-get install mediainfo")
            let rate = server.sampleRate
            // A source of its own, tracing its cycles: cycle k rendered source frames k × period on.
            let source = try DemoSource(
                serverName: server.name, clientName: "meta-source-\(getpid())", signal: .reference,
                traceCapacity: 120 * rate / 64)
            var sourceStopped = false
            defer { if !sourceStopped { source.stop() } }
            let path = TestEnvironment.scratchFolder("metadata") + "/take.wav"
            let seconds = 7
            let result = try MicmonProcess.run(
                [
                    "record", path, "-s", server.name, "-n", "rec-meta-\(getpid())", "-p", source.outputPorts[0],
                    "-p", source.outputPorts[1], "--duration", String(seconds), "--json", "--description",
                    "metadata test, take 1",
                ], environment: ["MICMON_TEST_WRITER_STALL_SECONDS": "5"], timeout: 90)
            // The wall clock and JACK's, read together, to put the source's cycle times on the wall clock.
            let jackNow = JackClock.now()
            let wallNow = Date().timeIntervalSince1970
            source.stop()
            sourceStopped = true
            let cycles = source.tracedCycles()
            #expect(result.exitCode == 75, "a 5 s writer stall overflows the 4 s ring: \(result.stderr)")

            // The take's first frame is the source's frame n0; the source rendered it in cycle
            // n0 / period, whose start JACK noted: that, less the sources' capture latency (0 for
            // a client's ports), is when the first sample was captured.
            let outcome = try TakeCheck.verify(path: path)
            let first = try #require(outcome.firstSourceFrame, "the take does not start on the test signal")
            try #require(cycles.count > 2)
            let period = Int(cycles[1].cycleStartFrame &- cycles[0].cycleStartFrame)
            let cycle = try #require(
                Int(first) / period < cycles.count ? cycles[Int(first) / period] : nil, "cycle not traced")
            let firstUsecs = Double(cycle.cycleStartUsecs) + Double(Int(first) % period) * 1e6 / Double(rate)
            let firstWall = wallNow - (Double(jackNow) - firstUsecs) / 1e6
            let expected = Self.framesSinceMidnight(firstWall, rate: rate)

            let reader = try SoundFileReader(path: path)
            let bext = try #require(reader.broadcastInfo, "no bext chunk")
            let day = 86400 * rate
            let difference = abs(Int(bext.timeReference) - expected) % day
            #expect(
                min(difference, day - difference) <= period, "TimeReference \(bext.timeReference), expected \(expected)"
            )
            #expect(bext.description == "metadata test, take 1")
            #expect(bext.originator.hasPrefix("micmon "))
            #expect(bext.codingHistory.hasPrefix("A=PCM,F=\(rate),W=32,M=stereo,T=micmon "))
            #expect(bext.codingHistory.contains("in_1 from \(source.outputPorts[0])"))

            // The peer: mediainfo reads the same description, originator and TimeReference (its
            // Delay, in ms since midnight).
            let general = try Self.output([mediainfo, "--Output=General;%Description%|%Producer%", path])
            #expect(general.trimmingCharacters(in: .whitespacesAndNewlines) == "\(bext.description)|\(bext.originator)")
            let delay = try Self.output([mediainfo, "--Output=Audio;%Delay%|%Delay_Source%", path])
            let parts = delay.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|")
            let milliseconds = try #require(parts.first.flatMap { Double($0) }, "mediainfo said \(delay)")
            #expect(abs(milliseconds * Double(rate) / 1000 - Double(bext.timeReference)) < 1)
            #expect(parts.last == "Container (bext)")

            // The drops micmon's summary lists, and the clip runs the file holds (|x| ≥ 1, none on
            // the channel in the half second before): each is a marker at its frame.
            let summary = try #require(
                result.stdout.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") })
            let drops = TimelineIntegrationTests.gaps("drops", in: summary)
            #expect(!drops.isEmpty, "no drop: \(summary)")
            let samples = reader.readAllFloats()
            var clips: [Int] = []
            for channel in 0 ..< 2 {
                var last: Int?
                for frame in 0 ..< samples.count / 2 where abs(samples[frame * 2 + channel]) >= 1 {
                    if last.map({ frame - $0 > rate / 2 }) ?? true { clips.append(frame) }
                    last = frame
                }
            }
            #expect(!clips.isEmpty, "the ramp reaches -1 every 65536 frames")
            let (object, markers) = try Self.sidecar(path)
            #expect(markers.filter { $0.0 == "drop" }.map { [$0.1, $0.2] } == drops.map { [$0.0, $0.1] })
            #expect(markers.filter { $0.0 == "clip" }.map(\.1).sorted() == clips.sorted())
            #expect(markers.allSatisfy { ["drop", "clip"].contains($0.0) }, "\(markers)")
            #expect(reader.cuePoints.map { Int($0.frame) } == markers.map(\.1))
            #expect(object["complete"] as? Bool == true)
            #expect(object["frames"] as? Int == seconds * rate)
            let origination = try #require(object["origination"] as? [String: Any])
            #expect(origination["time_reference"] as? Int == Int(bext.timeReference))
            #expect(object["description"] as? String == bext.description)
        }

        @Test(
            "kill -9: the take opens with its bext, the sidecar is the last one written (complete false), no cue chunk")
        func killedTake() throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("metadata-kill") + "/take.wav"
            let child = try MicmonProcess([
                "record", path, "-s", server.name, "-n", "rec-meta-kill-\(getpid())", "-p",
                server.source.outputPorts[0],
                "-p", server.source.outputPorts[1], "--json", "--description", "killed",
            ])
            #expect(child.waitUntilRecorded(seconds: 1.5), "it never recorded")
            child.signal(SIGKILL)
            let result = child.wait(timeout: 30)
            #expect(result.wasKilledBySignal)
            let reader = try SoundFileReader(path: path)
            #expect(reader.frameCount > 0)
            let bext = try #require(reader.broadcastInfo, "no bext after a kill")
            #expect(bext.description == "killed")
            #expect(reader.cuePoints.isEmpty)
            let (object, _) = try Self.sidecar(path)
            #expect(object["complete"] as? Bool == false)
            let origination = try #require(object["origination"] as? [String: Any], "no origination: \(object)")
            #expect(origination["time_reference"] as? Int == Int(bext.timeReference))
        }
    }
}
